"""Round trips: our JSON, the DialogueKit layout, and the SQLite store lose nothing."""

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings

from arena.dialogue import Dialogue
from arena.corpus.dialoguekit import from_record, to_dialoguekit
from arena.corpus.loading import load_dialogues
from arena.store import Store

from store_strategies import dialogues, rich_dialogue

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(dialogues)
def test_json_round_trip(d):
    assert Dialogue.from_json(d.to_json()) == d


@SETTINGS
@given(dialogues)
def test_dialoguekit_round_trip_through_json_text(d):
    rec = json.loads(json.dumps(to_dialoguekit(d)))
    assert from_record(rec) == d


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dialogues)
def test_store_round_trip(d):
    with tempfile.TemporaryDirectory() as tmp:
        with Store(Path(tmp) / "a.sqlite3") as store:
            store.save_dialogue(d)
            assert store.get_dialogue(d.dialogue_id) == d
            [listed] = store.list_dialogues()
            assert listed == d


def test_rich_dialogue_export_import_file(tmp_path):
    originals = [rich_dialogue(), rich_dialogue("unicrs_redial", sentiment=None)]
    path = tmp_path / "corpus.json"
    path.write_text(json.dumps([to_dialoguekit(d) for d in originals]), encoding="utf-8")
    assert load_dialogues(path) == originals
    jsonl = tmp_path / "corpus.jsonl"
    jsonl.write_text("\n".join(json.dumps(to_dialoguekit(d)) for d in originals) + "\n", encoding="utf-8")
    assert load_dialogues(jsonl) == originals


def test_export_carries_our_fields_in_the_expected_places():
    d = rich_dialogue()
    rec = to_dialoguekit(d)
    assert rec["conversation ID"] == d.dialogue_id
    assert rec["agent"]["id"] == "kbrd_redial"
    assert rec["user"] == {"id": d.user.id, "type": "USER", "kind": "human", "simulator": None, "details": {}}
    agent_turn = rec["conversation"][1]
    assert agent_turn["participant"] == "AGENT"
    assert agent_turn["recommended_items"] == [{"id": "123", "title": "Heat (1995)"}]
    assert "timestamp" in agent_turn and "utterance ID" in agent_turn
    assert rec["conversation"][3]["error"] == "timeout"
    assert rec["conversation"][0]["dialogue_acts"] == [
        {"intent": "IQU", "slot_values": [["GENRE", "comedy", 15, 20]]}]
    meta = rec["metadata"]
    assert meta["sentiment"] == "satisfied"
    assert meta["feedback"]["comment"] == "nice, thanks"
    assert meta["scores"] == {"core.overall": 71.2, "rdl": 0.3, "srrr": None}
    assert meta["score_details"]["srrr"]["error"] == "llm failed"
    assert meta["schema_version"] == d.schema_version
    assert meta["end_reason"] == "user_stopped"


def test_own_dialogue_json_is_accepted(tmp_path):
    d = rich_dialogue()
    single = tmp_path / "one.json"
    single.write_text(d.to_json(), encoding="utf-8")
    assert load_dialogues(single) == [d]
    many = "[" + ",".join(x.to_json() for x in (d, rich_dialogue())) + "]"
    assert load_dialogues(many)[0] == d
