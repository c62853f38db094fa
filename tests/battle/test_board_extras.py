"""The tables beside the boards (issue 41): made from the store's compact rows and `scores` rows, reading whole
only the dialogues with aspect ratings, they equal the tables made from every dialogue read whole; the job
publishes the boards before them."""

from __future__ import annotations

import random
import threading

import pytest

from arena.crowd.aspects import load_form
from arena.dialogue import Rating, Score, UserKind
from arena.store import Store
from arena.crowd.study import OPEN_CROWD
from evaluators.meta import meta_rows, meta_table
from evaluators.meta_correlations import correlation_records, judged_records
from test_board_job import OPTIONS, _fill
from webapp.leaderboard import snapshot as snapshot_module
from webapp.leaderboard.board_select import StoreFrames
from webapp.leaderboard.categories import CATEGORIES
from webapp.leaderboard.snapshot import AUDIENCES, BoardJob, compute_boards

ROUNDS = 40


def _rate_some(store: Store, seed: int = 3) -> int:
    """Aspect ratings (dialogue and reply level, by people and simulators), per-turn recall and unscored
    metrics on some dialogues; how many dialogues now hold ratings."""
    rng = random.Random(seed)
    rated = 0
    for d in store.list_dialogues():
        if rng.random() < 0.3 and d.agent_turns():
            kind = d.user.kind if rng.random() < 0.8 else UserKind.SIMULATOR
            d.ratings.append(Rating(values={"overall_impression": rng.randint(0, 4), "efficiency": rng.randint(0, 4)},
                                    rater_id="r", rater_kind=kind, form_version="aspects_v1"))
            reply = d.agent_turns()[0]
            reply.ratings.append(Rating(values={"relevance": rng.randint(0, 2)}, rater_id="r", rater_kind=d.user.kind,
                                        form_version="aspects_v1"))
            replies = len(d.agent_turns())
            d.set_score("recall", Score(value=rng.random(), scorer="recall", version="1",
                                        details={"per_turn": [rng.random() for _ in range(replies)]}))
            store.save_dialogue(d)
            rated += 1
        elif rng.random() < 0.2:
            store.save_scores(d.dialogue_id, {"core.overall": Score(value=rng.random(), scorer="core", version="1"),
                                              "sr": Score(value=None, scorer="sr", version="1", error="no acts")})
    return rated


def _whole_dialogue_tables(store: Store, kind, category, form):
    """The tables as made before: every dialogue of the board read whole, labels the board does not count
    taken off."""
    frames = StoreFrames.of(store.board_rows())
    data, _ = frames.select(crowd=OPEN_CROWD, user_kind=kind, category=category)
    by_id = {d.dialogue_id: d for d in store.list_dialogues()}
    rated = dict(zip(data.dialogues["dialogue_id"], data.dialogues["rated"]))
    dialogues = [d if rated[i] or d.feedback is None else d.model_copy(update={"feedback": None})
                 for i in data.dialogues["dialogue_id"] if (d := by_id.get(i)) is not None]
    return meta_table(dialogues), correlation_records(dialogues, form=form, rounds=ROUNDS)


def _same(got, want, where):
    assert len(got) == len(want), where
    for g, w in zip(got, want):
        assert g.keys() == w.keys(), where
        for key in g:
            if isinstance(w[key], float):
                assert g[key] == pytest.approx(w[key], abs=1e-9), (where, key)
            else:
                assert g[key] == w[key], (where, key)


def test_side_tables_from_compact_rows_equal_those_from_whole_dialogues(db_location, monkeypatch):
    store = Store(db_location)
    _fill(store, n=120)
    assert _rate_some(store) > 5
    form = load_form()
    read_whole = []
    real = store.board_documents
    monkeypatch.setattr(store, "board_documents", lambda ids: read_whole.append(list(ids)) or real(ids))
    monkeypatch.setattr(store, "list_dialogues", lambda *a, **k: pytest.fail("a dialogue list was read whole"))
    published = compute_boards(store, OPTIONS, extra=lambda kind, category, dialogues: (
        meta_rows(dialogues.meta_entries()), judged_records(dialogues.judged(form), form=form, rounds=ROUNDS)))
    monkeypatch.undo()
    (ids,) = read_whole  # one read per run, of the open arena's dialogues with ratings only
    with_ratings = {d.dialogue_id for d in store.list_dialogues() if d.ratings or any(u.ratings for u in d.utterances)}
    assert set(ids) <= with_ratings and len(ids) < store.count_dialogues() / 2
    assert set(published.extras) == {(k, c) for k in AUDIENCES for c in CATEGORIES}
    checked_turns = False
    for (kind, category), (rows, records) in published.extras.items():
        want_rows, want_records = _whole_dialogue_tables(store, kind, category, form)
        _same(rows, want_rows, (kind, category))
        _same(records, want_records, (kind, category))
        checked_turns |= any(r["level"] == "turn" and r["n"] for r in records)
    assert checked_turns  # the rated replies' per-turn terms took part
    assert all("sr" in row for row in published.extras[(None, "all")][0])  # a metric never scored: still a column


def test_the_job_publishes_the_boards_before_the_tables_beside_them(tmp_path, monkeypatch):
    store = Store(tmp_path / "s.sqlite3")
    _fill(store, n=20)
    entered, release = threading.Event(), threading.Event()

    def slow_extra(kind, category, dialogues):
        entered.set()
        release.wait(timeout=20)
        return len(dialogues)

    monkeypatch.setattr(snapshot_module, "WAIT_S", 20.0)
    job = BoardJob(store, OPTIONS, extra=slow_extra)
    try:
        job.start()
        assert entered.wait(timeout=20)
        boards_only = job.latest()  # the boards are out while the tables are being made
        assert not boards_only.extras_done and boards_only.extras == {}
        assert boards_only.frames is None  # the rows are not kept on a published result
        release.set()
        done = job.with_extras(boards_only)
        assert done.extras_done and done.extras[("human", "all")] > 0
        assert done.boards is boards_only.boards and done.version == boards_only.version
    finally:
        release.set()
        job.stop()
