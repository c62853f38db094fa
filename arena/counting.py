"""What the leaderboard and the exports may count.

* Hidden dialogues (moderation) are left out everywhere, with the votes of
  their battles.
* A battle's dialogues are left out until its vote is stored: before that, a
  dialogue's system name (in an export) or a system's conversation count (on
  the leaderboard) would tell a visitor whom they are talking to.
* Flagged votes (bursts, too-fast votes, battles voided because a reply named
  its system) are left out of the leaderboard unless asked for; researchers'
  exports keep them, marked.
* Satisfaction labels are protected like votes: a label flagged when it was
  given (`LABEL_FLAG` in the dialogue's metadata: a burst, a conversation too
  short, a rater the sequential test flagged) or given in a battle whose vote is
  flagged does not count in satisfaction (`counts_label`, `counted_labels`);
  exports keep it, with its flag.

Voiding, what the leaderboard leaves out because a system failed, not because a person judged it.

A turn a system could not answer (an external server timed out, answered 5xx or garbage, or
any system raised) is recorded on the dialogue (`Utterance.error`, see `arena.runner`). Such a
dialogue says nothing about how good the system is when it works: its satisfaction rating is
not counted, and the battle it was part of is void (its vote is kept in the store and in
exports, marked in its `flagged` column by `arena.corpus.bundle`, but counts for neither side). The other pane's conversation was unaffected and still
counts for its own system's satisfaction.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from arena.dialogue import Dialogue, Vote
from arena.store import Store
from arena.rater_sequential_test import flagged_raters

# Metadata key of a dialogue whose satisfaction label is flagged; its value says why.
LABEL_FLAG = "label_flag"


@dataclass(frozen=True)
class Visibility:
    hidden: frozenset[str] = frozenset()
    voted: frozenset[str] = frozenset()  # dialogues whose battle has a stored vote
    flags: dict[str, str] = field(default_factory=dict)  # vote id -> reason
    in_flagged_battle: frozenset[str] = frozenset()  # dialogues of battles whose vote is flagged

    def keeps_dialogue(self, d: Dialogue) -> bool:
        if d.dialogue_id in self.hidden:
            return False
        in_battle = d.metadata.get("source") == "battle" or "battle_id" in d.metadata
        return not in_battle or d.dialogue_id in self.voted

    def keeps_vote(self, v: Vote, *, include_flagged: bool = False) -> bool:
        if v.dialogue_a in self.hidden or v.dialogue_b in self.hidden:
            return False
        return include_flagged or v.vote_id not in self.flags

    def counts_label(self, d: Dialogue) -> bool:
        """Whether the dialogue's satisfied/frustrated label counts in satisfaction rates."""
        return (d.feedback is not None and not d.metadata.get(LABEL_FLAG)
                and d.dialogue_id not in self.in_flagged_battle)

    def counted_labels(self, dialogues: Iterable[Dialogue]) -> list[Dialogue]:
        """The dialogues, those whose label does not count as copies without it (rated = unrated).

        After the flagged labels, the labels of raters whose labels are improbable
        (`arena.rater_sequential_test`) are dropped too.
        """
        dialogues = list(dialogues)
        labelled = [d for d in dialogues if d.feedback is not None and self.counts_label(d)]
        suspicious = flagged_raters(labelled)
        kept = {d.dialogue_id for d in labelled if d.user.id not in suspicious}
        return [d if d.feedback is None or d.dialogue_id in kept else d.model_copy(update={"feedback": None})
                for d in dialogues]

    def dialogues(self, dialogues: Iterable[Dialogue]) -> list[Dialogue]:
        return [d for d in dialogues if self.keeps_dialogue(d)]

    def votes(self, votes: Iterable[Vote], *, include_flagged: bool = False) -> list[Vote]:
        return [v for v in votes if self.keeps_vote(v, include_flagged=include_flagged)]


def visibility(store: Store, votes: Iterable[Vote] = ()) -> Visibility:
    """The store's current hidden dialogues, voted battles and flags (`votes`: all stored votes, if read)."""
    votes = list(votes) or store.list_votes()
    voted = frozenset(x for v in votes for x in (v.dialogue_a, v.dialogue_b))
    flags = store.flagged_votes()
    in_flagged = frozenset(x for v in votes if v.vote_id in flags for x in (v.dialogue_a, v.dialogue_b))
    return Visibility(hidden=frozenset(store.hidden_dialogue_ids()), voted=voted, flags=flags,
                      in_flagged_battle=in_flagged)


def counted(dialogues: Iterable[Dialogue], votes: Iterable[Vote]) -> tuple[list[Dialogue], list[Vote]]:
    """The dialogues and votes the leaderboard counts: none with a failed system turn, no vote of
    a battle where either side failed."""
    dialogues = list(dialogues)
    failed = {d.dialogue_id for d in dialogues if d.system_failed()}
    kept_votes = [v for v in votes if v.dialogue_a not in failed and v.dialogue_b not in failed]
    return [d for d in dialogues if d.dialogue_id not in failed], kept_votes
