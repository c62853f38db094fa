"""CRSArena-Eval's records, and finding the reply a turn-level rating names.

CRSArena-Eval (the FACE paper's human labels of CRSArena-Dial) publishes one
JSON record per dialogue:

    {"conv_id": "<CRSArena-Dial conversation ID>",
     "dialogue": [{"turn_ind": 0, "role": "USER" | "ASST", "utterance": "...",
                   "turn_level_aggregated": {"relevance": 0-3, "interestingness": 0-2}}, ...],
     "dial_level_aggregated": {"understanding": 0-2, "task_completion": 0-2, ...}}

`from_crsarena_eval` turns one into the generic rating row of
`evaluators.rating_files` (dialogue-level labels as aspect keys, one `turns`
entry per labelled turn, rater `aggregated`). A turn names its reply by
`turn_ind`, `role` and text; `find_turn` matches it to a corpus utterance of
the same role (ASST is the system) with the same text, whitespace and case
aside. Equal texts (a system that repeats itself) are told apart by their
order among the record's turns, which list the whole dialogue, else (a CSV
row) by `turn_ind` read as the utterance's 0-based position, else the first
is taken. Without a text, `turn_ind` is read as that position, and the role
there must agree. CSV rows with `turn_ind`/`role`/`utterance` columns are
matched the same way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional, Union

from arena.dialogue import Dialogue, Role, Utterance

TURN_KEYS = ("turn_ind", "role", "utterance")
OCCURRENCE = "__occurrence"  # a turn's rank among the record's turns of the same role and text
AGGREGATED_RATER = "aggregated"  # CRSArena-Eval publishes labels aggregated over its annotators
ROLES = {
    "USER": Role.USER,
    "ASST": Role.AGENT,
    "ASSISTANT": Role.AGENT,
    "AGENT": Role.AGENT,
    "SYSTEM": Role.AGENT,
}


@dataclass(frozen=True)
class TurnRef:
    """A reply named by its turn, as CRSArena-Eval names it: position, role and (optionally) text."""

    turn_ind: int
    role: Role
    text: Optional[str] = None
    # rank among the record's turns of this role and text, when it lists them all
    occurrence: Optional[int] = None

    def describe(self) -> str:
        return f"turn_ind {self.turn_ind} ({'USER' if self.role == Role.USER else 'ASST'})"


def normal_text(text: Any) -> Optional[str]:
    return " ".join(str(text).split()).casefold() if isinstance(text, str) and text.strip() else None


def is_crsarena_eval(rec: Any) -> bool:
    return (
        isinstance(rec, dict) and "conv_id" in rec and ("dial_level_aggregated" in rec or "dialogue" in rec)
    )


def from_crsarena_eval(rec: dict[str, Any], where: str, problems: list[str]) -> dict[str, Any]:
    """A CRSArena-Eval record as a rating row whose `turns` are the labelled turns."""
    row: dict[str, Any] = {
        "dialogue_id": rec.get("conv_id"),
        "rater_id": rec.get("rater_id") or AGGREGATED_RATER,
    }
    labels = rec.get("dial_level_aggregated")
    if labels is not None and not isinstance(labels, dict):
        problems.append(f"{where}, column 'dial_level_aggregated': expected an object of aspect -> number")
    elif labels:
        row.update(labels)
    entries = rec.get("dialogue")
    if entries is not None and not isinstance(entries, list):
        problems.append(f"{where}, column 'dialogue': expected a list of turns")
        entries = None
    turns: list[dict[str, Any]] = []
    seen: dict[tuple, int] = {}
    for j, entry in enumerate(entries or []):
        if not isinstance(entry, dict):
            problems.append(f"{where} dialogue[{j}]: expected an object, got {type(entry).__name__}")
            continue
        key = (str(entry.get("role")).upper(), normal_text(entry.get("utterance")))
        occurrence = seen[key] = seen.get(key, -1) + 1
        turn_labels = entry.get("turn_level_aggregated")
        if not turn_labels:
            continue
        if not isinstance(turn_labels, dict):
            problems.append(f"{where} dialogue[{j}], column 'turn_level_aggregated': expected an object of "
                            "aspect -> number")
            continue
        turn = {**{k: entry.get(k) for k in TURN_KEYS}, OCCURRENCE: occurrence}
        turn.update(turn_labels)
        turns.append(turn)
    row["turns"] = turns
    return row


def turn_ref(rec: dict[str, Any], where: str, problems: list[str]) -> Optional[TurnRef]:
    raw_ind, raw_role = rec.get("turn_ind"), rec.get("role")
    try:
        number = float(str(raw_ind).strip())
    except ValueError:
        number = math.nan
    if isinstance(raw_ind, bool) or not number.is_integer() or number < 0:
        problems.append(f"{where}, column 'turn_ind': {raw_ind!r} is not a whole number")
        return None
    turn_ind = int(number)
    role = ROLES.get(str(raw_role).strip().upper()) if raw_role is not None else None
    if role is None:
        problems.append(f"{where}, column 'role': {raw_role!r} is not USER or ASST")
        return None
    text = rec.get("utterance")
    occurrence = rec.get(OCCURRENCE)
    return TurnRef(turn_ind, role, text if isinstance(text, str) and text.strip() else None,
                   int(occurrence) if occurrence is not None else None)


def find_turn(dialogue: Dialogue, turn: TurnRef) -> Union[Utterance, str]:
    """The utterance a turn names, or why none matches (see the module docstring for the rule)."""
    utts = dialogue.utterances
    speaker = "user" if turn.role == Role.USER else "system"
    text = normal_text(turn.text)
    if turn.text is not None and text is not None:
        same = [i for i, u in enumerate(utts) if u.role == turn.role and normal_text(u.text) == text]
        if not same:
            shown = turn.text if len(turn.text) <= 40 else turn.text[:37] + "..."
            return f"no {speaker} utterance of dialogue {dialogue.dialogue_id!r} has the text {shown!r}"
        if turn.occurrence is not None and turn.occurrence < len(same):
            return utts[same[turn.occurrence]]
        return utts[turn.turn_ind if turn.turn_ind in same else same[0]]
    if not 0 <= turn.turn_ind < len(utts):
        return f"dialogue {dialogue.dialogue_id!r} has no utterance {turn.turn_ind} (it has {len(utts)})"
    if utts[turn.turn_ind].role != turn.role:
        return (
            f"utterance {turn.turn_ind} of dialogue {dialogue.dialogue_id!r} is not a {speaker} utterance "
            "(give the turn's text to match it by text)"
        )
    return utts[turn.turn_ind]
