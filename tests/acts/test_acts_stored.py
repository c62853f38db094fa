"""The acts a score was computed from are stored with the dialogue, exported, and never rewritten by a re-score."""

import json

import pytest
import sqlalchemy as sa

from arena.store import schema as t
from arena.corpus.dialoguekit import from_record, to_dialoguekit
from arena.corpus.records import export_jsonl
from arena.dialogue import Rating
from arena.store import Store
from evaluators.acts.llm import LLMActAnnotator
from evaluators.scoring import score_dialogue
from evaluators.stored_scoring import QueueScorer
from tests.acts.test_acts_scoring import fake_client, unannotated

METRICS = ["acts", "rdl", "srrr", "sr"]
INTENTS = [["OTH"], ["REC-S"], ["REJ"], ["REC-S"], ["ACC"]]  # what the scripted annotator says


def rows(store: Store, dialogue_id: str) -> tuple:
    """The raw stored rows of one dialogue: its data and update time, and its score rows."""
    with store.read() as conn:
        data = conn.execute(sa.select(t.dialogues.c.data, t.dialogues.c.updated_at)
                            .where(t.dialogues.c.dialogue_id == dialogue_id)).one()
        scores = conn.execute(sa.select(t.scores).where(t.scores.c.dialogue_id == dialogue_id)
                              .order_by(t.scores.c.metric)).all()
    return tuple(data), [tuple(r) for r in scores]


def score_queue(store: Store, ids: list[str], annotator, force: bool = False) -> dict:
    store.enqueue_scoring(ids, force=force)
    return QueueScorer(store, METRICS, annotator=annotator).drain(workers=1)


@pytest.fixture
def scored(tmp_path):
    """A stored dialogue scored through the queue by the scripted LLM annotator."""
    store = Store(tmp_path / "arena.sqlite3")
    d = unannotated()
    store.save_dialogue(d)
    client = fake_client()
    annotator = LLMActAnnotator(client, use_catalog=False)
    assert score_queue(store, [d.dialogue_id], annotator) == {"done": 1, "failed": 0}
    return store, d.dialogue_id, annotator, client


def test_stored_scores_come_with_the_acts_and_their_annotator(scored):
    store, dialogue_id, annotator, _ = scored
    d = store.get_dialogue(dialogue_id)
    assert [[a.intent for a in u.dialogue_acts] for u in d.utterances] == INTENTS
    assert [u.acts_annotator for u in d.utterances] == [annotator.label] * 5
    assert d.metadata["acts_annotator"] == annotator.label and d.metadata["acts_model"] == "fake:fake"
    assert d.utterances[1].dialogue_acts[0].slot_values == [["TITLE", "Heat (1995)", 4, 15]]
    assert d.scores["rdl"].value == pytest.approx(1 / 5) and d.scores["rdl"].version == f"2/{annotator.label}"


def test_the_export_carries_the_acts_in_the_dialoguekit_layout(scored, tmp_path):
    store, dialogue_id, annotator, _ = scored
    out = tmp_path / "corpus.jsonl"
    assert export_jsonl(store, out, salt="s") == 1
    record = json.loads(out.read_text())
    conversation = record["conversation"]
    assert [[a["intent"] for a in u["dialogue_acts"]] for u in conversation] == INTENTS
    assert {u["acts_annotator"] for u in conversation} == {annotator.label}
    assert record["metadata"]["dialogue_metadata"]["acts_annotator"] == annotator.label
    # Read back without its scores, the exported acts give the same scores again, under the same version.
    again = from_record(record)
    again.scores = {}
    rescored = score_dialogue(again, ["rdl", "sr"])
    assert rescored["rdl"].value == pytest.approx(1 / 5) and rescored["rdl"].version == f"2/{annotator.label}"


def test_provided_acts_round_trip_without_an_annotator_name():
    d = unannotated()
    d.utterances[0].acts_annotator = "offline-acts/13+v2"
    record = to_dialoguekit(d)
    assert record["conversation"][0]["acts_annotator"] == "offline-acts/13+v2"
    assert "acts_annotator" not in record["conversation"][1]
    assert from_record(record) == d


