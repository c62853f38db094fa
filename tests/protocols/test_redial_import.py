"""`crs-arena import` reads ReDial's release format: films linked to the catalog, the workers'
answers kept, ids kept; a broken file is refused with one line, printed once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from arena.corpus.cli import main as corpus_main
from arena.corpus.loading import load_dialogues
from arena.dialogue import Role, UserKind
from arena.store import Store

SAMPLE = Path(__file__).parent / "data" / "redial_sample.jsonl"
ROOT = Path(__file__).resolve().parents[2]


def test_redial_records_become_dialogues_with_linked_items():
    dialogues = load_dialogues(SAMPLE)
    assert [d.dialogue_id for d in dialogues] == ["15266", "15326", "9819"]
    d = dialogues[0]
    assert d.crs_id == "redial_recommender" and d.user.kind == UserKind.HUMAN and d.user.id == "502"
    assert d.metadata["recommender_worker_id"] == "534"
    first = d.utterances[0]
    # The respondent (worker 534) recommends; "@188047" is written as the film's title.
    assert first.role == Role.AGENT
    assert first.text == ("Hi! What types of movies are you interested in? My favorite movie is "
                          "A Bronx Tale (1993) I love Robert Deniro!")
    assert [(i.item_id, i.title) for i in first.items] == [("188047", "A Bronx Tale (1993)")]
    seeker = d.utterances[3]
    assert seeker.role == Role.USER and seeker.text == "LIKE Jumanji (2017)" and seeker.items == []
    # ReDial's double spaces in titles are gone; the answers of both workers are kept.
    assert d.metadata["movie_mentions"]["178715"] == "The Jungle Book (2016)"
    assert d.metadata["answers"]["seeker"]["197388"] == {"suggested": 1, "seen": 1, "liked": 1}
    assert d.metadata["answers"]["recommender"]["197388"] == {"suggested": 1, "seen": 1, "liked": 0}
    assert all("@" not in u.text for dialogue in dialogues for u in dialogue.utterances)
    assert d.ended and d.end_reason == "imported"


def test_crs_arena_import_loads_a_redial_file(tmp_path, capsys):
    db = tmp_path / "arena.sqlite3"
    assert corpus_main(["import", str(SAMPLE), "--db", str(db)]) == 0
    assert "imported 3 dialogues" in capsys.readouterr().out
    with Store(db) as store:
        stored = store.get_dialogue("15326")
    assert stored is not None and stored.crs_id == "redial_recommender"
    assert any(u.items for u in stored.utterances if u.role == Role.AGENT)


def test_a_broken_redial_file_is_refused_with_one_line_printed_once(tmp_path):
    record = json.loads(SAMPLE.read_text().splitlines()[0])
    record["messages"][2]["senderWorkerId"] = 999
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(record) + "\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    run = subprocess.run([sys.executable, "-m", "arena.corpus", "import", str(bad), "--db", str(tmp_path / "x.db")],
                         capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    assert run.returncode == 2
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert lines == [f"error: cannot import dialogues from {bad}: record 0, conversation ID '15266', field "
                     "'messages[2].senderWorkerId': 999 is neither the initiator nor the respondent; nothing was "
                     "imported"], run.stderr
