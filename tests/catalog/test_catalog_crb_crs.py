"""CRB-CRS end to end: its corpus, retrieval, slot filling, registration; and `python -m crs reply`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena.catalogs.catalog import Catalog, CatalogItem
from arena.dialogue import Dialogue
from arena.llm import FakeProvider, LLMClient
from crs.__main__ import main
from arena.conversation.crs_interface import CRSUnavailable
from crs.crb_crs import CORPUS_PATH, CRBCRS, RecommenderTurn, crb_crs_specs, read_corpus
from crs.registry import CRSRegistry
from crs.reply_check import unshown_titles
from crs.reply_cli import context_dialogue, write_replies

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT.parent / "shared" / "data" / "redial_dialogues" / "valid_data.jsonl"


def no_llm() -> LLMClient:
    return LLMClient(FakeProvider([]))  # an empty script: any call would fail the test


@pytest.fixture(scope="module")
def crb(small_redial: Catalog, retriever) -> CRBCRS:
    spec = crb_crs_specs(no_llm, retriever.cache_dir, catalog_loader=lambda name: small_redial)[0]
    assert spec.name == "crb_crs_redial" and spec.family == "crb_crs" and spec.check() is None
    system = CRSRegistry([spec]).get("crb_crs_redial")
    assert isinstance(system, CRBCRS)
    return system


def test_corpus_is_shipped_with_slots_and_no_written_titles():
    turns = read_corpus()
    assert len(turns) > 3000
    assert {t.slots for t in turns} == {0, 1, 2, 3}
    assert all("@" not in t.response and "@" not in t.context for t in turns)
    assert (CORPUS_PATH.parent / "README.md").read_text().count("CC BY 4.0") >= 1


@pytest.mark.skipif(not SOURCE.exists(), reason="the ReDial dialogues are not in ../shared")
def test_build_script_reproduces_the_shipped_corpus(tmp_path):
    import subprocess
    import sys

    out = tmp_path / "turns.jsonl"
    subprocess.run([sys.executable, "scripts/build_crb_corpus.py", "--out", str(out)], cwd=ROOT, check=True)
    assert out.read_bytes() == CORPUS_PATH.read_bytes()


def test_greeting_gets_a_human_turn_without_items(crb):
    text, items = crb.respond(context_dialogue(["Hi there! How are you?"], crb))
    assert items == [] and text and "<movie_" not in text


def test_preference_gets_a_human_turn_filled_with_the_recommenders_items(crb, small_redial):
    d = context_dialogue(["Hi", "Hello! What do you like?", "I love scary horror movies, any ideas?"], crb)
    text, items = crb.respond(d)
    assert 1 <= len(items) <= 3
    expected = [i.item_id for i in crb.candidates(d)[: len(items)]]
    assert [i.item_id for i in items] == expected
    for shown in items:
        assert shown.title in text and shown.title == small_redial.get(shown.item_id).label
    assert unshown_titles(text, [small_redial.get(i.item_id) for i in items], small_redial) == []
    assert "<movie_" not in text


def test_a_dialogue_never_gets_the_same_turn_twice(crb):
    d = Dialogue(crs_id=crb.name)
    said = []
    for message in ["hello", "hello again", "hello", "hi"]:
        d.add_user(message)
        text, items = crb.respond(d)
        d.add_agent(text, items=items)
        said.append(text)
    assert len(set(said)) == len(said)


def test_check_reports_missing_bm25(monkeypatch):
    import importlib.util

    original = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "bm25s" else original(name, *a))
    problem = crb_crs_specs(no_llm, "/tmp")[0].check()
    assert isinstance(problem, CRSUnavailable) and "bm25s" in problem.reason and "bm25s==" in problem.fix


# -- python -m crs reply --------------------------------------------------------------------
def test_reply_lines_keep_order_and_format(crb, small_redial):
    lines = [
        json.dumps({"dialog_id": "1", "context": ["I want a funny comedy"]}),
        "not json",
        json.dumps({"context": ["Hi", "Hello, what do you like?", "Space movies with aliens"]}),
        json.dumps({"context": []}),
    ]
    import io

    out, errors = io.StringIO(), io.StringIO()
    done, failed = write_replies(crb, io.StringIO("\n".join(lines) + "\n"), out, errors=errors)
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    assert (done, failed) == (4, 2) and len(rows) == 4
    assert set(rows[0]) == {"text", "items"} and set(rows[2]) == {"text", "items"}
    assert rows[0]["text"] and all(isinstance(name, str) for name in rows[0]["items"])
    assert rows[1]["text"] == "" and rows[1]["items"] == [] and "JSON" in rows[1]["error"]
    assert "non-empty list" in rows[3]["error"]
    assert errors.getvalue().startswith("line 2:")
    for row in (rows[0], rows[2]):
        shown = [small_redial.find_title(name) for name in row["items"]]
        assert unshown_titles(row["text"], shown, small_redial) == []


def test_context_roles_alternate_and_end_with_the_person(crb):
    d = context_dialogue(["Hi", "What do you like?", "Comedies"], crb)
    assert [u.role.value for u in d.utterances] == ["USER", "AGENT", "USER"]
    d = context_dialogue(["What do you like?", "Comedies"], crb)
    assert [u.role.value for u in d.utterances] == ["AGENT", "USER"]


def test_reply_command_writes_one_line_per_context(tmp_path, monkeypatch, embedding_cache):
    monkeypatch.setenv("ARENA_CACHE_DIR", str(embedding_cache))
    monkeypatch.setenv("ARENA_LLM_PROVIDER", "fake")
    source = tmp_path / "contexts.jsonl"
    source.write_text(
        "\n".join(json.dumps({"context": c}) for c in (["Hi"], ["I like thrillers"], ["Any good cartoons?"])) + "\n"
    )
    out = tmp_path / "replies.jsonl"
    assert main(["reply", "--crs", "crb_crs_redial", "--input", str(source), "--out", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 3 and all(set(r) == {"text", "items"} and r["text"] for r in rows)
    assert main(["reply", "--crs", "no_such_system", "--input", str(source), "--out", str(out)]) == 1
    assert main(["reply", "--crs", "crb_crs_redial", "--input", str(tmp_path / "missing"), "--out", str(out)]) == 1


def test_list_shows_every_system(capsys, monkeypatch, embedding_cache):
    monkeypatch.setenv("ARENA_CACHE_DIR", str(embedding_cache))
    assert main(["list"]) == 0
    listed = capsys.readouterr().out
    for name in ("chatcrs_redial", "chatcrs_opendialkg", "crb_crs_redial", "kbrd_redial"):
        assert f"  {name} " in listed


def test_age_and_genre_claims_need_the_filled_items_years_and_genres(small_redial):
    from crs.crb_crs import RecommenderTurn, claims_problem

    recent = next(i for i in small_redial if i.year and i.year >= 2005 and i.genres)
    old = next(i for i in small_redial if i.year and i.year < 1990 and i.genres)
    assert "old" in claims_problem(RecommenderTurn("", "It is a classic: <movie_0>", 1), [recent])
    assert claims_problem(RecommenderTurn("", "It is a classic: <movie_0>", 1), [old]) is None
    assert "new" in claims_problem(RecommenderTurn("", "<movie_0> which is a recent film.", 1), [old])
    not_drama = next(i for i in small_redial if i.genres and "drama" not in i.genres and i.year)
    assert "drama" in claims_problem(RecommenderTurn("", "<movie_0> is a good drama", 1), [not_drama])


def test_a_humorous_claim_needs_a_comedy_and_articles_are_not_doubled():
    from crs.crb_crs import claims_problem

    drama = CatalogItem(item_id="9", title="The Notebook", year=2004, genres=("drama", "romance"), people={},
                        plot="", entity_id=None, dataset="redial", name="The Notebook (2004)")
    turn = RecommenderTurn("", "I would suggest <movie_0> which tends to be a humorous one.", 1)
    assert claims_problem(turn, [drama]) is not None
    filled = RecommenderTurn("", "What about the <movie_0> ?", 1).filled([drama])
    assert filled == "What about The Notebook (2004) ?"
