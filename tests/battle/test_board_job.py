"""Boards off the request path (issue 41): the background job's boards, computed from the store's compact rows,
equal the boards computed from whole dialogues; one Bradley-Terry model serves the plain and style-controlled
boards; a page request never computes."""

from __future__ import annotations

import math
import random
import threading

import numpy as np
import pandas as pd
import pytest

from arena.crowd.counting import LABEL_FLAG, Participants, visibility
from arena.dialogue import Dialogue, Feedback, RecommendedItem, Role, Score, UserInfo, UserKind, Utterance, Vote
from arena.crowd.rater_check import label_evidence
from arena.store import Store
from arena.crowd.study import OPEN_CROWD
from webapp.leaderboard import snapshot as snapshot_module
from webapp.leaderboard.categories import CATEGORIES, select
from webapp.leaderboard.snapshot import AUDIENCES, BoardJob, compute_boards
from webapp.leaderboard.table import LeaderboardOptions, compute_leaderboard, rank_systems

SYSTEMS = ["kbrd_redial", "unicrs_redial", "barcor_opendialkg", "chatgpt_opendialkg"]
OPTIONS = LeaderboardOptions(bootstrap_rounds=30, style_rounds=20, min_votes=2)


def _dialogue(rng, crs, kind, user, turns, battle_id):
    d = Dialogue(crs_id=crs, user=UserInfo(kind=kind, id=user), metadata={"source": "battle", "battle_id": battle_id})
    for t in range(turns):
        d.add_user(f"something to watch {t}")
        d.add_agent("Try Up (2009). " * rng.randint(1, 5),
                    items=[RecommendedItem(item_id="1", title="Up (2009)")] * rng.randint(0, 2))
    if rng.random() < 0.7:
        d.feedback = Feedback(sentiment=rng.choice(["satisfied", "frustrated"]))
        if rng.random() < 0.1:
            d.metadata[LABEL_FLAG] = "burst"
    if rng.random() < 0.5:
        d.set_score("rdl", Score(value=rng.random(), scorer="rdl", version="1"))
    if rng.random() < 0.05:  # a system failed a turn: the dialogue and its battle are void
        d.utterances.append(Utterance(role=Role.AGENT, text="", error="timeout"))
    return d


def _fill(store, n=160, seed=5):
    rng = random.Random(seed)
    for k in range(n):
        a, b = rng.sample(SYSTEMS, 2)
        kind = UserKind.SIMULATOR if rng.random() < 0.3 else UserKind.HUMAN
        user = f"user-{rng.randrange(12)}"
        turns = rng.choice([1, 2, 5])
        da, db = (_dialogue(rng, crs, kind, user, turns, f"b{k}") for crs in (a, b))
        study = "pilot" if rng.random() < 0.15 else None
        if study:
            da.metadata["study"] = db.metadata["study"] = study
        vote = Vote(battle_id=f"b{k}", dialogue_a=da.dialogue_id, dialogue_b=db.dialogue_id, crs_a=a, crs_b=b,
                    choice=rng.choice(["A", "B", "tie", "both_bad"]), user_id=user, user_kind=kind, study=study)
        store.save_battle(da, db, vote)
        if rng.random() < 0.1:
            with store.write() as conn:  # a flagged vote, as the burst check leaves it
                from arena.store import schema as t

                conn.execute(t.vote_flags.insert().values(vote_id=vote.vote_id, reason="burst",
                                                          flagged_at="2026-01-01T00:00:00"))
        if rng.random() < 0.05:
            store.hide_dialogues([da.dialogue_id], actor="test", reason="abuse")
    store.save_dialogue(Dialogue(crs_id="kbrd_redial", user=UserInfo(id="chatter")))  # opened, never used


def _object_board(store, kind, category):
    """The board as computed before issue 41: whole dialogues, `arena.crowd.counting`'s rules on objects."""
    votes = store.list_votes()
    seen = visibility(store, votes)
    dialogues, kind_votes = Participants(crowd=OPEN_CROWD, user_kind=kind).select(store.list_dialogues(), votes)
    dialogues = seen.counted_labels(seen.dialogues(dialogues))
    dialogues, votes = select(category, dialogues, seen.votes(kind_votes))
    return rank_systems(dialogues, votes, options=OPTIONS)


def test_job_boards_from_compact_rows_equal_boards_from_whole_dialogues(db_location):
    store = Store(db_location)
    _fill(store)
    published = compute_boards(store, OPTIONS)
    assert set(published.boards) == {(k, c) for k in AUDIENCES for c in CATEGORIES}
    assert set(published.studies) == {"pilot"}
    for (kind, category), table in published.boards.items():
        expected = _object_board(store, kind, category)
        assert table["system"].tolist() == expected["system"].tolist(), (kind, category)
        for column in table.columns:
            if column == "system":
                continue
            got, want = table[column].astype(float).to_numpy(), expected[column].astype(float).to_numpy()
            assert np.allclose(got, want, equal_nan=True, atol=1e-6), (kind, category, column, got, want)
        assert table.attrs["category"] == category
    assert published.boards[("human", "all")]["battles"].sum() > 0
    # A study's board: its crowd's people only, no minimum (as `study_results.study_leaderboard` computed it).
    votes = store.list_votes()
    seen = visibility(store, votes)
    expected = compute_leaderboard(seen.counted_labels(seen.dialogues(store.list_dialogues(user_kind="human"))),
                                   seen.votes(store.list_votes(user_kind="human")), user_kind="human", crowd="pilot",
                                   options=LeaderboardOptions(min_votes=0, bootstrap_rounds=200, style_rounds=100))
    study = published.studies["pilot"]
    assert study["system"].tolist() == expected["system"].tolist()
    for column in ("battles", "wins", "rated", "satisfied", "bt", "bt_low", "bt_style", "bt_style_high"):
        assert np.allclose(study[column].astype(float), expected[column].astype(float), equal_nan=True, atol=1e-6)


