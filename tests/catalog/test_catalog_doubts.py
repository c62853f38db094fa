"""Facts the catalog check withholds (they belong to another work) are never stated, and the reply says
what the entry does hold; series and albums are not offered unasked."""

from __future__ import annotations

from arena.catalogs.catalog import CATALOG_DIR, load_catalog
from arena.catalogs.conflicts import cleaned, conflicts
from arena.reading.constraints import Constraints
from crs.item_answers import answer


def _labelled(catalog, label):
    return next(item for item in catalog if item.label == label)


def _neighbours(count: int, first: int, year: int) -> dict[str, dict]:
    """Films numbered one after another, all from about `year`: what says when a number was given out."""
    return {f"n{i}": {"name": f"Film Number {i} ({year + i % 3})", "imdb_id": f"tt{first + i:07d}",
                      "genre": ["drama"], "director": [f"Person {i}"]} for i in range(count)}


def test_an_original_holding_its_remakes_record_loses_the_record_and_keeps_its_year():
    records = _neighbours(120, 1178000, 2009)
    records["old"] = {"name": "Dream Street (1984)", "imdb_id": "tt1179056", "genre": ["horror"],
                      "director": ["Remake Director"], "star": ["Remake Star"], "plot": "A remake's plot."}
    records["new"] = {"name": "Dream Street (2010)", "imdb_id": "tt1179056", "genre": ["horror"],
                      "director": ["Remake Director"], "star": ["Remake Star"], "plot": "A remake's plot."}
    found = {c.item_id: c.check for c in conflicts({"redial": records})}
    assert found == {"old": "later_record"}
    fixed, _ = cleaned({"redial": records})
    old, new = fixed["redial"]["old"], fixed["redial"]["new"]
    assert old["name"] == "Dream Street (1984)"
    assert not old["director"] and not old["star"] and not old["plot"]
    assert set(old["withheld"]) == {"director", "star", "plot", "genre"}
    assert new["director"] == ["Remake Director"] and "withheld" not in new
    assert conflicts(fixed) == []


def test_a_record_shared_with_another_title_stays_with_the_title_whose_year_fits():
    records = _neighbours(120, 81000, 1981)
    shared = {"imdb_id": "tt0082971", "genre": ["action"], "director": ["Ark Director"], "plot": "Ark plot."}
    records["ark"] = {"name": "Raiders of the Ark (1981)", **shared}
    records["toy"] = {"name": "Toy Bricks Raiders of the Lost Brick", **shared}
    records["sequel"] = {"name": "Raiders of the Ark 2", **shared}
    found = {c.item_id: c.check for c in conflicts({"redial": records})}
    assert set(found) == {"toy", "sequel"} and found["sequel"] == "shared_record"
    fixed, _ = cleaned({"redial": records})
    assert fixed["redial"]["ark"]["director"] == ["Ark Director"]
    assert not (fixed["redial"].get("toy") or {}).get("director")
    assert not fixed["redial"]["sequel"]["director"]


def test_an_entry_merging_an_original_and_its_remake_keeps_only_its_own_director():
    redial = {"1": {"name": "The Mist Town (1980)", "director": ["First Maker"], "star": ["Old Star"]},
              "2": {"name": "The Mist Town (2005)", "director": ["Second Maker"], "star": ["New Star"]}}
    opendialkg = {"9": {"name": "The Mist Town", "year": "1980", "director": ["Second Maker", "First Maker"],
                        "actor": ["New Star", "Old Star"], "genre": ["Horror"]}}
    found = {(c.item_id, c.check) for c in conflicts({"redial": redial, "opendialkg": opendialkg})}
    assert found == {("9", "merged_remake")}
    fixed, _ = cleaned({"redial": redial, "opendialkg": opendialkg})
    entry = fixed["opendialkg"]["9"]
    assert entry["director"] == ["First Maker"] and entry["actor"] == [] and "director" in entry["withheld"]


def test_co_directors_are_one_films_credit():
    redial = {"1": {"name": "Snow Land (2013)", "director": ["Ann Maker", "Bob Maker"]}}
    opendialkg = {"9": {"name": "Snow Land", "year": "2013", "director": ["Ann Maker", "Bob Maker"]}}
    assert conflicts({"redial": redial, "opendialkg": opendialkg}) == []


def test_a_year_one_off_or_later_is_set_from_the_films_record_and_a_novels_writer_withheld():
    redial = {"1": {"name": "Old Dog (1957)", "director": ["Rob Maker"], "writer": ["Fred Writer"]},
              "2": {"name": "Last Days (1999)", "director": ["Pete Maker"], "writer": ["Andy Writer"]}}
    opendialkg = {"8": {"name": "Old Dog", "year": "1956", "director": ["Rob Maker (Director)"]},
                  "9": {"name": "Last Days", "year": "2015", "director": ["Pete Maker"],
                        "writer": ["Andy Writer", "Sue Novelist"]}}
    fixed, found = cleaned({"redial": redial, "opendialkg": opendialkg})
    assert {(c.item_id, c.check) for c in found} == {("8", "merged_year"), ("9", "merged_year")}
    assert fixed["opendialkg"]["8"]["year"] == "1957"
    last_days = fixed["opendialkg"]["9"]
    assert last_days["year"] == "1999" and last_days["writer"] == ["Andy Writer"]


