"""Export files: content, filters, pseudonyms, the dataset card and the command line."""

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from arena.dialogue import Dialogue, Feedback, Score, UserInfo, UserKind, Vote
from arena.corpus.bundle import ExportFilter, export_bundle
from arena.store import Store
from arena.corpus.cli import main as export_main

RAW_ID = "session-secret-raw-id-12345"


def make(crs, kind="human", sentiment="satisfied", user=RAW_ID):
    details = {"email": "x@y.z"} if kind == "human" else {"goal": "a comedy"}
    d = Dialogue(crs_id=crs, user=UserInfo(kind=UserKind(kind), id=user, details=details))
    d.add_user("I like sci-fi")
    d.add_agent("Try this", items=[])
    d.feedback = Feedback(sentiment=sentiment, comment="nice")
    d.end("feedback")
    return d


@pytest.fixture
def store(tmp_path):
    store = Store(tmp_path / "arena.sqlite3")
    a, b = make("alpha"), make("beta", sentiment="frustrated")
    store.save_battle(a, b, Vote(battle_id="battle1", dialogue_a=a.dialogue_id, dialogue_b=b.dialogue_id,
                                 crs_a="alpha", crs_b="beta", choice="A", comment="alpha was better",
                                 user_id=RAW_ID))
    sim = make("gamma", kind="simulator", user="sim-run-1")
    store.save_dialogue(sim)
    store.save_scores(a.dialogue_id, {
        "rdl": Score(value=0.75, scorer="rdl", version="1"),
        "core.overall": Score(value=None, scorer="core", version="1", error="judge down"),
    })
    yield store
    store.close()


def read_all(folder):
    return "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in folder.iterdir() if p.is_file())


def test_bundle_has_every_file_and_agrees(store, tmp_path):
    result = export_bundle(store, tmp_path / "out", salt="s", zip_name="all.zip")
    assert result.counts == {"dialogues": 3, "votes": 1, "scores": 2}
    records = [json.loads(line) for line in result.files["dialogues"].read_text().splitlines()]
    assert len(records) == 3
    by_agent = {r["agent"]["id"]: r for r in records}
    assert by_agent["alpha"]["metadata"]["vote"]["result"] == "win"
    assert by_agent["beta"]["metadata"]["vote"]["result"] == "lose"
    assert by_agent["alpha"]["metadata"]["scores"] == {"core.overall": None, "rdl": 0.75}
    assert by_agent["alpha"]["metadata"]["sentiment"] == "satisfied"
    assert by_agent["alpha"]["conversation"][0]["participant"] == "USER"

    with open(result.files["votes"], newline="") as fh:
        votes = list(csv.DictReader(fh))
    assert len(votes) == 1 and votes[0]["winner"] == "alpha" and votes[0]["comment"] == "alpha was better"
    assert votes[0]["user_id"] == by_agent["alpha"]["user"]["id"]  # same pseudonym everywhere

    scores = pd.read_parquet(result.files["scores_parquet"])
    assert sorted(scores["metric"]) == ["core.overall", "rdl"]
    assert scores.set_index("metric").loc["core.overall", "value"] != scores.set_index("metric").loc[
        "core.overall", "value"]  # unscored is NaN, never 0
    csv_scores = pd.read_csv(result.files["scores_csv"])
    assert csv_scores.set_index("metric").loc["rdl", "value"] == 0.75
    assert result.files["zip"].stat().st_size > 0

    card = result.files["card"].read_text()
    from huggingface_hub import DatasetCard

    metadata = DatasetCard(card).data  # the Hub reads the front matter as the dataset's metadata
    assert card.startswith("---\n") and metadata.license == "cc-by-4.0" and metadata.language == ["en"]
    assert metadata.size_categories == ["n<1K"] and "conversational-recommendation" in metadata.tags
    assert "dialogues: 3 (2 with people, 1 with simulators)" in card
    assert "battle votes: 1 (A: 1, B: 0, tie: 0, both bad: 0)" in card
    for name in ("dialogues.jsonl", "votes.csv", "scores.parquet", "`choice`", "CC BY 4.0"):
        assert name in card


def test_user_ids_are_pseudonymised_everywhere(store, tmp_path):
    result = export_bundle(store, tmp_path / "out", salt="s")
    text = read_all(result.folder)
    assert RAW_ID not in text
    assert "x@y.z" not in text  # free-form details of people are dropped


def test_filters_apply_to_every_file(store, tmp_path):
    human = export_bundle(store, tmp_path / "h", ExportFilter(user_kind="human"), salt="s")
    assert human.counts == {"dialogues": 2, "votes": 1, "scores": 2}
    sims = export_bundle(store, tmp_path / "s", ExportFilter(user_kind="simulator"), salt="s")
    assert sims.counts == {"dialogues": 1, "votes": 0, "scores": 0}
    gamma = export_bundle(store, tmp_path / "g", ExportFilter(crs_ids=("gamma",)), salt="s")
    assert gamma.counts["dialogues"] == 1 and gamma.counts["votes"] == 0
    beta = export_bundle(store, tmp_path / "b", ExportFilter(crs_ids=("beta",)), salt="s")
    assert beta.counts == {"dialogues": 1, "votes": 1, "scores": 0}
    assert "systems: beta" in beta.files["card"].read_text()
    with pytest.raises(ValueError):
        ExportFilter(user_kind="robot")


def test_command_line(store, tmp_path, capsys):
    out = tmp_path / "cli"
    code = export_main(["export", "--db", str(store.path), "--out", str(out), "--crs", "alpha",
                        "--crs", "beta", "--user-kind", "human", "--zip"])
    assert code == 0
    assert "wrote 2 dialogues, 1 votes and 2 scores" in capsys.readouterr().out
    assert sorted(p.name for p in out.iterdir()) == [
        "README.md", "crs-arena-corpus.zip", "dialogues.json", "dialogues.jsonl", "scores.csv", "scores.parquet",
        "votes.csv"]
    assert export_main(["export", "--db", str(tmp_path / "missing.sqlite3"), "--out", str(out)]) == 2


def test_python_m_evaluators_export(store, tmp_path):
    root = Path(__file__).resolve().parents[2]
    out = tmp_path / "via-module"
    env = {**os.environ, "ARENA_DB": str(store.path), "HF_HUB_OFFLINE": "1"}
    res = subprocess.run([sys.executable, "-m", "evaluators", "export", "--out", str(out), "--user-kind",
                          "simulator"], cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert "wrote 1 dialogues, 0 votes and 0 scores" in res.stdout
    assert len((out / "dialogues.jsonl").read_text().splitlines()) == 1
