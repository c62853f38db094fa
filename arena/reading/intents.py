"""A coherent set of IARD intents for one user utterance.

A reader that scores every intent on its own (the learnt act model) can give a
message labels no person would give together: Accept with Reject, or eight of
the sixteen user intents at once. A person annotating IARD gives one to three. Of
the intents that pass their thresholds this keeps, by how far each passed:
- one of each contradictory pair (Accept / Reject), unless the utterance addresses
  different items (`together`);
- at most `MAX_INTENTS`.

Accepting one item while turning down another is no contradiction: "Did not like Knocked Up
but will check out When Harry Met Sally", "Not interested in Rocky but the other two sound
really good!" (IARD's annotators give such utterances both). Accepting and rejecting the same
item is. Whether an utterance addresses different items is read from its text:
- `decisions_apart`: its parts (messages joined by "...", sentences, clauses split at "but",
  "though", ...) carry decisions of their own, one part turning something down and another
  taking something, neither part doing both;
- `names_different_items`: it names two distinct items (two titles, or "the other two" or an
  ordinal beside a title or pointer).
"""

from __future__ import annotations

import re
from typing import Sequence

MAX_INTENTS = 3
CONTRADICTORY = (frozenset({"ACC", "REJ"}),)

# Where one decision ends and the next may start: "..." joining messages, sentence ends, contrast words.
_PART_BREAK = re.compile(r"\.{2,}|\u2026|[.!?;]+(?=\s|$)|,?\s+\b(?:but|although|though|however|whereas)\b",
                         re.IGNORECASE)
# A part that turns an item down: "didn't really like it", "not interested in Rocky", "I'll pass on that".
_TURNS_DOWN = re.compile(
    r"\b(didn'?t|did not|don'?t|do not|wasn'?t|was not|isn'?t|is not|not|never)\s+(really\s+|too\s+|that\s+|very\s+|"
    r"much\s+|a\s+|big\s+|huge\s+)*(like|liked|care for|enjoy|enjoyed|fond|into|interested|up for|fan|"
    r"my (thing|type|style|taste|cup of tea)|for me|impressed)\b|"
    r"\b(don'?t|do not) think (i'?d|i would|i'?ll|i will) (like|enjoy)\b|"
    r"\b(hate[ds]?|dislike[ds]?|overrated|boring|pass on|maybe not|no thanks)\b|"
    r"\b(i'?ll|i will|i'?d|i would|gonna) (pass|skip)\b",
    re.IGNORECASE)
# A part that takes an item: "I'll have to check that one out", "sounds really good", "interested in X".
_TAKES = re.compile(
    r"\b(i'?ll|i will|i'?m going to|gonna|going to|have to|need to|got to|gotta|want to|wanna|would like to|"
    r"i'?d like to|might|may|should|definitely|must)\s+(definitely\s+|probably\s+|really\s+|have to\s+|also\s+|"
    r"give it a\s+)*(watch|see|check|look into|look (it|that|them|those) up|look for|give|try|add|go with|"
    r"take)\b|"
    r"\b(sounds?|looks?|looked|seems?)\s+(really\s+|very\s+|pretty\s+|so\s+)?(good|great|cool|interesting|fun|"
    r"awesome|amazing|nice|promising|perfect)\b|"
    r"\b(interested in|good (one|choice|pick|idea|suggestion|recommendation)|"
    r"great (one|choice|pick|idea|suggestion|recommendation)|worth (watching|a (try|watch|look))|"
    r"on my (list|watch ?list)|yet to see|(may|might|could) be (a )?good)\b",
    re.IGNORECASE)
# A take counts unless the word before it negates it ("not interested in", "don't really want to see").
_NEGATED = re.compile(r"\b(not|no|never|(do|does|did|wo|would|ca|could|is|was|are|were|have|has|should)n'?t)\s+"
                      r"((really|even|too|that|so)\s+)?$", re.IGNORECASE)
# "the other two", "the first one": an item told apart from another.
_OTHER_ITEM = re.compile(r"\b(the )?(other|first|second|third|last|latter|former)( one| ones| two| three)?\b",
                         re.IGNORECASE)
_POINTER = re.compile(r"\b(it|that|this|that one|this one|them|those|these)\b", re.IGNORECASE)


def parts_of(text: str) -> list[str]:
    """The utterance's parts that may each carry a decision of their own."""
    return [p.strip() for p in _PART_BREAK.split(text or "") if p and p.strip()]


def _takes(part: str) -> bool:
    return any(not _NEGATED.search(part[:m.start()]) for m in _TAKES.finditer(part))


def decisions_apart(text: str) -> bool:
    """Whether one part of `text` turns something down and another takes something, neither doing both."""
    down = take = False
    for part in parts_of(text):
        d, t = bool(_TURNS_DOWN.search(part)), _takes(part)
        down, take = down or (d and not t), take or (t and not d)
    return down and take


def names_different_items(text: str, titles: int = 0) -> bool:
    """Whether `text` names two distinct items: `titles` (distinct titles found in it) >= 2, or "the
    other two" / an ordinal beside a title or a pointer ("Not interested in Rocky but the other two")."""
    if titles >= 2:
        return True
    other = _OTHER_ITEM.search(text or "")
    if other is None:
        return False
    rest = text[:other.start()] + text[other.end():]
    return titles >= 1 or bool(_POINTER.search(rest))


def coherent(passed: Sequence[tuple[str, float]], limit: int = MAX_INTENTS, together: bool = False) -> list[str]:
    """The intents to keep, in the order given, from (intent, margin) pairs: every intent that passed
    its threshold and by how much (a larger margin is a surer intent). `together`: the utterance
    addresses different items (`decisions_apart`, `names_different_items`), so Accept and Reject may
    both stand."""
    ranked = sorted(passed, key=lambda pair: -pair[1])
    kept: list[str] = []
    for intent, _ in ranked:
        if len(kept) >= limit:
            break
        if not together and any(intent in pair and (pair - {intent}) & set(kept) for pair in CONTRADICTORY):
            continue
        kept.append(intent)
    return [intent for intent, _ in passed if intent in kept]
