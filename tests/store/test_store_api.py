"""The store's API on SQLite and PostgreSQL: dialogues, scores, battles, runs, claims."""

import pickle
from datetime import datetime, timedelta, timezone

import pytest
import sqlalchemy as sa

import arena.store.engine as store_module
from arena.store import schema as t
from arena.dialogue import DialogueAct, Feedback, Score, UserKind
from arena.store import Store, head_revision

from store_strategies import battle, rich_dialogue

T0 = datetime(2024, 5, 1, tzinfo=timezone.utc)


def test_creates_parent_directory_and_uses_wal(tmp_path):
    path = tmp_path / "a" / "b" / "arena.sqlite3"
    with Store(path) as s:
        assert path.exists() and s.backend == "sqlite" and s.path == path
        with s.sql_engine().connect() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() >= 1000
            assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert s.schema_version() == head_revision()
    with pytest.raises(ValueError):
        Store(":memory:")
    with pytest.raises(ValueError, match="file path or a database URL"):  # SQLite's in-memory URL
        Store("sqlite://")
    with pytest.raises(ValueError, match="unsupported"):
        Store("mysql://somewhere/arena")


def test_save_get_and_upsert_keeps_feedback_and_scores(store):
    d = rich_dialogue()
    assert store.get_dialogue(d.dialogue_id) is None
    store.save_dialogue(d)
    assert store.get_dialogue(d.dialogue_id) == d
    d.add_user("one more thing")
    d.feedback = Feedback(sentiment="frustrated", comment="changed my mind")
    d.scores = {}
    store.save_dialogue(d)
    got = store.get_dialogue(d.dialogue_id)
    assert got.utterances == d.utterances and got.feedback.sentiment == "frustrated"
    assert set(got.scores) == {"rdl", "core.overall", "srrr"}  # saved scores are never dropped
    assert store.count_dialogues(sentiment="frustrated") == 1 and store.count_dialogues() == 1


def test_list_filters_order_and_limits(store):
    made = []
    specs = [("kbrd_redial", "human", True), ("barcor_redial", "simulator", True),
             ("kbrd_redial", "simulator", False), ("kbrd_redial", "human", True)]
    for i, (crs, kind, ended) in enumerate(specs):
        d = rich_dialogue(crs, kind=UserKind(kind), created_at=T0 - timedelta(hours=i))
        if not ended:
            d.ended_at = None
        made.append(d)
    store.save_dialogues(made)
    oldest_first = [d.dialogue_id for d in reversed(made)]
    assert [d.dialogue_id for d in store.list_dialogues()] == oldest_first
    assert [d.dialogue_id for d in store.list_dialogues(limit=2)] == oldest_first[:2]
    assert [d.dialogue_id for d in store.list_dialogues(limit=2, offset=1)] == oldest_first[1:3]
    assert {d.dialogue_id for d in store.list_dialogues(crs_id="kbrd_redial")} == {
        made[0].dialogue_id, made[2].dialogue_id, made[3].dialogue_id}
    assert [d.crs_id for d in store.list_dialogues(crs_id=["barcor_redial"])] == ["barcor_redial"]
    assert store.count_dialogues(user_kind="simulator") == 2
    assert store.count_dialogues(user_kind=UserKind.HUMAN, ended=True) == 2
    assert store.count_dialogues(crs_id="kbrd_redial", ended=False) == 1
    assert all(d.scores["rdl"].value == 0.3 for d in store.list_dialogues())


def test_save_scores_merges_idempotently_and_newest_wins(store):
    d = rich_dialogue()
    store.save_dialogue(d)
    new = Score(value=0.9, scorer="rdl", version="2", timestamp=T0 + timedelta(days=3650))
    store.save_scores(d.dialogue_id, {"rdl": new, "sr": Score(value=1.0, scorer="sr", version="1")})
    store.save_scores(d.dialogue_id, {"rdl": new})
    got = store.get_dialogue(d.dialogue_id).scores
    assert got["rdl"] == new and got["sr"].value == 1.0 and got["core.overall"].value == 71.2
    # A stale copy of the dialogue does not roll a newer score back.
    store.save_dialogue(d)
    assert store.get_dialogue(d.dialogue_id).scores["rdl"] == new
    assert [x.dialogue_id for x in store.list_dialogues(missing_score="srrr")] == [d.dialogue_id]
    assert store.count_dialogues(missing_score="rdl") == 0 and store.count_dialogues(missing_score="x") == 1
    with pytest.raises(KeyError):
        store.save_scores("nope", {"rdl": new})


