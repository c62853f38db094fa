"""The caches that keep a CRB-CRS / ChatCRS turn short give what the uncached path gives.

- `AllowedItems` (the flags of a conversation's constraints, computed by part) against
  `Constraints.allows` read item by item over the real ReDial catalog;
- the one-text embedding cache of `arena.catalogs.retrieval.encode` against the model run again;
- a catalog's mentions per text and the franchise lists against reading them afresh.
"""

from __future__ import annotations

from dataclasses import fields, replace

import numpy as np
import pytest

from arena.catalogs import retrieval
from arena.catalogs.catalog import Catalog
from arena.reading.allowed import KNOWN_FIELDS, AllowedItems, parts
from arena.reading.constraints import Constraints

F = frozenset
CASES = [
    Constraints(),
    Constraints(kind="series"),
    Constraints(years=(1990, 1999)),
    Constraints(for_children=True),
    Constraints(unwanted_genres=F({"horror", "romance"})),
    Constraints(genres=F({"comedy", "romance"})),
    Constraints(genres=F({"comedy", "horror", "animation"}), any_genre=True),
    Constraints(genres=F({"horror"}), years=(2000, 2100), unwanted_intensity=F({"gore"})),
    Constraints(people=F({"Tom Hanks"}), unwanted_genres=F({"war"})),
    Constraints(people=F({"Tom Hanks", "Meg Ryan"})),
    Constraints(unwanted_people=F({"Adam Sandler", "Jim Carrey"}), genres=F({"comedy"})),
    Constraints(unwanted_words=F({"ghost", "zombi"}), genres=F({"horror"})),
    Constraints(subjects=F({"time travel", "space"}), genres=F({"sci fi"})),
    Constraints(origins=F({"france"})),
    Constraints(makers=F({"Disney"}), for_children=True),
    Constraints(kind="series", genres=F({"comedy"}), unwanted_genres=F({"animation"}), years=(2010, 2100)),
]


@pytest.fixture(scope="module")
def allowed(redial: Catalog) -> AllowedItems:
    return AllowedItems(redial.items)


@pytest.mark.parametrize("constraints", CASES, ids=lambda c: c.describe() or c.genre_words() or str(c.kind))
def test_flags_by_part_are_the_flags_item_by_item(allowed: AllowedItems, redial: Catalog, constraints):
    expected = np.array([constraints.allows(item) for item in redial.items], dtype=bool)
    assert np.array_equal(allowed.flags(constraints), expected)
    assert np.array_equal(allowed.flags(constraints), expected)  # the second time from the cache


def test_every_field_of_the_constraints_is_split_knowingly():
    # A new field: say here how `allows` reads it (on its own, whole, with another field), or the flags
    # fall back to reading every rule item by item on every call.
    assert {f.name for f in fields(Constraints)} <= KNOWN_FIELDS


def test_each_part_keeps_the_kind_and_one_rule():
    constraints = Constraints(kind="series", genres=F({"comedy", "drama"}), any_genre=True,
                              unwanted_genres=F({"horror", "war"}), years=(1990, 1999))
    groups = parts(constraints)
    assert all(p.kind == "series" for group in groups for p in group)
    assert (Constraints(kind="series", unwanted_genres=F({"war"})),) in groups
    # Any one of the genres asked for is enough: one group, either genre's flags will do.
    either = tuple(Constraints(kind="series", genres=F({g})) for g in ("comedy", "drama"))
    assert either in groups
    assert len(groups) == 5  # the kind alone, two ruled-out genres, the years, the genres asked for
    both = parts(replace(constraints, any_genre=False))
    assert (Constraints(kind="series", genres=F({"comedy"})),) in both and len(both) == 6


def test_cached_flags_cannot_be_changed_by_a_caller(allowed: AllowedItems):
    flags = allowed.flags(Constraints(years=(1980, 1989)))
    with pytest.raises(ValueError):
        flags[0] = not flags[0]


def test_a_constraints_field_it_does_not_know_reads_item_by_item(redial: Catalog, monkeypatch):
    from arena.reading import allowed as module

    monkeypatch.setattr(module, "KNOWN_FIELDS", KNOWN_FIELDS - {"makers"})
    fallback = AllowedItems(redial.items[:300])
    constraints = Constraints(genres=F({"drama"}), years=(1990, 2005))
    expected = np.array([constraints.allows(item) for item in redial.items[:300]], dtype=bool)
    assert np.array_equal(fallback.flags(constraints), expected)
    assert not fallback._flags  # nothing cached by part


def test_one_text_embedded_again_is_the_cached_vector(model, monkeypatch):
    monkeypatch.setattr(retrieval, "_ONE_TEXT", type(retrieval._ONE_TEXT)())
    text = "something funny with a dog in it"
    first = retrieval.encode([text])
    assert (1, text) in retrieval._ONE_TEXT
    first[0, 0] += 1.0  # the caller's copy: the cache keeps its own
    again = retrieval.encode([text])
    fresh = retrieval._encode([text], model, 64, 1)
    assert np.array_equal(again, fresh)
    assert again.shape == (1, fresh.shape[1])


def test_texts_in_a_batch_are_not_taken_from_the_one_text_cache(model, monkeypatch):
    monkeypatch.setattr(retrieval, "_ONE_TEXT", type(retrieval._ONE_TEXT)())
    texts = ["a short one", "a much longer message about a heist film set in Rome"]
    retrieval.encode(texts[:1])
    batch = retrieval.encode(texts)
    assert np.array_equal(batch, retrieval._encode(texts, model, 64, 1))
    assert len(retrieval._ONE_TEXT) == 1


TEXTS = ["I loved The Matrix and anything with Keanu Reeves", "something like star wars or alien?",
         "a comedy from the 90s", "", "Have you seen Titanic (1997)? John Carpenter films are great"]


@pytest.mark.parametrize("text", TEXTS)
def test_a_catalog_links_a_text_again_as_it_did_the_first_time(redial: Catalog, text):
    from arena.titles.phrases import match_phrases

    fresh = match_phrases(text, [redial._titles, *redial._entities])
    first = redial.link_spans(text), redial.link_people(text), redial.link_entities(text)
    assert redial._mentions(text) == tuple(fresh)
    assert (redial.link_spans(text), redial.link_people(text), redial.link_entities(text)) == first


def test_franchise_lists_are_read_once_and_handed_out_as_copies(redial: Catalog):
    from crs.franchises import Franchises

    franchises, fresh = Franchises(redial), Franchises(redial)
    star_wars = redial.find_title("Star Wars (1977)")
    first = franchises.franchise(star_wars)
    assert len(first) > 1 and first == fresh._read_franchise(star_wars)
    first.clear()  # the caller's copy
    assert franchises.franchise(star_wars) == fresh._read_franchise(star_wars)
    assert franchises.variants(star_wars) == fresh._read_variants(star_wars)
