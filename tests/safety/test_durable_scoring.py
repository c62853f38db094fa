"""Scoring jobs live in the store: a crash loses none, a restart resumes them, several workers run them."""

from __future__ import annotations

import time

import pytest

from arena.runtime.config import Settings
from arena.store import Store
from evaluators.acts.llm import LLMActAnnotator
from tests.acts.acts_helpers import make_dialogue
from tests.acts.test_acts_scoring import fake_client
from webapp.runs.scorer import BackgroundScorer
from webapp.services import build_services


def finished(dialogue_id: str):
    d = make_dialogue([
        ("U", "hi, any thriller?", None),
        ("A", "Try Heat (1995).", None),
        ("U", "great, I'll watch it", None),
    ], dialogue_id=dialogue_id, sentiment="satisfied")
    d.end("feedback")
    return d


def annotator():
    return LLMActAnnotator(fake_client(), use_catalog=False)


def test_a_job_left_running_by_a_crash_is_resumed(tmp_path):
    store = Store(tmp_path / "arena.sqlite3")
    store.save_dialogue(finished("d-crash"))
    store.enqueue_scoring(["d-crash"])
    crashed = Store(tmp_path / "arena.sqlite3")  # another process, with a short lease
    crashed.lease_s = 0.3
    assert crashed.claim_scoring_job()[0] == "d-crash"
    crashed.close()  # it dies here: nothing renews its lease
    assert store.requeue_interrupted() == 0  # a live lease is never taken back
    time.sleep(0.4)
    scorer = BackgroundScorer(store, ["rdl", "sr"], annotator=annotator(), poll_s=0.1)
    try:  # its workers take the expired claim over (or the start puts it back in the queue)
        scorer.resume()
        _wait_drained(store)
    finally:
        scorer.shutdown()
    assert store.get_dialogue("d-crash").scores["sr"].value == 1.0


def test_start_resumes_every_finished_dialogue_without_scores(tmp_path):
    db = tmp_path / "arena.sqlite3"
    store = Store(db)
    for i in range(3):
        store.save_dialogue(finished(f"d-{i}"))  # stored, never scored: the old in-memory queue died
    unfinished = make_dialogue([("U", "hello", None)], dialogue_id="d-open")
    store.save_dialogue(unfinished)
    # An endpoint is configured (a scripted one), so the acts come from the fast LLM annotator.
    settings = Settings(db_path=db, cache_dir=tmp_path / "cache", llm_provider="openai", scorer_workers=2,
                        llm_base_url="http://127.0.0.1:9/v1")
    services = build_services(settings, llm=fake_client(), specs=[], metrics="rdl,sr")
    try:
        _wait_drained(store)
    finally:
        services.close()
    for i in range(3):
        assert store.get_dialogue(f"d-{i}").scores["sr"].value == 1.0
    assert store.get_dialogue("d-open").scores == {}


def test_workers_are_configurable(tmp_path):
    settings = Settings(db_path=tmp_path / "a.sqlite3", cache_dir=tmp_path / "c", llm_provider="fake",
                        scorer_workers=3)
    services = build_services(settings, llm=fake_client(), specs=[], metrics="rdl")
    try:
        assert len(services.scorer._threads) == 3
    finally:
        services.close()


def test_acts_annotator_follows_the_configured_endpoint(tmp_path):
    settings = Settings(db_path=tmp_path / "a.sqlite3", cache_dir=tmp_path / "c", llm_provider="openai",
                        llm_base_url="http://127.0.0.1:9/v1")
    services = build_services(settings, llm=fake_client(), specs=[], metrics="rdl")
    try:
        assert isinstance(services.scorer.jobs.annotator(), LLMActAnnotator)
    finally:
        services.close()


def test_score_db_rescores_stored_dialogues(tmp_path, capsys, monkeypatch):
    from evaluators import cli

    db = tmp_path / "arena.sqlite3"
    store = Store(db)
    for i in range(4):
        store.save_dialogue(finished(f"d-{i}"))
    monkeypatch.setattr(cli, "_annotator", lambda kind, client: annotator())
    assert cli.main(["score", "--db", str(db), "--metrics", "rdl,sr", "--workers", "2", "--quiet"]) == 0
    assert "scored 4 stored dialogues with 2 worker(s)" in capsys.readouterr().err
    assert all(store.get_dialogue(f"d-{i}").scores["sr"].value == 1.0 for i in range(4))
    assert store.scoring_counts()["done"] == 4


def _wait_drained(store, timeout_s: float = 30.0) -> None:
    import time

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        counts = store.scoring_counts()
        if counts["queued"] == 0 and counts["running"] == 0 and counts["done"] > 0:
            return
        time.sleep(0.05)
    pytest.fail(f"scoring queue not drained: {store.scoring_counts()}")
