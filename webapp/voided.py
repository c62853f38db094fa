"""What the leaderboard leaves out because a system failed, not because a person judged it.

A turn a system could not answer (an external server timed out, answered 5xx or garbage, or
any system raised) is recorded on the dialogue (`Utterance.error`, see `arena.runner`). Such a
dialogue says nothing about how good the system is when it works: its satisfaction rating is
not counted, and the battle it was part of is void (its vote is kept in the store and in
exports, marked in its `flagged` column by `arena.corpus.bundle`, but counts for neither side). The other pane's conversation was unaffected and still
counts for its own system's satisfaction.
"""

from __future__ import annotations

from typing import Iterable

from arena.dialogue import Dialogue, Vote


def counted(dialogues: Iterable[Dialogue], votes: Iterable[Vote]) -> tuple[list[Dialogue], list[Vote]]:
    """The dialogues and votes the leaderboard counts: none with a failed system turn, no vote of
    a battle where either side failed."""
    dialogues = list(dialogues)
    failed = {d.dialogue_id for d in dialogues if d.system_failed()}
    kept_votes = [v for v in votes if v.dialogue_a not in failed and v.dialogue_b not in failed]
    return [d for d in dialogues if d.dialogue_id not in failed], kept_votes