def test_the_shipped_catalogs_no_longer_hold_the_errors_seen_in_replies():
    redial, opendialkg = load_catalog("redial"), load_catalog("opendialkg")
    nightmare = _labelled(redial, "A Nightmare on Elm Street (1984)")
    assert "Samuel Bayer" not in str(dict(nightmare.people)) and "director" in nightmare.withheld
    assert "Samuel Bayer" in _labelled(redial, "A Nightmare on Elm Street (2010)").people["director"]
    assert "Emma Watson" in _labelled(redial, "Beauty and the Beast (2017)").people["star"]
    assert not _labelled(redial, "Beauty and the Beast (1992)").people
    assert "musical" not in _labelled(redial, "Sunset Boulevard (1950)").genres
    assert "documentary" not in _labelled(redial, "Goal! (2005)").genres
    lego = next(i for i in redial if i.title.startswith("Lego Indiana Jones"))
    assert "Steven Spielberg" not in str(dict(lego.people))
    assert _labelled(opendialkg, "Old Yeller (1957)")
    end_of_days = _labelled(opendialkg, "End of Days (1999)")
    assert "Susan Ee" not in end_of_days.people.get("writer", ())
    fog = _labelled(opendialkg, "The Fog (1980)")
    assert fog.people["director"] == ("John Carpenter",) and not fog.people.get("actor")


def test_answers_say_what_is_known_instead_of_a_withheld_fact():
    redial = load_catalog("redial")
    nightmare = _labelled(redial, "A Nightmare on Elm Street (1984)")
    text, _ = answer("director", [nightmare])
    assert "Samuel Bayer" not in text and "can't vouch" in text and "1984" in text
    text, _ = answer("stars", [nightmare])
    assert "Rooney Mara" not in text and "can't vouch" in text
    text, _ = answer("genres", [_labelled(redial, "Sunset Boulevard (1950)")])
    assert "musical" not in text and "can't vouch" in text


def test_series_and_albums_are_offered_only_when_asked_for():
    opendialkg = load_catalog("opendialkg")
    series = _labelled(opendialkg, "Ugly Betty")
    album = _labelled(opendialkg, "1984")
    assert series.kind == "series" and album.kind == "other"
    assert not Constraints().allows(series) and Constraints(kind="series").allows(series)
    assert not Constraints().allows(album)
    assert Constraints().allows(_labelled(opendialkg, "Old Yeller (1957)"))


def test_the_report_counts_and_names_what_changed():
    report = (CATALOG_DIR / "CLEANING.md").read_text(encoding="utf-8")
    for name in ("A Nightmare on Elm Street (1984)", "Sunset Boulevard (1950)", "Old Yeller", "The Fog",
                 "later_record", "shared_record", "merged_remake", "merged_year", "entries changed"):
        assert name in report


def test_a_second_director_behind_a_wrong_year_takes_his_cast_with_him():
    redial = {"1": {"name": "The Step Parent (1987)", "director": ["Joe Maker"], "writer": ["W One"]}}
    opendialkg = {"9": {"name": "The Step Parent", "year": "2009", "director": ["Nel Maker", "Joe Maker"],
                        "actor": ["New Face"], "genre": ["Thriller"]}}
    fixed, found = cleaned({"redial": redial, "opendialkg": opendialkg})
    entry = fixed["opendialkg"]["9"]
    assert entry["year"] == "1987" and entry["director"] == ["Joe Maker"] and entry["actor"] == []
    assert {"director", "actor", "genre"} <= set(entry["withheld"])


def test_no_reply_states_a_withheld_fact_whoever_wrote_it():
    from crs.reply_check import enforce_shown_titles

    redial = load_catalog("redial")
    original = _labelled(redial, "A Nightmare on Elm Street (1984)")
    assert "Samuel Bayer" in original.withheld_values["director"]
    text = "A Nightmare on Elm Street (1984) was directed by Samuel Bayer. It is a classic of its kind."
    kept = enforce_shown_titles(text, [original], redial, fallback="")
    assert "Samuel Bayer" not in kept and "classic of its kind" in kept
    remake = _labelled(redial, "A Nightmare on Elm Street (2010)")
    both = "A Nightmare on Elm Street (2010) was directed by Samuel Bayer."
    assert "Samuel Bayer" in enforce_shown_titles(both, [original, remake], redial)
    sunset = _labelled(redial, "Sunset Boulevard (1950)")
    assert "musical" not in enforce_shown_titles("Sunset Boulevard (1950) is a musical.", [sunset], redial)
