"""score_dialogue, the metric registry and BackgroundScorer."""

import json
import re
import threading

import pytest

from arena.llm import FakeProvider, LLMClient, RetryPolicy
from evaluators.acts.llm import LLMActAnnotator
from evaluators.scoring import REGISTRY, parse_metrics, score_dialogue
from webapp.runs.scorer import BackgroundScorer
from tests.acts.acts_helpers import make_dialogue, three_rounds


def keyword_llm(request):
    """A scripted model: reads the utterance to label and answers like an annotator would."""
    line = next(ln for ln in request.messages[-1][1].splitlines() if "(to label): " in ln)
    speaker, text = line.split(" (to label): ", 1)
    text = text.lower()
    if speaker == "SYSTEM":
        intents = ["REC-S"] if "(" in text else ["REQ"]
    elif "watch" in text:
        intents = ["ACC"]
    elif re.match(r"no\b", text):
        intents = ["REJ"]
    else:
        intents = ["OTH"]
    return json.dumps({"intents": intents, "titles": []})


def fake_client(responder=keyword_llm):
    return LLMClient(FakeProvider(responder), retry=RetryPolicy(max_retries=0, base_delay_s=0.01))


def unannotated():
    return make_dialogue([
        ("U", "hi, any thriller?", None),
        ("A", "Try Heat (1995).", None),
        ("U", "no, seen it", None),
        ("A", "Then Ronin (1998).", None),
        ("U", "great, I'll watch it", None),
    ], dialogue_id="d-1", sentiment="satisfied")


def test_registry_names():
    assert {"acts", "rdl", "srrr", "sr", "recall", "pc", "core"} <= set(REGISTRY)
    assert parse_metrics("acts, rdl,sr") == ["acts", "rdl", "sr"]
    with pytest.raises(ValueError, match="unknown metric"):
        parse_metrics("rdl,bleu")


def test_provided_acts_are_used_and_labelled():
    d = three_rounds()
    scores = score_dialogue(d, ["acts", "rdl", "srrr", "sr"])
    assert scores["rdl"].value == pytest.approx(1 / 9)
    assert scores["srrr"].value == pytest.approx(1 / 3)
    assert scores["sr"].value == 1.0
    assert scores["acts"].value == 1.0
    assert scores["acts"].details["recommend"] == 3
    assert all(s.version == "2/provided" for s in scores.values())
    assert scores["rdl"].scorer == "rdl" and scores["rdl"].details["length"] == 9
    assert d.scores["rdl"] is scores["rdl"]


def test_llm_annotator_fills_acts_and_versions_scores():
    client = fake_client()
    annotator = LLMActAnnotator(client, use_catalog=False)
    d = unannotated()
    scores = score_dialogue(d, ["acts", "rdl", "srrr", "sr"], annotator=annotator)
    assert [a.intent for u in d.utterances for a in u.dialogue_acts] == ["OTH", "REC-S", "REJ", "REC-S", "ACC"]
    assert d.utterances[1].dialogue_acts[0].slot_values == [["TITLE", "Heat (1995)", 4, 15]]
    assert scores["rdl"].value == pytest.approx(1 / 5)
    assert scores["srrr"].value == 0.5
    assert scores["rdl"].version == f"2/{annotator.label}"
    assert annotator.label.startswith("llm-acts/prompt2-")
    assert scores["rdl"].model == "fake:fake"
    assert d.metadata["acts_annotator"] == annotator.label


def test_rescoring_is_idempotent_and_force_recomputes():
    client = fake_client()
    annotator = LLMActAnnotator(client, use_catalog=False)
    d = unannotated()
    first = score_dialogue(d, ["rdl", "sr"], annotator=annotator)
    calls = client.stats()["calls"]
    again = score_dialogue(d, ["rdl", "sr"], annotator=annotator)
    assert again["rdl"] is first["rdl"]  # kept, not recomputed
    assert client.stats()["calls"] == calls  # no new annotation either
    forced = score_dialogue(d, ["rdl", "sr"], annotator=annotator, force=True)
    assert forced["rdl"] is not first["rdl"] and forced["rdl"].value == first["rdl"].value


def test_unparseable_annotation_gives_unscored_values():
    annotator = LLMActAnnotator(fake_client(lambda req: "I cannot help with that."), use_catalog=False)
    d = unannotated()
    scores = score_dialogue(d, ["acts", "rdl", "srrr", "sr"], annotator=annotator)
    assert all(s.value is None for s in scores.values())
    assert all("annotation failed" in s.error for s in scores.values())
    assert all(u.dialogue_acts is None for u in d.utterances)  # nothing half-annotated
    # A failed score is not "current": the next run tries again.
    fixed = score_dialogue(d, ["rdl"], annotator=LLMActAnnotator(fake_client(), use_catalog=False))
    assert fixed["rdl"].value == pytest.approx(1 / 5)


def test_target_metrics():
    d = make_dialogue([
        ("U", "hi", ["OTH"]),
        ("A", "1: A 2: B", ["REC-S"], [("t1", "A"), ("x", "B")]),
        ("U", "ok", ["NRE"]),
        ("A", "1: C", ["REC-S"], [("t2", "C")]),
    ], targets=["t1", "t2"])
    scores = score_dialogue(d, ["recall", "pc"])
    assert scores["recall"].value == pytest.approx(0.5)
    assert scores["pc"].value == 1.0
    assert scores["pcir"].value == pytest.approx(0.5)
    no_targets = score_dialogue(three_rounds(), ["recall", "pc"])
    assert no_targets["recall"].value is None and "targets" in no_targets["recall"].error
    assert set(no_targets) == {"recall", "pc", "pcir"}


def test_core_without_client_is_unscored():
    scores = score_dialogue(three_rounds(), ["core"])
    assert scores["core.overall"].value is None and scores["core.overall"].error


def test_background_scorer_stores_scores(tmp_path):
    from arena.store import Store

    store = Store(tmp_path / "arena.sqlite3")
    d = unannotated()
    store.save_dialogue(d)
    scorer = BackgroundScorer(store, ["acts", "rdl", "srrr", "sr"], annotator=LLMActAnnotator(fake_client(), use_catalog=False))
    future = scorer.submit(d.dialogue_id)
    assert scorer.wait(timeout=30)
    assert future.result()["rdl"].value == pytest.approx(1 / 5)
    stored = store.get_dialogue(d.dialogue_id)
    assert stored.scores["rdl"].value == pytest.approx(1 / 5)
    assert stored.scores["sr"].value == 1.0
    # Unknown ids and broken scorers never raise into the app.
    scorer.submit("no-such-dialogue")
    assert scorer.wait(timeout=30)
    assert "no-such-dialogue" in scorer.errors
    scorer.shutdown()
    assert scorer.submit(d.dialogue_id) is None


def test_background_scorer_does_not_queue_twice(tmp_path):
    from arena.store import Store

    store = Store(tmp_path / "arena.sqlite3")
    d = unannotated()
    store.save_dialogue(d)
    gate = threading.Event()

    def slow(request):
        gate.wait(10)
        return keyword_llm(request)

    scorer = BackgroundScorer(store, ["rdl"], annotator=LLMActAnnotator(fake_client(slow), parallel=1, use_catalog=False))
    first = scorer.submit(d.dialogue_id)
    assert scorer.submit(d.dialogue_id) is first
    gate.set()
    assert scorer.wait(timeout=30)
    assert scorer.completed == 1
    scorer.shutdown()
