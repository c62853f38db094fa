"""How an agenda-based user reacts to the system: hand-written rules, data-driven weights.

The rules say which user intents make sense after a system act given the
state of the user's goal (a fitting recommendation can be accepted, a
non-fitting one cannot). Among the allowed intents the choice is weighted by
how often real ReDial seekers answered that system intent with each user
intent in the IARD annotations (counts over consecutive AGENT -> USER turns).
"""

from __future__ import annotations

import json
import random
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Mapping, Optional, Sequence

from arena.runtime.config import ASSETS_DIR

IARD_FILE = "formatted_IARD_annotated_partially.json"

# System intents grouped by what the user has to react to.
RECOMMEND = frozenset({"REC-S", "REC-E"})
ELICIT = frozenset({"REQ", "CLA", "CLQ"})

# What a user may do after seeing a recommendation, by whether it fits the goal.
AFTER_FITTING = ("ACC", "SEE")
AFTER_NON_FITTING = ("REJ", "SEE", "CRI-F", "CRI-A")


def iard_path() -> Path:
    """The project's copy of the IARD file (origin and licence in assets/iard/README.md)."""
    path = ASSETS_DIR / "iard" / IARD_FILE
    if not path.exists():
        raise FileNotFoundError(f"IARD annotations not found; restore {IARD_FILE} in {ASSETS_DIR / 'iard'}")
    return path


def count_transitions(dialogues: Iterable[Mapping]) -> dict[str, Counter]:
    """Counts of user intents answering each system intent ("START" = first user turn)."""
    counts: dict[str, Counter] = defaultdict(Counter)
    for dialogue in dialogues:
        previous: Optional[list[str]] = None
        for turn in dialogue.get("conversation", []):
            intents = [act["intent"] for act in turn.get("dialogue_acts") or []]
            if turn.get("participant") == "USER":
                for system_intent in previous or ["START"]:
                    counts[system_intent].update(intents)
                previous = None
            else:
                previous = intents or previous
    return dict(counts)


@dataclass
class InteractionModel:
    transitions: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    smoothing: float = 1.0  # keeps every allowed intent possible

    @classmethod
    def from_iard(cls, path: Optional[Path] = None) -> "InteractionModel":
        return _cached_model(str(path or iard_path()))

    def weight(self, system_intents: Sequence[str], user_intent: str) -> float:
        total = sum(self.transitions.get(s, {}).get(user_intent, 0) for s in system_intents)
        return total + self.smoothing

    def probabilities(self, system_intents: Sequence[str], allowed: Sequence[str]) -> dict[str, float]:
        weights = {intent: self.weight(system_intents, intent) for intent in allowed}
        total = sum(weights.values())
        return {intent: w / total for intent, w in weights.items()}

    def choose(self, system_intents: Sequence[str], allowed: Sequence[str], rng: random.Random) -> str:
        probs = self.probabilities(system_intents, allowed)
        return rng.choices(list(probs), weights=list(probs.values()), k=1)[0]

    def react_to_recommendation(self, system_intents: Sequence[str], fits_goal: bool, rng: random.Random) -> str:
        intents = [i for i in system_intents if i in RECOMMEND] or ["REC-S"]
        return self.choose(intents, AFTER_FITTING if fits_goal else AFTER_NON_FITTING, rng)


@lru_cache(maxsize=4)
def _cached_model(path: str) -> InteractionModel:
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    return InteractionModel(transitions=count_transitions(data))
