"""Importing CRSArena-Dial, DialogueKit and IARD files, and refusing broken ones whole."""

import json

import pytest

from arena.runtime.config import ASSETS_DIR
from arena.dialogue import Role, UserKind
from arena.corpus.dialoguekit import DialogueImportError
from arena.corpus.loading import load_dialogues
from arena.corpus.records import import_dialogues

# The project ships IARD (origin and licence in assets/iard/README.md).
IARD = ASSETS_DIR / "iard" / "formatted_IARD_annotated_partially.json"


def crsarena_record(conv_id="kbrd_redial_u-1", sentiment="frustrated", **extra):
    rec = {
        "conversation ID": conv_id,
        "agent": {"id": "kbrd_redial", "type": "AGENT"},
        "user": {"id": "u-1", "type": "USER"},
        "conversation": [
            {"participant": "USER", "utterance": "Recommend me a sci-fi movie",
             "utterance ID": f"{conv_id}_0"},
            {"participant": "AGENT", "utterance": "Have you seen Arrival (2016)?",
             "utterance ID": f"{conv_id}_1"},
        ],
        "metadata": {"sentiment": sentiment},
    }
    rec.update(extra)
    return rec


def test_real_iard_file_imports_with_acts():
    dialogues = load_dialogues(IARD)
    assert len(dialogues) == 259
    assert sum(len(d.utterances) for d in dialogues) == 3480
    assert len({d.dialogue_id for d in dialogues}) == 259
    assert all(u.dialogue_acts for d in dialogues for u in d.utterances)
    first = next(d for d in dialogues if d.dialogue_id == "8502")
    assert first.crs_id == "293" and first.user.id == "141" and first.user.kind == UserKind.HUMAN
    assert first.utterances[0].role == Role.AGENT
    assert [a.intent for a in first.utterances[1].dialogue_acts] == ["OTH", "IQU"]
    assert first.metadata["accepted_recommendations"] == ["Mirror Mirror "]
    assert first.ended and first.feedback is None
    raw = json.loads(IARD.read_text(encoding="utf-8"))
    assert [[a["intent"] for a in u["dialogue_acts"]] for r in raw for u in r["conversation"]] == [
        [a.intent for a in u.dialogue_acts] for d in dialogues for u in d.utterances]
    # Ids that the file lacks are made stable, not random.
    assert first.utterances[3].utterance_id == "8502_3"
    assert load_dialogues(IARD)[0].utterances[0].utterance_id == dialogues[0].utterances[0].utterance_id


def test_crsarena_record_variants_are_tolerated():
    recs = [
        crsarena_record("a", "Satisfied"),
        crsarena_record("b", "FRUSTRATED "),
        {"conversation_id": 42, "agent": {"id": 7}, "user": {"id": 99},
         "conversation": [{"participant": "user", "utterance": "hi", "dialogue_acts": [{"intent": "IQU"}]}]},
        {"conversation ID": "c", "conversation": [], "metadata": {"sentiment": None}},
    ]
    a, b, numeric, bare = load_dialogues(json.dumps(recs))
    assert a.feedback.sentiment == "satisfied" and b.feedback.sentiment == "frustrated"
    assert a.utterances[1].utterance_id == "a_1" and a.utterances[1].items == []
    assert a.utterances[0].dialogue_acts is None
    assert (numeric.dialogue_id, numeric.crs_id, numeric.user.id) == ("42", "7", "99")
    assert numeric.utterances[0].role == Role.USER
    assert numeric.utterances[0].dialogue_acts[0].slot_values == []
    assert bare.crs_id == "unknown" and bare.user.id == "anonymous" and bare.feedback is None


def test_dialoguekit_per_pair_file_and_annotations():
    data = {
        "agent": {"id": "MovieAgent", "type": "BOT"},
        "user": {"id": "13", "type": "SIMULATOR"},
        "dialogues": [{
            "conversation_id": "x1",
            "conversation": [
                {"participant": "AGENT", "utterance": "Hi", "intent": "DISCLOSE"},
                {"participant": "USER", "utterance": "A comedy please",
                 "dialogue_acts": [{"intent": "PRO", "annotations": [{"slot": "GENRE", "value": "comedy"}]}]},
            ],
        }],
    }
    [d] = load_dialogues(json.dumps(data))
    assert d.crs_id == "MovieAgent" and d.user.kind == UserKind.SIMULATOR and d.user.id == "13"
    assert d.utterances[0].dialogue_acts[0].intent == "DISCLOSE"
    assert d.utterances[1].dialogue_acts[0].slot_values == [["GENRE", "comedy"]]