def test_save_scores_stores_the_acts_they_came_from_and_nothing_else(store):
    d = rich_dialogue()
    store.save_dialogue(d)
    scored = store.get_dialogue(d.dialogue_id)
    for utt in scored.utterances:  # what a scorer does: acts on every utterance, named by their annotator
        utt.dialogue_acts = [DialogueAct(intent="REC-S" if utt.role.value == "AGENT" else "ACC")]
        utt.acts_annotator = "offline-acts/13"
    scored.metadata["acts_annotator"] = "offline-acts/13"
    scored.feedback = None  # a stale field of the scoring copy: must not reach the store
    rdl = Score(value=0.5, scorer="rdl", version="1/offline-acts/13")
    store.save_scores(d.dialogue_id, {"rdl": rdl}, acts_from=scored)
    got = store.get_dialogue(d.dialogue_id)
    assert [u.dialogue_acts for u in got.utterances] == [u.dialogue_acts for u in scored.utterances]
    assert {u.acts_annotator for u in got.utterances} == {"offline-acts/13"}
    assert got.metadata["acts_annotator"] == "offline-acts/13" and got.feedback == d.feedback
    assert got.scores["rdl"] == rdl

    def updated_at():
        with store.read() as conn:
            return conn.execute(sa.select(t.dialogues.c.updated_at)).scalar()

    before = updated_at()
    store.save_scores(d.dialogue_id, {"rdl": rdl}, acts_from=scored)  # the same acts: the row is not rewritten
    assert updated_at() == before and store.get_dialogue(d.dialogue_id) == got


def test_battle_is_saved_atomically(store, monkeypatch):
    a, b, vote = battle()
    store.save_battle(a, b, vote)
    assert store.get_dialogue(a.dialogue_id) == a and store.get_dialogue(b.dialogue_id) == b
    assert store.list_votes() == [vote]

    a2, b2, vote2 = battle()

    def broken(conn, v):
        raise RuntimeError("disk full")

    monkeypatch.setattr(Store, "_put_vote", staticmethod(broken))
    with pytest.raises(RuntimeError):
        store.save_battle(a2, b2, vote2)
    assert store.get_dialogue(a2.dialogue_id) is None and store.get_dialogue(b2.dialogue_id) is None
    monkeypatch.undo()
    with pytest.raises(ValueError):
        store.save_battle(b2, a2, vote2)
    assert store.count_dialogues() == 2


def test_votes_in_time_order_and_pair_counts(store):
    pairs = [("kbrd_redial", "barcor_redial"), ("barcor_redial", "kbrd_redial"),
             ("kbrd_redial", "unicrs_redial")]
    votes = []
    for i, (x, y) in enumerate(pairs):
        a, b, vote = battle(x, y, choice="tie")
        vote.timestamp = T0 - timedelta(minutes=i)
        votes.append(vote)
        store.save_battle(a, b, vote)
    assert store.list_votes() == list(reversed(votes))
    assert store.pair_counts() == {frozenset({"kbrd_redial", "barcor_redial"}): 2,
                                   frozenset({"kbrd_redial", "unicrs_redial"}): 1}
    assert store.pair_counts(user_kind="simulator") == {}


def test_runs(store):
    assert store.get_run("r1") is None and store.list_runs() == []
    store.save_run("r1", {"status": "running", "done": 3})
    store.save_run("r2", {"status": "queued"})
    store.save_run("r1", {"status": "finished", "done": 10})
    assert store.get_run("r1") == {"status": "finished", "done": 10}
    assert [run_id for run_id, _ in store.list_runs()] == ["r1", "r2"]


def test_store_pickles_by_location(store):
    d = rich_dialogue()
    store.save_dialogue(d)
    clone = pickle.loads(pickle.dumps(store))
    assert clone.get_dialogue(d.dialogue_id) == d
    clone.close()


def test_secret_is_created_once(store):
    first = store.get_or_create_secret("pseudonym_salt")
    assert len(first) == 64 and store.get_or_create_secret("pseudonym_salt") == first


def test_claims_count_as_battles_until_stored_released_or_expired(store):
    seen = []

    def least_played(counts):
        seen.append(dict(counts))
        pairs = [("a", "b"), ("a", "c"), ("b", "c")]
        return min(pairs, key=lambda p: (counts.get(frozenset(p), 0), p))

    first, claim1 = store.claim_pair(least_played)
    second, claim2 = store.claim_pair(least_played)
    assert first == ("a", "b") and second == ("a", "c") and store.open_claims() == 2
    assert seen[1] == {frozenset(("a", "b")): 1}
    a, b, vote = battle("a", "b", choice="A")
    store.save_battle(a, b, vote, claim_id=claim1)
    store.release_claim(claim2)
    assert store.open_claims() == 0 and store.pair_counts() == {frozenset(("a", "b")): 1}
    _, stale = store.claim_pair(least_played, ttl_s=-1)  # already expired: counts for nobody
    assert store.open_claims() == 0
    store.claim_pair(least_played)
    assert seen[-1] == {frozenset(("a", "b")): 1}
    assert store.claim_pair(least_played, user_kind="simulator")[0] == ("a", "b")
