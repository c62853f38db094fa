"""What the leaderboard and the exports may count.

* Hidden dialogues (moderation) are left out everywhere, with the votes of
  their battles.
* A battle's dialogues are left out until its vote is stored: before that, a
  dialogue's system name (in an export) or a system's conversation count (on
  the leaderboard) would tell a visitor whom they are talking to.
* Flagged votes (bursts, too-fast votes) are left out of the leaderboard
  unless asked for; researchers' exports keep them, marked.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from arena.dialogue import Dialogue, Vote
from arena.store import Store
from arena.store_safety import flagged_votes, hidden_dialogue_ids


@dataclass(frozen=True)
class Visibility:
    hidden: frozenset[str] = frozenset()
    voted: frozenset[str] = frozenset()  # dialogues whose battle has a stored vote
    flags: dict[str, str] = field(default_factory=dict)  # vote id -> reason

    def keeps_dialogue(self, d: Dialogue) -> bool:
        if d.dialogue_id in self.hidden:
            return False
        in_battle = d.metadata.get("source") == "battle" or "battle_id" in d.metadata
        return not in_battle or d.dialogue_id in self.voted

    def keeps_vote(self, v: Vote, *, include_flagged: bool = False) -> bool:
        if v.dialogue_a in self.hidden or v.dialogue_b in self.hidden:
            return False
        return include_flagged or v.vote_id not in self.flags

    def dialogues(self, dialogues: Iterable[Dialogue]) -> list[Dialogue]:
        return [d for d in dialogues if self.keeps_dialogue(d)]

    def votes(self, votes: Iterable[Vote], *, include_flagged: bool = False) -> list[Vote]:
        return [v for v in votes if self.keeps_vote(v, include_flagged=include_flagged)]


def visibility(store: Store, votes: Iterable[Vote] = ()) -> Visibility:
    """The store's current hidden dialogues, voted battles and flags (`votes`: all stored votes, if read)."""
    votes = list(votes) or store.list_votes()
    voted = frozenset(x for v in votes for x in (v.dialogue_a, v.dialogue_b))
    return Visibility(hidden=frozenset(hidden_dialogue_ids(store)), voted=voted, flags=flagged_votes(store))
