"""Whether a finished simulated dialogue reads like a person's: the checks, per user turn and per verdict.

Used by the slow test over real small-model generations and by
`benchmarks/simulated_user_plausibility.py`. Each user turn is checked against what came before it:

- prompt_or_role_label: no role label ("You:", "User:", "Recommender:", "Chat History") and no
  piece of a simulator prompt ("What to do now", "Write only your ...");
- no_copy: no `COPIED_WORDS` words in a row from a system reply;
- grounded_preference: every genre, title, year or decade its preference statements name is in
  the user's profile (`simulators.grounding`).

A verdict is consistent when a dialogue with an ignored question or rejection does not end
satisfied, and a simulator failure leaves no verdict at all.
"""

from __future__ import annotations

import re
from typing import Optional

from arena.dialogue import Dialogue, Role
from simulators.base import copies_system
from simulators.catalog_access import CatalogView
from simulators.grounding import ProfileFacts, ungrounded
from simulators.ignored_turns import ignored_turns

ROLE_LABEL = re.compile(r"\b(you|user|seeker|me|human|recommender|system|assistant|agent|bot|chat history|history)"
                        r"\s*:|\(\s*the recommender\b", re.IGNORECASE)
PROMPT_TEXT = re.compile(
    r"what to do( now)?\s*:|write only|the chat so far|role-?play|draft\s*:|your general tastes|"
    r"you are the person|reply with the single word|answer in json|what you are after|"
    r"your impressions of the movies", re.IGNORECASE)
TURN_CHECKS = ("prompt_or_role_label", "no_copy", "grounded_preference")


def check_turn(text: str, before: Dialogue, facts: Optional[ProfileFacts], catalog: CatalogView) -> dict[str, bool]:
    """Each turn check, True when the turn passes it (`before`: the dialogue up to this turn)."""
    return {
        "prompt_or_role_label": not (ROLE_LABEL.search(text) or PROMPT_TEXT.search(text)),
        "no_copy": not copies_system(text, before),
        "grounded_preference": facts is None or not ungrounded(text, facts, catalog, before),
    }


def check_dialogue(dialogue: Dialogue, facts: Optional[ProfileFacts], catalog: CatalogView) -> list[dict[str, bool]]:
    """The turn checks of every user turn of a dialogue, in order."""
    out = []
    for index, utterance in enumerate(dialogue.utterances):
        if utterance.role == Role.USER:
            before = Dialogue(crs_id=dialogue.crs_id, utterances=dialogue.utterances[:index])
            out.append(check_turn(utterance.text, before, facts, catalog))
    return out


def verdict_consistent(dialogue: Dialogue) -> bool:
    if dialogue.end_reason == "simulator_error":
        return dialogue.feedback is None
    ignored = ignored_turns(dialogue)
    return not (ignored and dialogue.feedback is not None and dialogue.feedback.sentiment == "satisfied")
