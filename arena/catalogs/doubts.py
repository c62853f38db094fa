"""Catalog facts that belong to another work, found from evidence inside the catalogs.

`arena.catalogs.conflicts` drops entries whose record is not their own at all; the checks here
find entries that are real works (their title and year come from the dialogues) whose credits,
genres, plot or year were joined from another work of the same or a similar title:

- later_record (ReDial): the entry's IMDb number was given out years after its film came out,
  going by the years of the entries numbered closest to it ("A Nightmare on Elm Street (1984)"
  holds the 2010 remake's record, "Sunset Boulevard (1950)" a 2005 stage recording's): the record
  is of a later work of that title.
- shared_record (ReDial): entries sharing one IMDb record under titles or years that are not one
  film (five "Beauty and the Beast" years with the 2017 film's record, "Lego Indiana Jones and the
  Raiders of the Lost Brick" with Raiders of the Lost Ark's). The record stays with the entry whose
  year fits the record's number best; the others lose it.
- merged_remake (OpenDialKG): an entry credited to two directors who, in ReDial, directed films of
  that title in different years ("The Fog": John Carpenter's 1980 film and Rupert Wainwright's
  2005 remake in one entry). The director of the entry's year stays; the other and the cast,
  which cannot be told apart, are withheld.
- merged_year (OpenDialKG): ReDial has the title by the same director with another year and no
  film of that title in the entry's year ("Old Yeller" 1956, the novel's year; "End of Days" 2015,
  a novel's). The year is set to ReDial's and writers ReDial does not credit are withheld.

A withheld field is emptied and its reason kept under the record's "withheld" key
(field -> reason), so replies can say why they do not state it.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Mapping, Optional

from arena.catalogs.records import (
    Conflict, imdb_number, owner_score, reference_titles, same_film_names, title_of, year_of,
)
from arena.titles.phrases import normalize

RECORD_GAP = 4  # an IMDb record numbered among films at least this many years younger is not the film's
OLD_NUMBERS = 100000  # below this IMDb numbered films of many decades together: no era to read
WINDOW = 100  # entries on each side of a record number that say what years it was given out for
RECORD_FIELDS = ("director", "writer", "star", "actor", "plot", "genre")


def record_eras(records: Mapping[str, Mapping]) -> dict[str, tuple[int, int, int]]:
    """item id -> (10th, 50th percentile year, number): the years of the entries numbered closest to
    its IMDb record, roughly when IMDb gave that number out."""
    rows = sorted((n, year, i) for i, r in records.items()
                  if (n := imdb_number(r)) is not None and (year := year_of(r["name"], r)) is not None)
    eras = {}
    for index, (number, _, item_id) in enumerate(rows):
        window = sorted(y for _, y, _ in rows[max(0, index - WINDOW):index + WINDOW])
        if len(window) >= 50:
            eras[item_id] = (window[int(0.1 * (len(window) - 1))], window[len(window) // 2], number)
    return eras


def _numbers(title: str) -> set[str]:
    """The numbers in a title; none is read as 1 ("Kill Bill" is "Kill Bill: Volume 1")."""
    return set(re.findall(r"\d+", title)) or {"1"}


def same_film(name: str, other: str, year: Optional[int], other_year: Optional[int]) -> bool:
    """Two entries naming one film: variant titles with the same numbers ("High School Musical 2" is
    not "High School Musical 3") and years a year apart at most when both are written."""
    a, b = title_of(name), title_of(other)
    if not same_film_names(name, other) or _numbers(a) != _numbers(b):
        return False
    return year is None or other_year is None or abs(year - other_year) <= 1


def _one_film(records: Mapping[str, Mapping], a: str, b: str) -> bool:
    ra, rb = records[a], records[b]
    return same_film(ra["name"], rb["name"], year_of(ra["name"], ra), year_of(rb["name"], rb))


def _withheld(record: Mapping) -> list[str]:
    return [f for f in RECORD_FIELDS if record.get(f)]


def later_record(dataset: str, records: Mapping[str, Mapping], eras=None) -> list:
    eras = record_eras(records) if eras is None else eras
    out = []
    for item_id, (low, _, number) in eras.items():
        record = records[item_id]
        year = year_of(record["name"], record)
        fields = _withheld(record)
        if number < OLD_NUMBERS or year is None or low - year < RECORD_GAP or not fields:
            continue
        out.append(Conflict(dataset, item_id, record["name"], "later_record",
                               f"year {year}, but its IMDb record {record['imdb_id']} was given out among "
                               f"films from {low} on", "withheld: " + ", ".join(fields)))
    return out


def shared_record(dataset: str, records: Mapping[str, Mapping], eras=None) -> list:
    eras = record_eras(records) if eras is None else eras
    groups: dict[str, list[str]] = defaultdict(list)
    for item_id, record in records.items():
        if record.get("imdb_id") and _withheld(record):
            groups[record["imdb_id"]].append(item_id)
    out = []
    for ids in groups.values():
        if len(ids) < 2:
            continue
        era = next((eras[i] for i in ids if i in eras), None)
        out += _shared_conflicts(dataset, records, ids, _record_owner(records, ids, era))
    return out


def _record_fit(record: Mapping, era) -> tuple:
    """How well an entry fits the era of its IMDb record: (fits, closeness of years, owner score)."""
    year = year_of(record["name"], record)
    if year is None:
        return (0, -999.0, owner_score(record["name"], record))
    fits = era is None or era[2] < OLD_NUMBERS or era[0] - year < RECORD_GAP
    closeness = -abs(year - era[1]) if era else 0.0
    return (2 if fits else 0, closeness, owner_score(record["name"], record))


def _record_owner(records: Mapping[str, Mapping], ids: list[str], era) -> Optional[str]:
    """The entry an IMDb record shared by `ids` belongs to, or None when nothing tells."""
    fit = {i: _record_fit(records[i], era) for i in ids}
    ranked = sorted(ids, key=fit.__getitem__, reverse=True)
    undated = all(fit[i][0] == 0 and fit[i][1] == -999.0 for i in ids)
    owner = ranked[0] if fit[ranked[0]][0] or undated else None
    rival = next((i for i in ranked[1:] if fit[i] == fit[ranked[0]]), None)
    if owner is not None and rival is not None and not _one_film(records, owner, rival):
        owner = None  # two films fit the record equally: nothing tells which it is
    return owner


def _shared_conflicts(dataset: str, records: Mapping[str, Mapping], ids: list[str],
                      owner: Optional[str]) -> list:
    """A conflict for each entry of `ids` that is not the record's owner (nor the owner's film)."""
    out = []
    for item_id in ids:
        record = records[item_id]
        if owner is not None:
            other = records[owner]
            if item_id == owner or _one_film(records, item_id, owner):
                continue
            why = f"shares its IMDb record {record['imdb_id']} with {other['name']!r}, whose year fits it"
        else:
            others = ", ".join(repr(records[i]["name"]) for i in ids if i != item_id)
            why = (f"shares its IMDb record {record['imdb_id']} with {others}, and no year or plot tells "
                   f"which film it is")
        out.append(Conflict(dataset, item_id, record["name"], "shared_record", why,
                            "withheld: " + ", ".join(_withheld(record))))
    return out


def redial_doubts(records: Mapping[str, Mapping]) -> list:
    eras = record_eras(records)
    found = {c.item_id: c for c in later_record("redial", records, eras)}
    for conflict in shared_record("redial", records, eras):
        found.setdefault(conflict.item_id, conflict)
    return list(found.values())


def _key(name: str) -> str:
    from arena.catalogs.catalog import person_key, person_label
    return person_key(person_label(name))


def _keys(names) -> set[str]:
    return {_key(n) for n in names or ()}


def opendialkg_doubts(records: Mapping[str, Mapping], reference: Mapping[str, Mapping]) -> list:
    """`reference`: ReDial's records, whose IMDb credits say which director made which year."""
    doubtful = {c.item_id for c in redial_doubts(reference)}
    by_title = reference_titles({i: r for i, r in reference.items() if i not in doubtful})
    book_writers = {_key(w) for r in records.values() if not (r.get("director") or r.get("actor"))
                    for w in r.get("writer") or ()}
    out = []
    for item_id, record in records.items():
        directors = _keys(record.get("director"))
        if not directors:
            continue
        films = by_title.get(normalize(title_of(record["name"])), [])
        ours = [f for f in films if directors & _keys(f.get("director"))]
        if not ours:
            continue
        year = year_of(record["name"], record)
        years = {year_of(f["name"], f) for f in films}
        if _apart(directors, ours):
            near = (year - 1, year, year + 1) if year else ()
            match = next((f for f in ours if year_of(f["name"], f) in near), None)
            fields = ["director", "actor", "genre"]  # the genres of two films cannot be told apart
            if match is None or not _keys(record.get("writer")) <= _keys(match.get("writer")):
                fields.append("writer")
            detail = ", ".join(sorted(f["name"] for f in ours))
            out.append(Conflict("opendialkg", item_id, record["name"], "merged_remake",
                                   f"its directors made different films of that title: {detail}",
                                   ("director kept: " + "; ".join(match.get("director") or ()) + "; "
                                    if match is not None else "") + "withheld: " + ", ".join(
                                       f for f in fields if record.get(f))))
            continue
        other = ours[0]
        other_year = year_of(other["name"], other)
        if year and other_year and year != other_year and year not in years:
            # ReDial lists three writers at most: a shorter list is complete, a full one may leave out
            # the film's source author, so then only a writer of the catalog's books is taken out
            complete = len(other.get("writer") or ()) < 3
            extra = [w for w in record.get("writer") or ()
                     if _key(w) not in _keys(other.get("writer")) and (complete or _key(w) in book_writers)]
            # a second director ReDial does not credit made the entry's year's film: his cast is mixed in
            credited = _keys(other.get("director"))
            strangers = [d for d in record.get("director") or () if _key(d) not in credited]
            fix = f"year set to {other_year}" + ("; withheld writers: " + ", ".join(extra) if extra else "")
            if strangers:
                fix += "; withheld directors: " + ", ".join(strangers) + "; withheld: actor, genre"
            out.append(Conflict("opendialkg", item_id, record["name"], "merged_year",
                                   f"year {year}, but {other['name']} by the same director is from "
                                   f"{other_year} and no film of that title is from {year}", fix))
    return out


