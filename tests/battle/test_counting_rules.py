"""The counting rules of `arena.crowd.counting` are written once and answer in two forms: for one dialogue or vote
(exports, a study's results) and for columns of the store's compact rows (`webapp.leaderboard.board_select`,
every board). On a varied set of dialogues and votes both forms must select the same."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest

from arena.crowd.counting import LABEL_FLAG, Participants, Visibility
from arena.dialogue import Dialogue, Feedback, Role, UserInfo, UserKind, Utterance, Vote, utc_now
from arena.store.board_rows import DIALOGUE_FIELDS, VOTE_FIELDS, BoardRows, board_row
from webapp.leaderboard.board_data import session_orders
from arena.crowd.study import STUDY_KEY
from webapp.leaderboard.board_select import StoreFrames

SYSTEMS = ("alpha", "bravo", "charlie")
USERS = ("u1", "u2", "u3", "anonymous")


def _dialogue(rng: random.Random, n: int, *, battle_id=None, side=None, user=None, kind=None, crowd=None,
              system=None) -> Dialogue:
    metadata = {"source": "battle", "battle_id": battle_id, "side": side} if battle_id else {"source": "chat"}
    if crowd:
        metadata[STUDY_KEY] = crowd
    if rng.random() < 0.15:
        metadata[LABEL_FLAG] = "burst"
    d = Dialogue(crs_id=system or rng.choice(SYSTEMS), metadata=metadata,
                 user=UserInfo(kind=kind or rng.choice(list(UserKind)), id=user or rng.choice(USERS)))
    d.utterances = [Utterance(role=Role.USER, text="hi"), Utterance(role=Role.AGENT, text="hello")]
    if rng.random() < 0.7:
        d.feedback = Feedback(sentiment=rng.choice(["satisfied", "frustrated"]),
                              timestamp=utc_now() + timedelta(seconds=n))
    return d


def _arena(seed: int) -> tuple[list[Dialogue], list[Vote], set[str], dict[str, str]]:
    rng = random.Random(seed)
    dialogues: list[Dialogue] = []
    votes: list[Vote] = []
    for n in range(60):
        crowd = rng.choice([None, None, "s1"])
        if rng.random() < 0.5:
            dialogues.append(_dialogue(rng, n, crowd=crowd))
            continue
        user, kind, battle_id = rng.choice(USERS), rng.choice(list(UserKind)), f"b{n}"
        a, b = (_dialogue(rng, n, battle_id=battle_id, side=side, user=user, kind=kind, crowd=crowd)
                for side in "AB")
        dialogues += [a, b]
        if rng.random() < 0.7:  # the others are battles under way, without a vote
            votes.append(Vote(battle_id=battle_id, dialogue_a=a.dialogue_id, dialogue_b=b.dialogue_id,
                              crs_a=a.crs_id, crs_b=b.crs_id,
                              choice=rng.choice(["A", "B", "tie", "both_bad"]),
                              user_id=user, user_kind=kind, study=crowd))
    # A rater whose labels the sequential test flags: always satisfied with a system others find wanting.
    for n in range(30):
        stuffer = _dialogue(rng, 100 + n, user="u9", kind=UserKind.HUMAN, system="alpha")
        stuffer.metadata.pop(LABEL_FLAG, None)
        stuffer.feedback = Feedback(sentiment="satisfied", timestamp=utc_now() + timedelta(seconds=100 + n))
        dialogues.append(stuffer)
    for n in range(30):
        other = _dialogue(rng, 200 + n, user=f"p{n}", kind=UserKind.HUMAN, system="alpha")
        other.metadata.pop(LABEL_FLAG, None)
        other.feedback = Feedback(sentiment="frustrated" if n % 3 else "satisfied",
                                  timestamp=utc_now() + timedelta(seconds=200 + n))
        dialogues.append(other)
    hidden = {d.dialogue_id for d in rng.sample(dialogues, 8)} | {"deleted-but-hidden"}
    if votes:  # a vote whose dialogue was deleted (no row left) while its id stays hidden
        votes[0] = votes[0].model_copy(update={"dialogue_a": "deleted-but-hidden"})
    flags = {v.vote_id: "burst" for v in rng.sample(votes, min(4, len(votes)))}
    return dialogues, votes, hidden, flags


def _frames(dialogues, votes, hidden, flags) -> StoreFrames:
    rows = [tuple(board_row(d)[f] for f in DIALOGUE_FIELDS[:-2]) + (None, None) for d in dialogues]
    orders = session_orders(votes)  # what the store assigns when it stores them in this order
    vote_rows = [tuple(v.user_kind.value if f == "user_kind" else orders.get(v.vote_id)
                       if f == "session_order" else getattr(v, f) for f in VOTE_FIELDS) for v in votes]
    return StoreFrames.of(BoardRows(rows, vote_rows, frozenset(hidden), flags))


def _visibility(votes, hidden, flags) -> Visibility:
    def sides(kept):
        return frozenset(x for v in kept for x in (v.dialogue_a, v.dialogue_b))

    return Visibility(hidden=frozenset(hidden), voted=sides(votes), flags=flags,
                      in_flagged_battle=sides(v for v in votes if v.vote_id in flags))


WHOSE = [Participants(), Participants(crowd="open"), Participants(crowd="open", user_kind="human"),
         Participants(crowd="s1", left_out_users=frozenset({"u2"})),
         Participants(user_kind="simulator", left_out_users=frozenset({"u1", "anonymous"}))]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("whose", WHOSE)
def test_the_object_and_the_column_forms_of_each_rule_select_the_same(seed, whose):
    dialogues, votes, hidden, flags = _arena(seed)
    frames, seen = _frames(dialogues, votes, hidden, flags), _visibility(votes, hidden, flags)
    dialogue_mask, vote_mask = frames.masks(crowd=whose.crowd, user_kind=whose.user_kind,
                                            left_out_users=whose.left_out_users)
    kept = [whose.keeps_dialogue(d) and seen.keeps_dialogue(d) for d in dialogues]
    assert list(dialogue_mask) == kept and 0 < sum(kept) < len(dialogues)
    assert list(vote_mask) == [whose.keeps_vote(v) and seen.keeps_vote(v, include_flagged=True)
                               for v in votes]
    data, left_out = frames.board_data(dialogue_mask, vote_mask, frames.rated(whose.crowd, whose.user_kind,
                                                                               whose.left_out_users))
    counted_votes = [v.vote_id for v in votes if whose.keeps_vote(v) and seen.keeps_vote(v)]
    assert list(data.votes["vote_id"]) == counted_votes
    assert left_out == sum(vote_mask) - len(counted_votes)
    assert list(frames.d["label_counts"]) == [seen.counts_label(d) for d in dialogues]
    # Which labels count on the board: the rater test on the same labels in both forms.
    on_board = [d for d, keep in zip(dialogues, kept) if keep]
    assert list(data.dialogues["rated"]) == [d.feedback is not None for d in seen.counted_labels(on_board)]


def test_the_set_holds_a_rater_the_sequential_test_flags():
    dialogues, votes, hidden, flags = _arena(0)
    seen = _visibility(votes, hidden, flags)
    counted = seen.counted_labels(dialogues)
    assert all(d.feedback is None for d in counted if d.user.id == "u9")
    assert any(d.feedback is not None for d in counted if d.user.id.startswith("p"))
