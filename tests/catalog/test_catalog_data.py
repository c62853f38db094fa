"""The catalogs load completely and parse titles, years, people and entity ids right."""

from __future__ import annotations

import json

import pytest

from arena.catalogs.catalog import CATALOG_DIR, Catalog, CatalogItem, load_catalog, split_name
from arena.dialogue import RecommendedItem


def test_item_and_entity_counts(redial: Catalog, opendialkg: Catalog):
    assert len(redial) == 6567  # 16 entries dropped by the catalog check (assets/catalogs/CLEANING.md)
    assert len(opendialkg) == 3672
    assert len(redial.entity2id) == 24630
    assert len(opendialkg.entity2id) == 12460
    # Every ReDial item is a knowledge-graph entity; ten OpenDialKG names are not.
    assert all(item.entity_id is not None for item in redial)
    assert sum(item.entity_id is None for item in opendialkg) == 10


def test_load_catalog_is_cached_and_rejects_unknown_names():
    assert load_catalog("redial") is load_catalog("redial")
    assert load_catalog("ReDial") is not None
    with pytest.raises(ValueError, match="unknown catalog"):
        load_catalog("movielens")


@pytest.mark.parametrize(
    "name, dataset, title, year",
    [
        ("Pari (1995)", "redial", "Pari", 1995),
        ("Back to the Future", "redial", "Back to the Future", None),
        (
            "The Meyerowitz Stories (New and Selected) (2017)",
            "redial",
            "The Meyerowitz Stories (New and Selected)",
            2017,
        ),
        ("Les Misérables (2012)", "redial", "Les Misérables", 2012),
        ("The Hunger Games (Science Fiction Film)", "opendialkg", "The Hunger Games", None),
        ("The Aviator (Biographical Film) #6", "opendialkg", "The Aviator", None),
        ("W.", "opendialkg", "W.", None),
    ],
)
def test_split_name(name, dataset, title, year):
    assert split_name(name, dataset) == (title, year)


def test_redial_item_fields(redial: Catalog):
    item = redial.get("100030")
    assert item.name == "Friends with Benefits (2011)"
    assert item.title == "Friends with Benefits"
    assert item.year == 2011
    assert item.genres == ("comedy", "romance")
    assert item.people["director"] == ("Will Gluck",)
    assert item.people["star"][:2] == ("Mila Kunis", "Justin Timberlake")
    assert item.plot.startswith("A young man and woman")
    assert item.entity_id == redial.entity2id["Friends with Benefits (2011)"]
    assert item.dataset == "redial"
    assert redial.by_entity_id(item.entity_id) is item
    assert redial.entity_name(item.entity_id) == item.name


def test_opendialkg_item_fields_are_deduplicated(opendialkg: Catalog):
    raw = json.loads((CATALOG_DIR / "opendialkg" / "id2info.json").read_text())["0"]
    item = opendialkg.get("0")
    assert item.title == "Slumdog Millionaire" and item.year == 2008
    assert raw["actor"].count("Anil Kapoor") == 2
    assert item.people["actor"].count("Anil Kapoor") == 1
    assert set(item.people["actor"]) == set(raw["actor"])
    assert item.plot == ""
    assert "Hindi Language" in item.languages
    qualified = opendialkg.find_title("The Hunger Games (Science Fiction Film)")
    assert qualified.name == "The Hunger Games (Science Fiction Film)"
    assert qualified.title == "The Hunger Games"


def test_item_views(redial: Catalog):
    item = redial.find_title("The Matrix (1999)")
    assert item.to_recommended() == RecommendedItem(item_id=item.item_id, title="The Matrix (1999)")
    text = item.describe()
    assert text.startswith("The Matrix (1999).")
    assert "sci-fi" in text and "Keanu Reeves" in text and "\n" not in text
    no_year = redial.find_title("Back to the Future")
    assert no_year.label == "Back to the Future"


def test_items_compare_by_dataset_and_id(redial: Catalog, opendialkg: Catalog):
    item = redial.get("100030")
    assert item == redial.subset(["100030"]).get("100030")
    assert len({item, redial.get("100030")}) == 1
    assert opendialkg.get("0") != redial.get("100030")
    assert isinstance(item, CatalogItem)


def test_lookups_for_unknown_ids(redial: Catalog):
    assert redial.get("no-such-id") is None
    assert redial.by_entity_id(10**9) is None
    assert redial.find_title("") is None
    assert redial.find_title("zzqx qqvv wwkk") is None


def test_find_title_exact_year_and_fuzzy(redial: Catalog, opendialkg: Catalog):
    assert redial.find_title("Halloween (2007)").year == 2007
    assert redial.find_title("Halloween (1978)").year == 1978
    assert redial.find_title("the matrix reloaded").name == "The Matrix Reloaded (2003)"
    assert redial.find_title("Inceptoin").name == "Inception (2010)"
    assert redial.find_title("Police Academy (1984)").name == "Police Academy (1984)"
    # The dataset's own name always wins, even for an item without a year.
    assert redial.find_title("Back to the Future").name == "Back to the Future"
    assert opendialkg.find_title("Slumdog Millionaire").item_id == "0"


def test_subset_keeps_entities_and_dataset(redial: Catalog):
    small = redial.subset(["100030", "100043"], name="tiny")
    assert small.name == "tiny" and small.dataset == "redial" and len(small) == 2
    assert small.find_title("Back to the Future").item_id == "100043"
    assert small.link("I liked Friends with Benefits") == [small.get("100030")]