def _apart(directors: set[str], films: list[Mapping]) -> bool:
    """Whether two of `directors` made different films of the title (in different years), never
    one together: co-directors ("Chris Buck and Jennifer Lee") are one film's credit."""
    years: dict[str, set] = defaultdict(set)
    together: set[frozenset] = set()
    for film in films:
        credit = _keys(film.get("director")) & directors
        for d in credit:
            years[d].add(year_of(film["name"], film))
        together |= {frozenset((a, b)) for a in credit for b in credit if a != b}
    named = sorted(years)
    return any(frozenset((a, b)) not in together and years[a] != years[b]
               for i, a in enumerate(named) for b in named[i + 1:])


def fix(record: dict, conflict) -> None:
    """Put `conflict` right in `record` (a copy): fields emptied, their reason kept under "withheld" and
    the values taken out under "withheld_values" (field -> names), so a reply can be kept from stating
    them (`crs.reply_check.withheld_facts`)."""
    before = {f: list(record.get(f) or ()) for f in RECORD_FIELDS if f != "plot"}
    _fix_fields(record, conflict)
    removed = dict(record.get("withheld_values") or {})
    for field, values in before.items():
        left = set(record.get(field) or ())
        gone = [v for v in dict.fromkeys(values) if v not in left]
        if gone:
            removed[field] = sorted(set(removed.get(field, [])) | set(gone))
    if removed:
        record["withheld_values"] = removed


