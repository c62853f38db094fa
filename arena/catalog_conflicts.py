"""Catalog entries whose title, year, people or plot conflict, and how each is put right.

The iEvaLM copies of the ReDial and OpenDialKG catalogs join a dataset's title to
a record looked up elsewhere, and some joins went wrong. Checks, on the raw
`id2info.json` records (dataset -> {item id: record}):

- person_as_title: the title is a person of the catalog and the entry has no people
  of its own ("Emma Stone (2017)"): no film at all. Fix: the entry is dropped.
- doubled_year: a year written twice ("(2007) (2007)"). Fix: one.
- borrowed_record (ReDial): entries sharing one IMDb record (or one plot) under
  titles that are not two names of one film ("Enigma (2009)" with Harry Potter's record,
  "Halloweentown" with Halloween 6's plot). The record belongs to the title whose words
  its plot bears out best; the others are dropped (their own record is not in the catalog).
- year_after_record (ReDial): a year later than IMDb had given out its record's
  number by ("Sister (2015)" with a 1995 film's record). Fix: dropped.
- merged_book_film (OpenDialKG): a film entry whose year or cast belong to another
  record: ReDial has the same title by the same director with another year ("I,
  Robot" 1950, the novel's year, directed by Alex Proyas); when its cast also shares
  nobody with ReDial's stars ("Forrest Gump" 1986 starring Kurt Russell) the cast came
  from the other record too. Fix: ReDial's year (and stars).

`conflicts(records)` lists them; `cleaned(records)` returns fixed copies and the list.
"""

from __future__ import annotations

import copy
import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Mapping, Optional

from rapidfuzz import fuzz

from arena.titles.phrases import FUNCTION_WORDS, normalize

WITHHOLDING = ("later_record", "shared_record", "merged_remake", "merged_year")  # see arena.catalog_doubts

_YEAR = re.compile(r"\s*\((1[89]\d\d|20\d\d)\)")
_DOUBLED_YEAR = re.compile(r"\((1[89]\d\d|20\d\d)\)\s*\(\1\)")
RECORD_FIELDS = ("plot", "director", "writer", "star", "actor", "genre", "imdb_id")
YEAR_SLACK = 9  # films are registered years before they come out (Jurassic World in 2004, Wonder Woman in 2005)


@dataclass(frozen=True)
class Conflict:
    dataset: str
    item_id: str
    name: str
    check: str
    detail: str
    fix: str


def title_of(name: str) -> str:
    return _YEAR.sub("", name).strip()


def year_of(name: str, record: Mapping) -> Optional[int]:
    if str(record.get("year") or "").isdigit():
        return int(record["year"])
    match = _YEAR.search(name)
    return int(match.group(1)) if match else None


def _people(record: Mapping) -> set[str]:
    return {n for role in ("director", "writer", "star", "actor") for n in record.get(role) or ()}


def _words(text: str) -> set[str]:
    """Content words, plural and possessive "s" cut ("Angry Birds" / "Angry Bird" agree)."""
    words = normalize(text.replace("&", " and ").replace("'s", "")).split()
    return {w[:-1] if len(w) > 3 and w.endswith("s") else w for w in words
            if w not in FUNCTION_WORDS and not w.isdigit()}


def _owner_score(name: str, record: Mapping) -> float:
    """How well the record's plot bears out the title: the share of the title's words in it."""
    words = _words(title_of(name))
    plot = _words(record.get("plot") or "")
    return len(words & plot) / len(words) if words else 0.0


def _person_as_title(dataset: str, records: Mapping[str, Mapping]) -> list[Conflict]:
    people = set().union(*(_people(r) for r in records.values()))
    out = []
    for item_id, record in records.items():
        title = title_of(record["name"])
        has_record = any(record.get(f) for f in RECORD_FIELDS)
        if title in people and has_record and not (record.get("director") or record.get("star") or record.get("actor")):
            out.append(Conflict(dataset, item_id, record["name"], "person_as_title",
                                f"{title!r} is a person in the catalog and the entry lists no people",
                                "entry dropped"))
    return out