def test_rescoring_a_stored_dialogue_changes_no_record_and_force_recomputes(scored):
    store, dialogue_id, annotator, client = scored
    before = rows(store, dialogue_id)
    calls = client.stats()["calls"]
    assert score_queue(store, [dialogue_id], annotator) == {"done": 1, "failed": 0}
    assert rows(store, dialogue_id) == before  # same dialogue row (not even rewritten), same score rows
    assert client.stats()["calls"] == calls  # the stored acts were used: nothing annotated again
    assert score_queue(store, [dialogue_id], annotator, force=True) == {"done": 1, "failed": 0}
    (data, updated_at), scores = rows(store, dialogue_id)
    assert (data, updated_at) == before[0]  # the same acts again: the dialogue row is left alone
    assert client.stats()["calls"] > calls  # but they were annotated afresh
    old = {r[1]: r for r in before[1]}
    assert len(scores) == len(old)
    for row in scores:  # one row per metric, recomputed: same value, a newer time
        assert row[2] == old[row[1]][2] and row[-1] > old[row[1]][-1]


def test_scores_stored_before_acts_were_kept_get_their_acts_without_changing(tmp_path):
    store = Store(tmp_path / "arena.sqlite3")
    d = unannotated()
    store.save_dialogue(d)
    client = fake_client()
    annotator = LLMActAnnotator(client, use_catalog=False)
    copy = store.get_dialogue(d.dialogue_id)
    store.save_scores(d.dialogue_id, score_dialogue(copy, METRICS, annotator=annotator))  # the old way
    assert store.get_dialogue(d.dialogue_id).utterances[0].dialogue_acts is None
    score_rows = rows(store, d.dialogue_id)[1]
    assert score_queue(store, [d.dialogue_id], annotator) == {"done": 1, "failed": 0}
    stored = store.get_dialogue(d.dialogue_id)
    assert [[a.intent for a in u.dialogue_acts] for u in stored.utterances] == INTENTS
    assert rows(store, d.dialogue_id)[1] == score_rows  # the scores were current: kept as they were


def test_storing_acts_leaves_newer_fields_of_the_dialogue_alone(tmp_path):
    store = Store(tmp_path / "arena.sqlite3")
    d = unannotated()
    store.save_dialogue(d)
    scoring_copy = store.get_dialogue(d.dialogue_id)
    rated = store.get_dialogue(d.dialogue_id)
    rated.ratings.append(Rating(values={"understanding": 2}, rater_id="p", form_version="aspects_v1"))
    store.save_dialogue(rated)  # a rating arrives while the older copy is being scored
    scores = score_dialogue(scoring_copy, ["rdl"], annotator=LLMActAnnotator(fake_client(), use_catalog=False))
    store.save_scores(d.dialogue_id, scores, acts_from=scoring_copy)
    stored = store.get_dialogue(d.dialogue_id)
    assert stored.ratings[0].values == {"understanding": 2}
    assert [[a.intent for a in u.dialogue_acts] for u in stored.utterances] == INTENTS
    assert stored.scores["rdl"].value == pytest.approx(1 / 5)


@pytest.mark.slow
def test_score_db_with_the_offline_annotator_keeps_its_acts(tmp_path, capsys):
    from arena.corpus.cli import main as corpus_main
    from evaluators.cli import main
    from tests.acts.test_acts_cli import write_corpus

    src, db = tmp_path / "dialogues.json", tmp_path / "arena.sqlite3"
    write_corpus(src, with_acts=False)
    assert corpus_main(["import", str(src), "--db", str(db)]) == 0
    assert main(["score", "--db", str(db), "--annotator", "offline", "--workers", "1", "--quiet"]) == 0
    store = Store(db)
    a1 = store.get_dialogue("a1")
    label = a1.metadata["acts_annotator"]
    assert label.startswith("offline-acts/") and a1.scores["rdl"].version == f"2/{label}"
    assert all(u.dialogue_acts for u in a1.utterances) and {u.acts_annotator for u in a1.utterances} == {label}
    assert "REC-E" in [a.intent for a in a1.utterances[1].dialogue_acts]
    before = {i: rows(store, i) for i in ("a1", "a2", "b1", "b2", "c1")}
    assert main(["score", "--db", str(db), "--annotator", "offline", "--all", "--quiet"]) == 0
    assert {i: rows(store, i) for i in before} == before
    assert main(["score", "--db", str(db), "--explain", "a1"]) == 0
    assert f"dialogue a1 (sys_a): acts by {label}" in capsys.readouterr().out
