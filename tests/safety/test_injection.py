"""Stored text cannot inject (issue 26): system ids validated on import, researcher pages and the dataset
card escape stored text, CSV/Parquet cells beginning with = + - @ are neutralised (OWASP)."""

from __future__ import annotations

import csv

import pandas as pd
import pytest

from arena.corpus.bundle import export_bundle
from arena.corpus.dialoguekit import DialogueImportError
from arena.corpus.loading import load_dialogues
from arena.dialogue import Dialogue, Feedback, Score, UserInfo, Vote
from arena.store import Store
from arena.text_safety import escape_markdown, neutralise_cell, valid_system_id

IMG = '<img src="http://attacker.example/x.png">'


def record(agent_id):
    return {"conversation ID": "c1", "agent": {"id": agent_id}, "user": {"id": "p"},
            "conversation": [{"participant": "USER", "utterance": "hi", "utterance ID": "c1-0"}],
            "metadata": {"sentiment": "satisfied"}}


@pytest.mark.parametrize("bad", [IMG, "![x](http://attacker.example/y.png)", "kbrd redial", "a|b", ""])
def test_import_refuses_a_system_id_with_markup(bad):
    with pytest.raises(DialogueImportError, match="agent.id"):
        load_dialogues([record(bad)], default_crs_id="x")
    own = Dialogue(crs_id="ok", user=UserInfo(id="p")).model_dump(mode="json") | {"crs_id": bad}
    with pytest.raises(DialogueImportError, match="crs_id"):
        load_dialogues([own])


def test_ordinary_ids_import():
    for good in ("kbrd_redial", "crb_crs_redial", "gpt-4o.mini", "unknown"):
        assert valid_system_id(good)
    assert load_dialogues([record("kbrd_redial")])[0].crs_id == "kbrd_redial"


def test_escape_markdown_leaves_no_tag_or_link():
    out = escape_markdown(IMG + " ![x](http://a.example/y.png) | col")
    assert "<img" not in out and "](" not in out and "\\|" in out


@pytest.mark.parametrize("cell", ["=1+1", "+SUM(A1)", "-2+3", "@cmd", "\t=x", "\r=x"])
def test_formula_cells_are_neutralised(cell):
    assert neutralise_cell(cell) == "'" + cell
    assert neutralise_cell("fine =1") == "fine =1" and neutralise_cell(-2.5) == -2.5


def test_exported_files_and_card_are_inert(tmp_path):
    store = Store(tmp_path / "arena.sqlite3")
    # A system id stored before validation existed (or written by another tool) is still escaped on the card.
    a = Dialogue(crs_id=IMG, user=UserInfo(id="u"))
    b = Dialogue(crs_id="beta", user=UserInfo(id="u"))
    for d in (a, b):
        d.add_user("hi")
        d.add_agent("ok")
        d.feedback = Feedback(sentiment="satisfied")
    a.scores["rdl"] = Score(value=None, scorer="rdl", version="1", error="=HYPERLINK(\"http://x\")")
    store.save_battle(a, b, Vote(battle_id="b1", dialogue_a=a.dialogue_id, dialogue_b=b.dialogue_id, crs_a=IMG,
                                 crs_b="beta", choice="A", comment='=HYPERLINK("http://attacker.example","click")',
                                 user_id="u"))
    result = export_bundle(store, tmp_path / "export")
    files = {p.name: p for p in result.paths()}
    with open(files["votes.csv"], newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert rows[0]["comment"].startswith("'=HYPERLINK")
    for path in (files["votes.csv"], files["scores.csv"]):
        with open(path, newline="", encoding="utf-8") as fh:
            for row in csv.reader(fh):
                assert not any(cell.startswith(("=", "+", "@")) for cell in row), row
    scores = pd.read_parquet(files["scores.parquet"])
    assert scores["error"].dropna().str.startswith("'=").all()
    card = next(p for name, p in files.items() if name.endswith(".md")).read_text(encoding="utf-8")
    assert "<img" not in card and "attacker.example/x.png\"" not in card
    store.close()