def _doubled_year(dataset: str, records: Mapping[str, Mapping]) -> list[Conflict]:
    out = []
    for item_id, record in records.items():
        name = record["name"]
        if _DOUBLED_YEAR.search(name) or (str(record.get("year") or "") and _YEAR.search(name)
                                           and year_of(name, {}) != year_of(name, record)):
            out.append(Conflict(dataset, item_id, name, "doubled_year",
                                f"year written twice or twice differently (record year {record.get('year')})",
                                "one year kept (the record's)"))
    return out


def _borrowed_records(dataset: str, records: Mapping[str, Mapping]) -> list[Conflict]:
    groups: dict[str, list[str]] = defaultdict(list)
    for item_id, record in records.items():
        if record.get("withheld"):
            continue  # its borrowed fields are already emptied (arena.catalog_doubts)
        if record.get("imdb_id"):
            groups["imdb " + record["imdb_id"]].append(item_id)
        if record.get("plot") and len(record["plot"]) > 40:
            groups["plot " + record["plot"]].append(item_id)
    flagged: dict[str, Conflict] = {}
    for key, ids in groups.items():
        titles = {" ".join(sorted(_words(title_of(records[i]["name"])))) for i in ids}
        if len(ids) < 2 or len(titles) < 2:
            continue
        scores = {i: _owner_score(records[i]["name"], records[i]) for i in ids}
        best = max(scores.values())
        owners = [i for i in ids if scores[i] == best]
        owner_titles = {" ".join(sorted(_words(title_of(records[i]["name"])))) for i in owners}
        if best == 0 or len(owner_titles) > 1:
            continue  # the plot bears out no title, or two equally: left as it is
        owner = records[owners[0]]["name"]
        for i in ids:
            if i not in owners and i not in flagged and not _variant(records[i]["name"], owner):
                what = "IMDb record" if key.startswith("imdb") else "plot"
                flagged[i] = Conflict(dataset, i, records[i]["name"], "borrowed_record",
                                      f"shares its {what} with {owner!r}, whose title the plot bears out",
                                      "entry dropped")
    return list(flagged.values())


def _variant(name: str, other: str) -> bool:
    """Two names of one film: "Anchorman" / "Anchorman: The Legend of Ron Burgundy", "Killer Klowns" /
    "Killer Clowns"."""
    a, b = _words(title_of(name)), _words(title_of(other))
    return a <= b or b <= a or fuzz.ratio(normalize(title_of(name)), normalize(title_of(other))) >= 85


def _imdb_number(record: Mapping) -> Optional[int]:
    match = re.fullmatch(r"tt(\d+)", str(record.get("imdb_id") or ""))
    return int(match.group(1)) if match else None


def _year_after_record(dataset: str, records: Mapping[str, Mapping]) -> list[Conflict]:
    """A year later than the latest year among the records numbered below it (plus slack): IMDb
    numbers its records in the order it creates them, so a 2007 film cannot hold a 1999 number."""
    rows = sorted((n, year_of(r["name"], r), i) for i, r in records.items()
                  if (n := _imdb_number(r)) is not None and year_of(r["name"], r) is not None)
    out = []
    for index, (number, year, item_id) in enumerate(rows):
        # the 90th percentile year of the 200 records numbered closest: what that number stood for
        window = sorted(y for _, y, _ in rows[max(0, index - 100):index + 100])
        if len(window) < 50:
            continue  # too few neighbours to say what the number stood for
        typical = window[int(0.9 * (len(window) - 1))]
        if number < 100000 or year <= typical + YEAR_SLACK:
            continue
        out.append(Conflict(dataset, item_id, records[item_id]["name"], "year_after_record",
                            f"year {year} but its IMDb record tt{number:07d} dates from about {typical}",
                            "entry dropped"))
    return out


