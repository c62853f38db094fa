"""The catalog check: conflicting entries are found, fixed, and none is left in the shipped catalogs."""

from __future__ import annotations

import json

from arena.catalogs.catalog import CATALOG_DIR, DATASETS
from arena.catalogs.conflicts import cleaned, conflicts


def shipped() -> dict[str, dict]:
    return {d: json.loads((CATALOG_DIR / d / "id2info.json").read_text(encoding="utf-8")) for d in DATASETS}


def test_the_shipped_catalogs_have_no_conflicts():
    assert [(c.dataset, c.name, c.check) for c in conflicts(shipped())] == []


def test_the_cleaning_report_names_what_changed():
    report = (CATALOG_DIR / "CLEANING.md").read_text(encoding="utf-8")
    for name in ("Emma Stone (2017)", "I, Robot", "Forrest Gump", "Halloweentown"):
        assert name in report


def test_each_kind_of_conflict_is_found_and_fixed():
    plot = "Ten years after his original massacre, the invalid Michael Myers awakens on Halloween Eve."
    catalogs = {
        "redial": {
            "1": {"name": "Emma Stone (2017)", "imdb_id": "tt14295058", "genre": ["drama"]},
            "2": {"name": "Ben Gazzara (1990)", "director": ["Emma Stone"], "star": ["Sam Wu"]},
            "3": {"name": "Halloween 4: The Return of Michael Myers (1988)", "plot": plot, "imdb_id": "tt0095271",
                  "director": ["Dwight H. Little"]},
            "4": {"name": "Nice Day (1988)", "plot": plot, "imdb_id": "tt0095271", "director": ["Dwight H. Little"]},
            "5": {"name": "I, Robot (2004)", "director": ["Alex Proyas"], "star": ["Will Smith"]},
        },
        "opendialkg": {
            "0": {"name": "I, Robot", "year": "1950", "director": ["Alex Proyas"], "actor": ["Kurt Russell"],
                  "writer": ["Isaac Asimov"]},
        },
    }
    found = {(c.dataset, c.item_id, c.check) for c in conflicts(catalogs)}
    assert found == {("redial", "1", "person_as_title"), ("redial", "4", "borrowed_record"),
                     ("opendialkg", "0", "merged_book_film")}
    fixed, _ = cleaned(catalogs)
    assert "4" not in fixed["redial"] and fixed["redial"]["3"]["plot"] == plot
    assert fixed["opendialkg"]["0"]["year"] == "2004" and fixed["opendialkg"]["0"]["actor"] == ["Will Smith"]
    assert "1" not in fixed["redial"] and "2" in fixed["redial"]
    assert conflicts(fixed) == []
