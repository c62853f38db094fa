"""What the leaderboard and the exports may count: one module, used by both.

* Whose data (`Participants`): one crowd (the open arena or one study, never
  mixed), one audience (people or simulators), without left-out users (a
  study's flagged workers). The leaderboard, a study's results and the exports
  select with it.

* Known-answer tasks of a study (a scripted system or a replayed dialogue whose
  right verdict is known, `arena.crowd.known_answers`) are data about the
  worker, not the systems: no selection keeps them, for any crowd.
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
any system raised) is recorded on the dialogue (`Utterance.error`, see `arena.conversation.runner`). Such a
dialogue says nothing about how good the system is when it works: its satisfaction rating is
not counted, and the battle it was part of is void (its vote is kept in the store and in
exports, marked `VOID_FLAG` in its `flagged` column (`void_votes`), but counts for neither side). The
other pane's conversation was unaffected and still counts for its own system's satisfaction.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

import numpy as np

from arena.dialogue import Dialogue, UserKind, Vote
from arena.store import Store
# LABEL_FLAG: metadata key of a dialogue whose satisfaction label is flagged, its value saying why (defined
# with the store's compact rows, which record it; imported here, where the rules are).
from arena.store.board_rows import LABEL_FLAG  # noqa: F401
from arena.crowd.rater_check import flagged_raters
from arena.crowd.study import KNOWN_CROWD_SUFFIX, crowd_of_dialogue, crowd_of_vote

# The flag of a battle's vote where a system failed a turn (the vote counts for neither side).
VOID_FLAG = "void: a system failed a turn"
USER_KINDS = tuple(kind.value for kind in UserKind)  # the audiences: ("human", "simulator")


# -- the rules, each written once ------------------------------------------------------------------------
# Each rule is an expression over a few facts of a dialogue or a vote, written with the operators Python's
# booleans and numpy's arrays share (`&`, `|`, `==`, and `_not`, `_member` below), so that one definition
# answers both for one object (the methods below pass each fact as a bool or a string) and for a column of
# the store's compact rows at once (`webapp.leaderboard.board_select` passes arrays).
# tests/battle/test_counting_rules.py checks that the two forms agree.

def shows_dialogue(hidden: Any, in_battle: Any, voted: Any) -> Any:
    """A dialogue counts when it is not hidden and, if one side of a battle, once the battle's vote is
    stored (before that, counting it would tell a visitor whom they are talking to)."""
    return _not(hidden) & (_not(in_battle) | voted)


def shows_vote(hidden_a: Any, hidden_b: Any) -> Any:
    """A vote counts while neither of its battle's dialogues is hidden."""
    return _not(hidden_a | hidden_b)


def vote_counts(flagged: Any, include_flagged: Any = False) -> Any:
    """A flagged vote counts only when asked for (a researcher's export keeps it, marked)."""
    return include_flagged | _not(flagged)


def label_counts(labelled: Any, label_flagged: Any, in_flagged_battle: Any) -> Any:
    """A satisfied/frustrated label counts unless it was flagged when given or its battle's vote is
    flagged (the rater test comes after, on the labels that count: `Visibility.counted_labels`)."""
    return labelled & _not(label_flagged) & _not(in_flagged_battle)


# What the rules need beyond `&`, `|` and `==`, for one value (a bool, a string) or a column (an array).
def _not(values: Any) -> Any:
    return values ^ True  # `not` for a bool, element by element for an array (`~True` would be -2)


def _known_answer(crowd: Any) -> Any:
    if isinstance(crowd, np.ndarray):
        return np.fromiter((str(c).endswith(KNOWN_CROWD_SUFFIX) for c in crowd), dtype=bool, count=len(crowd))
    return str(crowd).endswith(KNOWN_CROWD_SUFFIX)


def _member(values: Any, members: frozenset[str]) -> Any:
    if isinstance(values, np.ndarray):
        return np.isin(values, np.asarray(list(members), dtype=object))
    return values in members


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

    def keeps(self, crowd: Any, user_kind: Any, user_id: Any) -> Any:
        """The rule: whether rows of this crowd, audience and user are kept (strings, or arrays of them).
        A known-answer task's dialogue (its crowd ends in `KNOWN_CROWD_SUFFIX`) is kept by no selection,
        not even of every crowd: its system is scripted and its verdict is a test of the worker."""
        keep = _not(_known_answer(crowd))
        if self.crowd is not None:
            keep = keep & (crowd == self.crowd)
        if self.user_kind is not None:
            keep = keep & (user_kind == self.user_kind)
        if self.left_out_users:
            keep = keep & _not(_member(user_id, self.left_out_users))
        return keep

    def keeps_dialogue(self, d: Dialogue) -> bool:
        return self.keeps(crowd_of_dialogue(d), d.user.kind.value, d.user.id)

    def keeps_vote(self, v: Vote) -> bool:
        kind = v.user_kind.value if isinstance(v.user_kind, UserKind) else str(v.user_kind)
        return self.keeps(crowd_of_vote(v), kind, v.user_id)

    def select(
        self, dialogues: Iterable[Dialogue], votes: Iterable[Vote]
    ) -> tuple[list[Dialogue], list[Vote]]:
        return [d for d in dialogues if self.keeps_dialogue(d)], [v for v in votes if self.keeps_vote(v)]


@dataclass(frozen=True)
class Visibility:
    hidden: frozenset[str] = frozenset()
    voted: frozenset[str] = frozenset()  # dialogues whose battle has a stored vote
    flags: dict[str, str] = field(default_factory=dict)  # vote id -> reason
    in_flagged_battle: frozenset[str] = frozenset()  # dialogues of battles whose vote is flagged

    def keeps_dialogue(self, d: Dialogue) -> bool:
        return shows_dialogue(d.dialogue_id in self.hidden, d.in_battle, d.dialogue_id in self.voted)

    def keeps_vote(self, v: Vote, *, include_flagged: bool = False) -> bool:
        return (shows_vote(v.dialogue_a in self.hidden, v.dialogue_b in self.hidden)
                & vote_counts(v.vote_id in self.flags, include_flagged))

    def counts_label(self, d: Dialogue) -> bool:
        """Whether the dialogue's satisfied/frustrated label counts in satisfaction rates."""
        return label_counts(d.feedback is not None, bool(d.metadata.get(LABEL_FLAG)),
                            d.dialogue_id in self.in_flagged_battle)

    def counted_labels(self, dialogues: Iterable[Dialogue]) -> list[Dialogue]:
        """The dialogues, those whose label does not count as copies without it (rated = unrated).

        After the flagged labels, the labels of raters whose labels are improbable
        (`arena.crowd.rater_check`) are dropped too.
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
