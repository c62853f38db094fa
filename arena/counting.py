"""What the leaderboard and the exports may count: one module, used by both.

* Whose data (`Participants`): one crowd (the open arena or one study, never
  mixed), one audience (people or simulators), without left-out users (a
  study's flagged workers). The leaderboard, a study's results and the exports
  select with it.

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
exports, marked `VOID_FLAG` in its `flagged` column (`void_votes`), but counts for neither side). The
other pane's conversation was unaffected and still counts for its own system's satisfaction.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Optional

from arena.dialogue import Dialogue, UserKind, Vote
from arena.store import Store
# LABEL_FLAG: metadata key of a dialogue whose satisfaction label is flagged, its value saying why (defined
# with the store's compact rows, which record it; imported here, where the rules are).
from arena.store.board_rows import LABEL_FLAG  # noqa: F401
from arena.rater_sequential_test import flagged_raters
from arena.study import crowd_of_dialogue, crowd_of_vote

# The flag of a battle's vote where a system failed a turn (the vote counts for neither side).
VOID_FLAG = "void: a system failed a turn"
USER_KINDS = tuple(kind.value for kind in UserKind)  # the audiences: ("human", "simulator")


@dataclass(frozen=True)
class Participants:
    """Whose dialogues and votes count: one crowd ("open" or a study's id; None: every crowd), one
    audience (`user_kind` "human" or "simulator"; None: both), never `left_out_users` (stored user ids)."""

    crowd: Optional[str] = None
    user_kind: Optional[str] = None
    left_out_users: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        if self.user_kind is not None and self.user_kind not in USER_KINDS:
            raise ValueError(f"user_kind must be one of {USER_KINDS} or None, got {self.user_kind!r}")

    def keeps_dialogue(self, d: Dialogue) -> bool:
        return ((self.crowd is None or crowd_of_dialogue(d) == self.crowd)
                and (self.user_kind is None or d.user.kind.value == self.user_kind)
                and d.user.id not in self.left_out_users)

    def keeps_vote(self, v: Vote) -> bool:
        kind = v.user_kind.value if isinstance(v.user_kind, UserKind) else str(v.user_kind)
        return ((self.crowd is None or crowd_of_vote(v) == self.crowd)
                and (self.user_kind is None or kind == self.user_kind)
                and v.user_id not in self.left_out_users)

    def select(self, dialogues: Iterable[Dialogue], votes: Iterable[Vote]) -> tuple[list[Dialogue], list[Vote]]:
        return [d for d in dialogues if self.keeps_dialogue(d)], [v for v in votes if self.keeps_vote(v)]


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


def void_votes(dialogues: Iterable[Dialogue], votes: Iterable[Vote]) -> dict[str, str]:
    """vote id -> `VOID_FLAG` for each vote of a battle where a system failed a turn (either of its
    dialogues among `dialogues` has a failed turn)."""
    failed = {d.dialogue_id for d in dialogues if d.system_failed()}
    return {v.vote_id: VOID_FLAG for v in votes if v.dialogue_a in failed or v.dialogue_b in failed}


def counted(dialogues: Iterable[Dialogue], votes: Iterable[Vote]) -> tuple[list[Dialogue], list[Vote]]:
    """The dialogues and votes the leaderboard counts: none with a failed system turn, no vote of
    a battle where either side failed (`void_votes`)."""
    dialogues, votes = list(dialogues), list(votes)
    void = void_votes(dialogues, votes)
    return [d for d in dialogues if not d.system_failed()], [v for v in votes if v.vote_id not in void]
