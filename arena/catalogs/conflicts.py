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
from typing import Any, Mapping

from arena.catalogs.doubts import fix as fix_withheld
from arena.catalogs.doubts import opendialkg_doubts, redial_doubts
from arena.catalogs.records import (
    RECORD_FIELDS, YEAR_IN_NAME, Conflict, borrowed_records, record_people, reference_titles, title_of,
    year_after_record, year_of,
)
from arena.titles.phrases import normalize

WITHHOLDING = ("later_record", "shared_record", "merged_remake", "merged_year")  # see arena.catalogs.doubts

_DOUBLED_YEAR = re.compile(r"\((1[89]\d\d|20\d\d)\)\s*\(\1\)")


def _person_as_title(dataset: str, records: Mapping[str, Mapping]) -> list[Conflict]:
    people = set().union(*(record_people(r) for r in records.values()))
    out = []
    for item_id, record in records.items():
        title = title_of(record["name"])
        has_record = any(record.get(f) for f in RECORD_FIELDS)
        if (
            title in people
            and has_record
            and not (record.get("director") or record.get("star") or record.get("actor"))
        ):
            out.append(Conflict(dataset, item_id, record["name"], "person_as_title",
                                f"{title!r} is a person in the catalog and the entry lists no people",
                                "entry dropped"))
    return out


def _doubled_year(dataset: str, records: Mapping[str, Mapping]) -> list[Conflict]:
    out = []
    for item_id, record in records.items():
        name = record["name"]
        if _DOUBLED_YEAR.search(name) or (str(record.get("year") or "") and YEAR_IN_NAME.search(name)
                                           and year_of(name, {}) != year_of(name, record)):
            out.append(Conflict(dataset, item_id, name, "doubled_year",
                                f"year written twice or twice differently (record year {record.get('year')})",
                                "one year kept (the record's)"))
    return out


def _merged_book_film(dataset: str, records: Mapping[str, Mapping],
                      reference: Mapping[str, Mapping]) -> list[Conflict]:
    """Only an earlier year is taken for the book's (a later one may be a remake by the same
    director, as Funny Games 2007 is), and only from a ReDial entry without conflicts of its own."""
    by_title = reference_titles(reference)
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
                out.append(
                    Conflict(
                        dataset,
                        item_id,
                        record["name"],
                        "merged_book_film",
                        f"year {year}, but {other['name']} by the same director is from {other_year}",
                        f"year set to {other_year}"
                        + ("; cast set to ReDial's stars" if stars and cast and not stars & cast else ""),
                    )
                )
            break
    return out


def conflicts(catalogs: Mapping[str, Mapping[str, Mapping]]) -> list[Conflict]:
    """Every conflict in the catalogs (dataset -> {item id: record})."""
    out = []
    for dataset, records in catalogs.items():
        found = _person_as_title(dataset, records) + _doubled_year(dataset, records)
        if dataset == "redial":
            found += borrowed_records(dataset, records) + year_after_record(dataset, records)
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


def cleaned(
    catalogs: Mapping[str, Mapping[str, Mapping]], rounds: int = 5
) -> tuple[dict[str, dict], list[Conflict]]:
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
    # The records are JSON objects (dicts); each fix changes its own copy.
    out: dict[str, dict[str, Any]] = {dataset: copy.deepcopy(dict(records))
                                      for dataset, records in catalogs.items()}
    by_title = reference_titles(catalogs.get("redial", {}))
    for conflict in found:
        record = out[conflict.dataset].get(conflict.item_id)
        if record is None:
            continue
        if conflict.check in ("person_as_title", "borrowed_record", "year_after_record"):
            del out[conflict.dataset][conflict.item_id]  # its own record is nowhere in the catalog
        elif conflict.check == "doubled_year":
            year = year_of(record["name"], record)
            record["name"] = YEAR_IN_NAME.sub("", record["name"]).strip() + (
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