def _merged_book_film(dataset: str, records: Mapping[str, Mapping],
                      reference: Mapping[str, Mapping]) -> list[Conflict]:
    """Only an earlier year is taken for the book's (a later one may be a remake by the same
    director, as Funny Games 2007 is), and only from a ReDial entry without conflicts of its own."""
    by_title = _reference_titles(reference)
    out = []
    for item_id, record in records.items():
        directors = set(record.get("director") or ())
        if not directors:
            continue
        for other in by_title.get(normalize(title_of(record["name"])), ()):
            if not directors & set(other.get("director") or ()):
                continue
            year, other_year = year_of(record["name"], record), year_of(other["name"], other)
            stars = set(other.get("star") or ())
            cast = set(record.get("actor") or ())
            if year and other_year and year < other_year - 1:
                out.append(Conflict(dataset, item_id, record["name"], "merged_book_film",
                                    f"year {year}, but {other['name']} by the same director is from {other_year}",
                                    f"year set to {other_year}" + ("; cast set to ReDial's stars"
                                                                   if stars and cast and not stars & cast else "")))
            break
    return out


def _reference_titles(reference: Mapping[str, Mapping]) -> dict[str, list[Mapping]]:
    """ReDial's entries by title, less those whose record is borrowed or whose year is after it."""
    doubtful = {c.item_id for c in _borrowed_records("redial", reference) + _year_after_record("redial", reference)}
    by_title: dict[str, list[Mapping]] = defaultdict(list)
    for item_id, record in reference.items():
        if item_id not in doubtful:
            by_title[normalize(title_of(record["name"]))].append(record)
    return by_title


def conflicts(catalogs: Mapping[str, Mapping[str, Mapping]]) -> list[Conflict]:
    """Every conflict in the catalogs (dataset -> {item id: record})."""
    from arena.catalog_doubts import opendialkg_doubts, redial_doubts

    out = []
    for dataset, records in catalogs.items():
        found = _person_as_title(dataset, records) + _doubled_year(dataset, records)
        if dataset == "redial":
            found += _borrowed_records(dataset, records) + _year_after_record(dataset, records)
        elif "redial" in catalogs:
            found += _merged_book_film(dataset, records, catalogs["redial"])
        # An entry is fixed one way a round: a dropped entry needs no credits withheld, and a
        # year put right first tells which of two directors made the entry's film.
        flagged = {c.item_id for c in found}
        if dataset == "redial":
            found += [c for c in redial_doubts(records) if c.item_id not in flagged]
        elif "redial" in catalogs:
            found += [c for c in opendialkg_doubts(records, catalogs["redial"]) if c.item_id not in flagged]
        out += found
    return out


def cleaned(catalogs: Mapping[str, Mapping[str, Mapping]], rounds: int = 5) -> tuple[dict[str, dict], list[Conflict]]:
    """Fixed copies of the catalogs, and the conflicts fixed. A fix can bring another conflict to
    light (a dropped entry no longer hides a late year among its neighbours), so this repeats
    until none is left or `rounds` have passed."""
    out = {dataset: copy.deepcopy(dict(records)) for dataset, records in catalogs.items()}
    fixed: list[Conflict] = []
    for _ in range(rounds):
        found = conflicts(out)
        if not found:
            break
        out = _fix(out, found)
        fixed += found
    return out, fixed


def _fix(catalogs: Mapping[str, Mapping[str, Mapping]], found: list[Conflict]) -> dict[str, dict]:
    from arena.catalog_doubts import fix as fix_withheld

    out = {dataset: copy.deepcopy(dict(records)) for dataset, records in catalogs.items()}
    by_title = _reference_titles(catalogs.get("redial", {}))
    for conflict in found:
        record = out[conflict.dataset].get(conflict.item_id)
        if record is None:
            continue
        if conflict.check in ("person_as_title", "borrowed_record", "year_after_record"):
            del out[conflict.dataset][conflict.item_id]  # its own record is nowhere in the catalog
        elif conflict.check == "doubled_year":
            year = year_of(record["name"], record)
            record["name"] = _YEAR.sub("", record["name"]).strip() + (
                f" ({year})" if conflict.dataset == "redial" and year else "")
        elif conflict.check in WITHHOLDING:
            fix_withheld(record, conflict)
        elif conflict.check == "merged_book_film":
            directors = set(record.get("director") or ())
            other = next(o for o in by_title[normalize(title_of(record["name"]))]
                         if directors & set(o.get("director") or ()))
            if "year set" in conflict.fix:
                record["year"] = str(year_of(other["name"], other))
            if "cast set" in conflict.fix:
                record["actor"] = list(other.get("star") or ())
    return out
