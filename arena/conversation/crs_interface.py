"""The interface every conversational recommender in the arena implements."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from arena.dialogue import Dialogue, RecommendedItem
from arena.conversation.dialogue_state import DialogueState

# How many ranked items a CRS keeps internally and how many the UI shows.
TOP_K_KEPT = 50
TOP_K_SHOWN = 5


class ConversationalRecommender(ABC):
    """A CRS answers the dialogue so far with a reply text and ranked items."""

    name: str = "crs"

    @abstractmethod
    def respond(self, dialogue: Dialogue) -> tuple[str, list[RecommendedItem]]:
        """Return the next system utterance and the items it recommends (best first)."""

    def state_for(self, dialogue: Dialogue) -> Optional[DialogueState]:
        """The conversation's state as this system read it when it answered `dialogue` (the
        dialogue as `respond` got it), stored with the reply; None for a system that keeps none."""
        return None

    def dialogue_details(self) -> dict[str, Any]:
        """Settings that shape this system's replies, recorded in the metadata of every
        dialogue with it (e.g. the neural systems' mode); none by default."""
        return {}


class CRSUnavailable(RuntimeError):
    """Raised when a CRS cannot be loaded; says why and what command fixes it."""

    def __init__(self, name: str, reason: str, fix: str = ""):
        self.name = name
        self.reason = reason
        self.fix = fix
        message = f"{name} is unavailable: {reason}"
        if fix:
            message += f" (fix: {fix})"
        super().__init__(message)


@dataclass
class CRSSpec:
    """A CRS the arena knows about, loadable on demand.

    `check` returns None when the system can be loaded, otherwise a
    `CRSUnavailable` describing what is missing (cheap: no model loading).
    `load` builds the system; it may be slow and is called once per process.
    `description` is for researchers (architecture, training data); `display_name`
    ("KBRD (ReDial)") and `summary` (one line in plain words) are what participants
    see once a battle's vote reveals the systems; both fall back to the name and
    the description.
    """

    name: str
    family: str
    dataset: str
    description: str
    load: Callable[[], ConversationalRecommender]
    check: Callable[[], Optional[CRSUnavailable]] = field(default=lambda: None)
    # A system behind a network (crs.external): its check is asked again after it loaded, so a
    # server that went down leaves the choices and pairings, and `health` says how its calls went.
    live_check: bool = False
    health: Optional[Callable[[], str]] = None
    display_name: str = ""
    summary: str = ""

    @property
    def title(self) -> str:
        """The name people read: `display_name`, else the id."""
        return self.display_name or self.name

    @property
    def blurb(self) -> str:
        """One line about the system for people: `summary`, else the description."""
        return self.summary or self.description