def _fix_fields(record: dict, conflict) -> None:
    withheld = dict(record.get("withheld") or {})
    if conflict.check in ("later_record", "shared_record"):
        reason = ("belongs to a later work of that title" if conflict.check == "later_record"
                  else "belongs to another entry's film")
        for field in _withheld(record):
            withheld[field] = reason
            record[field] = "" if field == "plot" else []
    elif conflict.check == "merged_remake":
        _fix_merged_remake(record, conflict.fix, withheld)
    elif conflict.check == "merged_year":
        _fix_merged_year(record, conflict.fix, withheld)
    if withheld:
        record["withheld"] = withheld


def _fix_merged_remake(record: dict, fix: str, withheld: dict) -> None:
    """Keep the director the fix names; withhold the credits it lists (reasons into `withheld`)."""
    kept = fix.split("director kept: ")[1].split("; withheld")[0] if "director kept" in fix else ""
    keep = _keys(kept.split("; ")) if kept else set()
    directors = [d for d in record.get("director") or () if _key(d) in keep]
    if len(directors) < len(record.get("director") or ()):
        withheld["director"] = "mixes the directors of two films of that title"
    record["director"] = directors
    for field in ("actor", "writer", "genre"):
        if field in fix.split("withheld: ")[-1] and record.get(field):
            withheld[field] = "mixes the credits of two films of that title"
            record[field] = []


def _fix_merged_year(record: dict, fix: str, withheld: dict) -> None:
    """Set the year the fix names; drop the writers and directors it withholds (reasons into `withheld`)."""
    record["year"] = fix.split("year set to ")[1][:4]
    if "withheld writers: " in fix:
        extra = set(fix.split("withheld writers: ")[1].split("; ")[0].split(", "))
        record["writer"] = [w for w in record.get("writer") or () if w not in extra]
        withheld["writer"] = "some writer credits belong to another work of that title"
    if "withheld directors: " in fix:
        strangers = set(fix.split("withheld directors: ")[1].split("; ")[0].split(", "))
        record["director"] = [d for d in record.get("director") or () if d not in strangers]
        withheld["director"] = "mixes the directors of two films of that title"
        for field in ("actor", "genre"):
            if record.get(field):
                withheld[field] = "mixes the credits of two films of that title"
                record[field] = []
