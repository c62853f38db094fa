"""Readings of one catalog record that every catalog check shares, and the two record-level checks
that others build on (a record borrowed from another film, a year later than the record's number).

`arena.catalogs.conflicts` (entries put right or dropped) and `arena.catalogs.doubts` (fields
withheld) both read records through these, so neither has to import the other.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Mapping, Optional

from rapidfuzz import fuzz

from arena.titles.phrases import FUNCTION_WORDS, normalize

YEAR_IN_NAME = re.compile(r"\s*\((1[89]\d\d|20\d\d)\)")
RECORD_FIELDS = ("plot", "director", "writer", "star", "actor", "genre", "imdb_id")
# Films are registered years before they come out (Jurassic World in 2004, Wonder Woman in 2005).
YEAR_SLACK = 9


@dataclass(frozen=True)
class Conflict:
    dataset: str
    item_id: str
    name: str
    check: str
    detail: str
    fix: str


def title_of(name: str) -> str:
    return YEAR_IN_NAME.sub("", name).strip()


def year_of(name: str, record: Mapping) -> Optional[int]:
    if str(record.get("year") or "").isdigit():
        return int(record["year"])
    match = YEAR_IN_NAME.search(name)
    return int(match.group(1)) if match else None


def record_people(record: Mapping) -> set[str]:
    return {n for role in ("director", "writer", "star", "actor") for n in record.get(role) or ()}


def content_words(text: str) -> set[str]:
    """Content words, plural and possessive "s" cut ("Angry Birds" / "Angry Bird" agree)."""
    words = normalize(text.replace("&", " and ").replace("'s", "")).split()
    return {w[:-1] if len(w) > 3 and w.endswith("s") else w for w in words
            if w not in FUNCTION_WORDS and not w.isdigit()}


def owner_score(name: str, record: Mapping) -> float:
    """How well the record's plot bears out the title: the share of the title's words in it."""
    words = content_words(title_of(name))
    plot = content_words(record.get("plot") or "")
    return len(words & plot) / len(words) if words else 0.0


def borrowed_records(dataset: str, records: Mapping[str, Mapping]) -> list[Conflict]:
    groups: dict[str, list[str]] = defaultdict(list)
    for item_id, record in records.items():
        if record.get("withheld"):
            continue  # its borrowed fields are already emptied (arena.catalogs.doubts)
        if record.get("imdb_id"):
            groups["imdb " + record["imdb_id"]].append(item_id)
        if record.get("plot") and len(record["plot"]) > 40:
            groups["plot " + record["plot"]].append(item_id)
    flagged: dict[str, Conflict] = {}
    for key, ids in groups.items():
        titles = {" ".join(sorted(content_words(title_of(records[i]["name"])))) for i in ids}
        if len(ids) < 2 or len(titles) < 2:
            continue
        scores = {i: owner_score(records[i]["name"], records[i]) for i in ids}
        best = max(scores.values())
        owners = [i for i in ids if scores[i] == best]
        owner_titles = {" ".join(sorted(content_words(title_of(records[i]["name"])))) for i in owners}
        if best == 0 or len(owner_titles) > 1:
            continue  # the plot bears out no title, or two equally: left as it is
        owner = records[owners[0]]["name"]
        for i in ids:
            if i not in owners and i not in flagged and not same_film_names(records[i]["name"], owner):
                what = "IMDb record" if key.startswith("imdb") else "plot"
                flagged[i] = Conflict(dataset, i, records[i]["name"], "borrowed_record",
                                      f"shares its {what} with {owner!r}, whose title the plot bears out",
                                      "entry dropped")
    return list(flagged.values())


def same_film_names(name: str, other: str) -> bool:
    """Two names of one film: "Anchorman" / "Anchorman: The Legend of Ron Burgundy", "Killer Klowns" /
    "Killer Clowns"."""
    a, b = content_words(title_of(name)), content_words(title_of(other))
    return a <= b or b <= a or fuzz.ratio(normalize(title_of(name)), normalize(title_of(other))) >= 85


def imdb_number(record: Mapping) -> Optional[int]:
    match = re.fullmatch(r"tt(\d+)", str(record.get("imdb_id") or ""))
    return int(match.group(1)) if match else None


def year_after_record(dataset: str, records: Mapping[str, Mapping]) -> list[Conflict]:
    """A year later than the latest year among the records numbered below it (plus slack): IMDb
    numbers its records in the order it creates them, so a 2007 film cannot hold a 1999 number."""
    rows = sorted((n, y, i) for i, r in records.items()
                  if (n := imdb_number(r)) is not None and (y := year_of(r["name"], r)) is not None)
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


def reference_titles(reference: Mapping[str, Mapping]) -> dict[str, list[Mapping]]:
    """ReDial's entries by title, less those whose record is borrowed or whose year is after it."""
    doubtful = {
        c.item_id for c in borrowed_records("redial", reference) + year_after_record("redial", reference)
    }
    by_title: dict[str, list[Mapping]] = defaultdict(list)
    for item_id, record in reference.items():
        if item_id not in doubtful:
            by_title[normalize(title_of(record["name"]))].append(record)
    return by_title
