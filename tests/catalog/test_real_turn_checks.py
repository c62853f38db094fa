"""The strict checks of the real-user benchmark (benchmarks/real_turn_checks.py): what the catalog
record cannot show never counts as fitting, and a heading's stray word counts as off-vocabulary."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from arena.catalogs.catalog import CATALOG_DIR, CatalogItem

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import real_turn_checks as checks  # noqa: E402

REDIAL = str(CATALOG_DIR / "redial" / "id2info.json")


def item(title, year, genres, plot="", people=None, dataset="redial", item_id="1", languages=()):
    return CatalogItem(item_id=item_id, title=title, year=year, genres=tuple(genres), people=people or {},
                       plot=plot, entity_id=None, dataset=dataset, name=f"{title} ({year})",
                       languages=languages)


def no_titles(_title):
    return None


def test_an_unknown_year_does_not_fit_an_era():
    undated = item("Somewhere", None, ["drama"])
    assert checks.misfits(undated, {"era": [2010, 2100]}, no_titles) == ["era"]
    assert checks.misfits(item("Somewhere", 2010, ["drama"]), {"era": [2010, 2100]}, no_titles) == []


def test_topic_words_match_whole_words_only():
    careers = item("Careers", 2001, ["drama"], plot="A scar on his career.")
    assert checks.misfits(careers, {"topic": ["car"]}, no_titles) == ["topic"]
    racer = item("Racer", 2001, ["action"], plot="Two cars race across the desert.")
    assert checks.misfits(racer, {"topic": ["car"]}, no_titles) == []
    digs = item("Digs", 1990, ["adventure"], plot="An archaeologist opens a tomb.")
    assert checks.misfits(digs, {"topic": ["archaeolog"]}, no_titles) == []


def test_a_liked_title_is_no_answer_to_like_it_and_a_shared_genre_is_needed():
    heat = item("The Heat", 2013, ["action", "comedy", "crime"], item_id="h")
    find = {"The Heat (2013)": heat}.get
    assert checks.misfits(heat, {"like": ["The Heat (2013)"]}, find) == ["like"]
    assert checks.misfits(item("Spy", 2015, ["action", "comedy"]), {"like": ["The Heat (2013)"]}, find) == []
    assert checks.misfits(item("Amour", 2012, ["drama"]), {"like": ["The Heat (2013)"]}, find) == ["like"]
    # A title that only looks like the liked one ("Heat" for "like The Heat") is no answer either.
    heat_1995 = item("Heat", 1995, ["action", "crime"])
    assert checks.misfits(heat_1995, {"like": ["The Heat (2013)"]}, find) == ["like"]


def test_an_origin_the_record_does_not_state_does_not_fit():
    unstated = item("Snatch", 2000, ["comedy", "crime"], plot="Thieves and a stolen diamond.")
    assert checks.misfits(unstated, {"origin": ["uk"]}, no_titles) == ["origin"]
    stated = item("Snatch", 2000, ["comedy"], dataset="opendialkg", languages=("British English",))
    assert checks.misfits(stated, {"origin": ["uk"]}, no_titles) == []


@pytest.mark.skipif(not Path(REDIAL).is_file(), reason="needs the ReDial catalog")
def test_a_stray_word_in_a_heading_is_off_the_vocabulary():
    white = "Here are some picks about white:\n1. Get Out (2017)\n2. White House Down (2013)"
    assert checks.off_vocabulary(white, ["Get Out", "White House Down"], [], REDIAL) == ["white"]
    style = "Here are some black and white picks:\n1. Casablanca (1942)"
    assert checks.off_vocabulary(style, ["Casablanca"], [], REDIAL) == []
    person = "Here are some comedy picks starring Tom Hanks:\n1. Big (1988)"
    assert checks.off_vocabulary(person, ["Big"], [], REDIAL) == []


def test_the_gold_names_sources_and_keeps_no_text():
    gold = json.loads((ROOT / "benchmarks" / "conversations" / "real_user_turns_v1.json").read_text())
    turns = [t for c in gold["conversations"] for t in c["turns"]]
    assert all("user" not in t and {"corpus", "dialogue", "utterance"} <= set(t["source"]) for t in turns)
    assert sum(t["act"] in ("request", "refine") for t in turns) >= 100
    assert {c["split"] for c in gold["conversations"]} == {"tune", "heldout"}
    ids = [c["id"] for c in gold["conversations"]]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("text", [
    "Saw (2004) who fit the bill",
    "Alien (1979) would this fit you ?",
    "Bright (2017) really good also Salt (2010) is good",
    "Caddyshack (1980) is a fav and Icarus (2017)",
    "Ok, so what about It (1990) hat movie is pretty great",
    "ok great The Boondock Saints (1999) was amazing how about Code of Honor (2016) have you seen it",
    "Oh.. The Holiday (2006)",
    "Maybe not as good as Avenger (2006) but still definitely worth a watch",
    "my last recommendation for the day is Pulp Fiction (1994)",
])
def test_pieces_that_do_not_join_read_as_unnatural(text):
    assert checks.badly_joined(text)


@pytest.mark.parametrize("text", [
    "Do you like Alien (1979) and Interstellar (2014)",
    "You might like Avenger (2006) or The Adventures of Milo and Otis (1986).",
    "Have you seen Indiana Jones and the Temple of Doom (1984)",
    "Some of my favorite movies are Saw (2004) , The Amityville Horror (2005) , and Big (1988) .",
    "Oh, okay, well how about West Side Story (1961)",
])
def test_replies_that_join_are_not_flagged(text):
    assert checks.badly_joined(text) == []
