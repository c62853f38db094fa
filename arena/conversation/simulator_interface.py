"""The interface every user simulator implements, and how a simulator reads the system's acts.

A simulator plays one user in one dialogue: `next_turn(dialogue)` returns the
user's next utterance or its decision to stop. Agenda-based simulators also
need the intents of the system's last utterance; they get them from an
`IntentReader`, which the evaluators' act annotators provide (the simulators
never import the evaluators: whoever builds a simulator passes a reader, or an
`IntentReaderFactory` that makes one by name).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Protocol, Union

from arena.dialogue import Dialogue
from arena.llm import LLMClient


@dataclass(frozen=True)
class UserTurn:
    """A simulator's next utterance."""

    text: str


@dataclass(frozen=True)
class StopDialogue:
    """A simulator's explicit decision to end, with why and how it felt."""

    reason: str
    sentiment: Optional[str] = None  # "satisfied" | "frustrated" | None
    comment: str = ""


SimulatorAction = Union[UserTurn, StopDialogue]


class Simulator(Protocol):
    def next_turn(self, dialogue: Dialogue) -> SimulatorAction: ...


class IntentReader(Protocol):
    """IARD intents of a dialogue's last utterance (e.g. ["Q", "REC"]).

    Readers may carry a `label` attribute naming their source; simulators
    record it in the simulated user's profile.
    """

    def __call__(self, dialogue: Dialogue) -> list[str]: ...


# `factory(kind, llm)` makes the reader of one kind: "offline" (the offline act
# annotator) or "llm" (the LLM annotator, which needs `llm`). Raises ValueError
# for an unknown kind or a missing client.
IntentReaderFactory = Callable[[str, Optional[LLMClient]], IntentReader]
