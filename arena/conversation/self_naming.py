"""Does a system's reply give away who it is?

A battle is anonymous only while the person cannot tell the systems apart by
name. As FastChat does for LMArena, a battle in which a reply names its own
system (or its family: "I am UniCRS", "ChatCRS here") is voided: kept for
researchers, left out of the leaderboard. Names of other systems are not
counted: a movie chat has no reason to name them, and a system naming a rival
reveals nothing about itself.
"""

from __future__ import annotations

import re
from typing import Optional

from arena.dialogue import Dialogue

# Family of a system id -> how a reply may spell it. Word boundaries keep "kbrd" out of longer words.
FAMILIES: dict[str, re.Pattern[str]] = {
    "kbrd": re.compile(r"(?i)\bkbrd\b"),
    "barcor": re.compile(r"(?i)\bbarcor\b"),
    "unicrs": re.compile(r"(?i)\buni[\s_-]?crs\b"),
    "chatcrs": re.compile(r"(?i)\bchat[\s_-]?crs\b"),
    "crb": re.compile(r"(?i)\bcrb(?:[\s_-]?crs)?\b"),
}


def family_of(crs_id: str) -> Optional[str]:
    """The family of a system id (`unicrs_redial` -> `unicrs`, `crb_crs_redial` -> `crb`), or None."""
    head = crs_id.lower().split("_", 1)[0]
    return head if head in FAMILIES else None


def names_itself(dialogue: Dialogue) -> Optional[str]:
    """Why the dialogue's system gave itself away (the family and the reply), or None."""
    family = family_of(dialogue.crs_id)
    patterns = [re.compile(rf"(?i)\b{re.escape(dialogue.crs_id)}\b")]
    if family is not None:
        patterns.append(FAMILIES[family])
    for utterance in dialogue.agent_turns():
        for pattern in patterns:
            found = pattern.search(utterance.text or "")
            if found:
                return f"reply names its own system ({family or dialogue.crs_id}: {found.group(0)!r})"
    return None


def void_reason(*dialogues: Dialogue) -> Optional[str]:
    """Why a battle of these dialogues is void, or None when every reply kept its system anonymous."""
    reasons = [r for r in (names_itself(d) for d in dialogues) if r]
    return "void: " + "; ".join(reasons) if reasons else None