def test_style_controlled_board_is_the_plain_board_when_style_does_not_differ():
    from webapp.leaderboard import bt_model

    rng = np.random.default_rng(0)
    a = rng.integers(0, 4, 300)
    b = (a + rng.integers(1, 4, 300)) % 4
    y = rng.choice([0.0, 0.5, 1.0], 300)
    plain = bt_model.fit(bt_model.aggregate(a, b, y, 4))
    styled = bt_model.fit(bt_model.Rows(a, b, y, np.zeros((300, 2)), np.ones(300), 4))
    assert np.allclose(plain, styled[:4], atol=1e-8) and np.allclose(styled[4:], 0.0, atol=1e-8)


def test_ties_are_half_wins_in_the_logistic_regression():
    from webapp.leaderboard import bt_model

    # 2 wins and 2 ties for side 0 against side 1: 3 points of 4, odds 3 (no virtual ties).
    theta = bt_model.fit(bt_model.aggregate(np.array([0, 0, 0, 0]), np.array([1, 1, 1, 1]),
                                            np.array([1.0, 1.0, 0.5, 0.5]), 2), prior_games=0.0)
    assert theta[0] - theta[1] == pytest.approx(math.log(3))


def test_label_evidence_follows_the_likelihood_ratio_worked_by_hand():
    # u1 labels system a satisfied three times; the others (u2) give a half of their labels satisfied, so
    # u1's null is (1 + 1) / (2 + 2) = 1/2 and the alternative's chances are 1/2, 2/3, 3/4:
    # ratio 1 * 4/3 * 3/2. u2's null is (3 + 1) / (3 + 2) = 4/5: 0.5 / 0.8 for the satisfied, then
    # (1/3) / (1/5) for the frustrated.
    labels = [("u1", "a", True, "001"), ("u2", "a", True, "002"), ("u1", "a", True, "003"),
              ("u2", "a", False, "004"), ("u1", "a", True, "005"), ("anonymous", "b", True, "006")]
    evidence = label_evidence(*zip(*labels))
    assert evidence.keys() == {"u1", "u2"}  # a pooled id is no rater
    assert evidence["u1"] == pytest.approx(math.log10(2))
    assert evidence["u2"] == pytest.approx(math.log10(0.625 * 5 / 3))


def test_a_page_request_never_computes_and_an_unchanged_store_answers_at_once(tmp_path, monkeypatch):
    store = Store(tmp_path / "s.sqlite3")
    _fill(store, n=20)
    threads = []
    real = snapshot_module.compute_boards

    def recording(*args, **kwargs):
        threads.append(threading.current_thread().name)
        return real(*args, **kwargs)

    monkeypatch.setattr(snapshot_module, "compute_boards", recording)
    job = BoardJob(store, OPTIONS)
    try:
        first = job.latest()
        assert job.latest(fresh=True) is first  # nothing changed: the same result, no wait
        _fill(store, n=3, seed=9)
        newer = job.latest(fresh=True)  # changed: the job's next result, begun after the request
        assert newer is not first and newer.version == store.board_version()
        assert newer.boards[("human", "all")]["battles"].sum() >= first.boards[("human", "all")]["battles"].sum()
        assert threads and set(threads) == {"leaderboard-job"}
    finally:
        job.stop()


def test_dialogues_stored_before_the_compact_rows_get_theirs_at_the_next_read(tmp_path):
    store = Store(tmp_path / "s.sqlite3")
    _fill(store, n=10)
    from arena.store import schema as t

    with store.write() as conn:
        conn.execute(t.board_dialogues.delete())
    rows = store.board_rows()
    assert len(rows.dialogues) == store.count_dialogues()
    assert pd.Series([r[0] for r in rows.dialogues]).is_unique


def test_a_request_made_while_a_run_is_under_way_is_answered_by_that_run_or_the_next(tmp_path, monkeypatch):
    """A page asking for the current board while the job is computing one (begun after the store's last
    change) gets that result when it is published, not after the longest wait: the run in progress holds
    what the store has. Found as a Leaderboard tab that waited past a vote until the scorer wrote again."""
    store = Store(tmp_path / "s.sqlite3")
    _fill(store, n=10)
    real = snapshot_module.compute_boards
    running, release = threading.Event(), threading.Event()

    def slow(*args, **kwargs):
        result = real(*args, **kwargs)
        running.set()
        release.wait(timeout=20)
        return result

    job = BoardJob(store, OPTIONS)
    try:
        first = job.latest()
        monkeypatch.setattr(snapshot_module, "compute_boards", slow)
        monkeypatch.setattr(snapshot_module, "WAIT_S", 20.0)
        _fill(store, n=2, seed=11)  # the job notices the change and starts a run (held before it publishes)
        assert running.wait(timeout=20)
        answers = []
        asker = threading.Thread(target=lambda: answers.append(job.latest(fresh=True)))
        asker.start()
        release.set()  # the run begun before the request publishes; the store has not changed since
        asker.join(timeout=10)
        assert not asker.is_alive(), "the request waited past the run that holds the store's state"
        (answer,) = answers
        assert answer is not first and answer.version == store.board_version()
    finally:
        release.set()
        job.stop()
