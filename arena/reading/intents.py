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
item is. Whether an utterance addresses different items is read from its words, with the
other cues of what a message does, in `arena.reading.acts` (`decisions_apart`,
`names_different_items`); the caller passes the answer as `together`.
"""

from __future__ import annotations

from typing import Sequence

MAX_INTENTS = 3
CONTRADICTORY = (frozenset({"ACC", "REJ"}),)


def coherent(
    passed: Sequence[tuple[str, float]], limit: int = MAX_INTENTS, together: bool = False
) -> list[str]:
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
