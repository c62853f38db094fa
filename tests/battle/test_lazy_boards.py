"""The counting options of every category: a category's board under an option is computed the first time it
is asked for, kept until the next refresh, and is the board its own votes make
(webapp/leaderboard/lazy_boards.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from arena.dialogue import Dialogue, Feedback, UserInfo, UserKind, Vote
from arena.store import Store
from webapp.leaderboard import categories
from webapp.leaderboard.lazy_boards import CACHE_SIZE, BoardSource, LazyBoards, lazy_worker
from webapp.leaderboard.snapshot import LeaderboardSnapshots, compute_boards
from webapp.leaderboard.table import LeaderboardOptions, compute_leaderboard

OPTIONS = LeaderboardOptions(bootstrap_rounds=30, style_rounds=10)
FIRST = (True, "half")


def stored_battle(store: Store, user: str, a: str, b: str, choice: str) -> None:
    pair = []
    for name in (a, b):
        d = Dialogue(crs_id=name, user=UserInfo(kind=UserKind.HUMAN, id=user))
        d.add_user("a film please")
        d.add_agent("Try Up (2009).")
        d.feedback = Feedback(sentiment="satisfied" if name == a else "frustrated")
        pair.append(d)
    store.save_battle(pair[0], pair[1], Vote(
        battle_id=f"b-{pair[0].dialogue_id}", dialogue_a=pair[0].dialogue_id, dialogue_b=pair[1].dialogue_id,
        crs_a=a, crs_b=b, choice=choice, user_id=user))


def fill(store: Store) -> None:
    """ReDial battles where each person's first vote prefers "kbrd" and their later ones "unicrs"; some
    people begin in OpenDialKG (their ReDial votes then hold no first vote), and a few votes are ties."""
    for p in range(12):
        user = f"user-{p}"
        if p % 3 == 0:
            stored_battle(store, user, "kbrd_opendialkg", "barcor_opendialkg", "A")
        stored_battle(store, user, "kbrd_redial", "unicrs_redial", "A" if p % 3 else "B")
        for k in range(3):
            stored_battle(store, user, "kbrd_redial", "unicrs_redial", "tie" if k == 2 else "B")
        stored_battle(store, user, "barcor_opendialkg", "kbrd_opendialkg", "B")


def test_a_categorys_first_vote_board_is_the_one_its_first_votes_make(tmp_path):
    with Store(tmp_path / "arena.sqlite3") as store:
        fill(store)
        published = compute_boards(store, OPTIONS)
        lazy = published.source.board("human", "redial", FIRST)
        orders = store.vote_orders()
        dialogues, votes = categories.select("redial", store.list_dialogues(), store.list_votes())
    first = [v for v in votes if orders.get(v.vote_id) == 1]
    assert 0 < len(first) < len(votes)
    direct = compute_leaderboard(dialogues, first, user_kind="human",
                                 options=LeaderboardOptions(bootstrap_rounds=30, style_control=False))
    pd.testing.assert_frame_equal(lazy, direct)
    assert lazy["system"].tolist()[0] == "kbrd_redial"  # the first votes' favourite, not the later votes'
    assert published.boards[("human", "redial")]["system"].tolist()[0] == "unicrs_redial"
    assert (lazy.attrs["votes_fitted"], lazy.attrs["participants"]) == (len(first), 8)
    assert lazy.attrs["category"] == "redial" and lazy.attrs["first_votes_only"]
    pd.testing.assert_frame_equal(lazy.attrs["position_bias"], direct.attrs["position_bias"])
    dropped = published.source.board("human", "redial", (False, "drop"))
    assert dropped.attrs["votes_fitted"] == len([v for v in votes if v.choice != "tie"])
    # The whole arena's boards come from the same code as the job's own variants.
    pd.testing.assert_frame_equal(published.source.board("human", "all", FIRST),
                                  published.variants[("human", FIRST)])
    with pytest.raises(ValueError, match="unknown counting"):
        published.source.board("human", "redial", (False, "half"))


def test_a_lazy_board_is_computed_once_and_dropped_by_the_next_refresh(tmp_path):
    with Store(tmp_path / "arena.sqlite3") as store:
        fill(store)
        snapshots = LeaderboardSnapshots(store, OPTIONS)
        try:
            snapshots.board("human")
            assert snapshots.waits("human", "redial", FIRST) and not snapshots.waits("human", "all", FIRST)
            table, _, read = snapshots.board("human", "redial", counting=FIRST)
            assert not snapshots.waits("human", "redial", FIRST)
            again, _, _ = snapshots.board("human", "redial", counting=FIRST)
            assert again is table  # kept, not computed again
            old = snapshots.job._lazy
            stored_battle(store, "newcomer", "kbrd_redial", "unicrs_redial", "A")  # a first vote in ReDial
            newer, _, later = snapshots.board("human", "redial", fresh=True, counting=FIRST)
            assert later.started > read.started and snapshots.job._lazy is not old
            assert old.cached("human", "redial", FIRST) is None  # the refresh dropped the old boards
            assert newer.attrs["votes_fitted"] == table.attrs["votes_fitted"] + 1
            assert newer.attrs["participants"] == table.attrs["participants"] + 1
        finally:
            snapshots.job.stop()


def test_the_cache_keeps_at_most_its_bound(tmp_path):
    with Store(tmp_path / "arena.sqlite3") as store:
        fill(store)
        source = compute_boards(store, OPTIONS).source
    # More distinct boards than the bound: ReDial's votes, each time with one of them left out.
    dialogues, votes, rated = source.masks[("human", "redial")]
    n = len(source.frames.v["vote_id"])
    on_board = np.flatnonzero(np.unpackbits(np.frombuffer(votes, dtype=np.uint8), count=n))
    assert len(on_board) > CACHE_SIZE
    masks = {}
    for i, left_out in enumerate(on_board[:CACHE_SIZE + 3]):
        mask = np.unpackbits(np.frombuffer(votes, dtype=np.uint8), count=n).astype(bool)
        mask[left_out] = False
        masks[(f"without-{i}", "redial")] = (dialogues, np.packbits(mask).tobytes(), rated)
    lazy, worker = LazyBoards(BoardSource(source.frames, masks, source.options)), lazy_worker()
    try:
        for kind, _ in masks:
            assert lazy.board(kind, "redial", FIRST, worker, 60) is not None
        held = [kind for kind, _ in masks if lazy.cached(kind, "redial", FIRST) is not None]
        assert len(held) == CACHE_SIZE and held[-1] == f"without-{CACHE_SIZE + 2}"
        lazy.close()
        assert lazy.cached(held[-1], "redial", FIRST) is None
    finally:
        worker.shutdown()