def test_jsonl_is_accepted(tmp_path):
    path = tmp_path / "c.jsonl"
    lines = [json.dumps(crsarena_record(str(i))) for i in range(3)]
    path.write_text("\n".join(lines) + "\n\n", encoding="utf-8")
    assert [d.dialogue_id for d in load_dialogues(path)] == ["0", "1", "2"]


def _error(source) -> DialogueImportError:
    with pytest.raises(DialogueImportError) as info:
        load_dialogues(source)
    return info.value


def test_bad_json_and_non_list_are_refused(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('[{"conversation ID": "a", ', encoding="utf-8")
    assert "invalid JSON" in str(_error(bad)) and str(bad) in str(_error(bad))
    assert "expected a JSON list" in str(_error('{"hello": 1}'))
    assert "expected a JSON list" in str(_error(b"42"))
    assert "cannot read file" in str(_error(tmp_path / "missing.json"))


@pytest.mark.parametrize(
    "mutate, field, words",
    [
        (lambda r: r.pop("conversation"), "conversation", "missing"),
        (lambda r: r.update(conversation="hello"), "conversation", "expected a list"),
        (lambda r: r["conversation"][1].pop("participant"), "conversation[1].participant", "missing"),
        (lambda r: r["conversation"][1].update(participant="BOT"), "conversation[1].participant", "'BOT'"),
        (lambda r: r["conversation"][0].pop("utterance"), "conversation[0].utterance", "missing"),
        (lambda r: r["conversation"][0].update(utterance=5), "conversation[0].utterance", "string"),
        (lambda r: r["metadata"].update(sentiment="meh"), "metadata.sentiment", "'meh'"),
        (lambda r: r["conversation"][1].update(timestamp="yesterday"), "conversation[1].timestamp", "ISO"),
    ],
)
def test_broken_record_error_names_index_conversation_and_field(mutate, field, words):
    recs = [crsarena_record("ok-0"), crsarena_record("ok-1"), crsarena_record("broken-conv")]
    mutate(recs[2])
    err = _error(json.dumps(recs))
    assert (err.index, err.conversation_id, err.field) == (2, "broken-conv", field)
    message = str(err)
    assert "record 2" in message and "'broken-conv'" in message and field in message and words in message


def test_all_problems_are_reported_and_jsonl_lines_named(tmp_path):
    lines = [json.dumps(crsarena_record("fine")), "{not json", json.dumps({"conversation ID": "z"})]
    path = tmp_path / "x.jsonl"
    path.write_text("\n".join(lines), encoding="utf-8")
    err = _error(path)
    assert [p.get("line") for p in err.problems] == [2]
    path.write_text("\n".join([lines[0], lines[2], json.dumps(crsarena_record("fine"))]), encoding="utf-8")
    err = _error(path)
    assert [(p["index"], p["line"], p["field"]) for p in err.problems] == [
        (1, 2, "conversation"), (2, 3, "conversation ID")]
    assert "duplicate of record 0" in str(err)


def test_nothing_is_half_imported(store, tmp_path):
    recs = [crsarena_record(f"good-{i}") for i in range(20)]
    recs.append({"conversation ID": "bad", "conversation": [{"participant": "ROBOT", "utterance": "x"}]})
    path = tmp_path / "mixed.json"
    path.write_text(json.dumps(recs), encoding="utf-8")
    with pytest.raises(DialogueImportError, match="record 20"):
        import_dialogues(store, path)
    assert store.count_dialogues() == 0
    path.write_text(json.dumps(recs[:-1]), encoding="utf-8")
    assert len(import_dialogues(store, path)) == 20
    assert store.count_dialogues(crs_id="kbrd_redial", ended=True) == 20
