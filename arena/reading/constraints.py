"""What the conversation rules in or out, carried across turns until the user changes it.

Three kinds of constraint, read from every user message oldest first (titles
are cut out first, so "Blade Runner 2049" is no era):
- era: "from the 90s", "after 2000", "before 1980", "something newer" (newer
  than what was shown so far), "older";
- audience: "my 7-year-old", "the kids", "family movie night" (no horror, crime
  or thriller; family or animation titles only), until "just for me" or an age over 12;
- unwanted genres: "no horror", "horror AGAIN?", "a war movie, not my thing";
  a later plain request for the genre lifts it.
On OpenDialKG the kind asked for (book, series, film) counts too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Optional, Sequence

from arena.catalog import CatalogItem
from arena.titles.phrases import normalize
from arena.reading.scope import negated_before

# Everyday words for a genre -> the word the catalogs' genre names contain.
GENRE_WORDS = {
    "horror": "horror", "horrors": "horror", "scary": "horror", "slasher": "horror", "slashers": "horror",
    "gore": "horror", "gory": "horror", "war": "war", "crime": "crime", "gangster": "crime", "mafia": "crime",
    "thriller": "thriller", "thrillers": "thriller", "romance": "romance", "romantic": "romance",
    "comedy": "comedy", "comedies": "comedy", "funny": "comedy", "action": "action", "drama": "drama",
    "dramas": "drama", "documentary": "documentary", "documentaries": "documentary", "musical": "musical",
    "musicals": "musical", "western": "western", "westerns": "western", "animated": "animation",
    "animation": "animation", "cartoon": "animation", "cartoons": "animation", "fantasy": "fantasy",
    "mystery": "mystery", "mysteries": "mystery", "sci-fi": "sci fi", "scifi": "sci fi",
    "science fiction": "science fiction", "superhero": "superhero", "sports": "sport", "sport": "sport",
}
_GENRE_ALIASES = {"sci fi": ("sci fi", "science fiction"), "science fiction": ("sci fi", "science fiction"),
                  "horror": ("horror", "slasher"), "thriller": ("thriller", "suspense")}
_GENRE_WORD = re.compile(r"\b(" + "|".join(sorted(map(re.escape, GENRE_WORDS), key=len, reverse=True)) + r")\b",
                         re.IGNORECASE)
CHILD_UNSAFE = ("horror", "crime", "thriller")
CHILD_FRIENDLY = ("family", "animation", "children")  # "children": OpenDialKG's "Children's literature"

_AGE = re.compile(r"\b(\d{1,2})[ -]?(?:year|yr)s?[ -]?olds?\b|\b(\d{1,2}) and (\d{1,2})\b", re.IGNORECASE)
_CHILDREN = re.compile(
    r"\b(kids?|children|child|little ones|toddlers?|my (son|daughter|boy|girl)|grandkids|family (movie|film|night)|"
    r"\d{1,2}[ -]?(year|yr)s?[ -]?olds?)\b", re.IGNORECASE)
_ADULTS_ONLY = re.compile(r"\b(just (for )?me|only me|for adults|kids are (asleep|in bed|gone)|without the kids)\b",
                          re.IGNORECASE)
_DECADE = re.compile(r"\b(?:the )?(?:(19|20)?([0-9])0'?s|(twenties|thirties|forties|fifties|sixties|seventies|"
                     r"eighties|nineties))\b", re.IGNORECASE)
_DECADE_WORDS = {"twenties": 2, "thirties": 3, "forties": 4, "fifties": 5, "sixties": 6, "seventies": 7,
                 "eighties": 8, "nineties": 9}
_AFTER = re.compile(r"\b(after|since|newer than|later than|post)\s+((?:19|20)\d\d)\b", re.IGNORECASE)
_BEFORE = re.compile(r"\b(before|older than|earlier than|pre)\s+((?:19|20)\d\d)\b", re.IGNORECASE)
_FROM_YEAR = re.compile(r"\b(from|in|of)\s+((?:19|20)\d\d)\b", re.IGNORECASE)
_NEWER = re.compile(r"\b(newer|more recent|recent|modern|new ones?)\b", re.IGNORECASE)
_OLDER = re.compile(r"\b(older|old ones?|something old)\b", re.IGNORECASE)
_KINDS = (("book", re.compile(r"\b(books?|novels?|read|reading)\b", re.IGNORECASE)),
          ("series", re.compile(r"\b(tv|series|shows?|sitcoms?)\b", re.IGNORECASE)),
          ("film", re.compile(r"\b(movies?|films?|flicks?|watch)\b", re.IGNORECASE)))
NEWEST_YEAR_ASKED = 2012  # "newer" never asks for more than the catalogs' last years can give


@dataclass(frozen=True)
class Constraints:
    years: Optional[tuple[int, int]] = None
    for_children: bool = False
    unwanted_genres: frozenset[str] = field(default_factory=frozenset)
    kind: Optional[str] = None

    def allows(self, item: CatalogItem) -> bool:
        if self.years is not None and (item.year is None or not self.years[0] <= item.year <= self.years[1]):
            return False
        if self.kind is not None and item.kind != self.kind:
            return False
        if any(has_genre(item, g) for g in self.unwanted_genres):
            return False
        return not self.for_children or child_friendly(item)

    @property
    def any(self) -> bool:
        return self.years is not None or self.for_children or bool(self.unwanted_genres)

    def describe(self) -> str:
        """"for children, from 1990 to 1999, without horror" (empty when nothing is ruled)."""
        parts = []
        if self.for_children:
            parts.append("suitable for children")
        if self.years is not None:
            low, high = self.years
            if high - low == 9 and low % 10 == 0:
                parts.append(f"from the {low}s")
            elif high >= 2100:
                parts.append(f"from {low} on")
            elif low <= 1800:
                parts.append(f"from before {high + 1}")
            else:
                parts.append(f"from {low} to {high}")
        if self.unwanted_genres:
            parts.append("without " + " or ".join(sorted(self.unwanted_genres)))
        return ", ".join(parts)


def has_genre(item: CatalogItem, genre: str) -> bool:
    """Whether one of the item's catalog genres is `genre` ("horror" matches "Slasher" too)."""
    wanted = _GENRE_ALIASES.get(genre, (genre,))
    return any(f" {w} " in _padded_words(name) for name in item.genres for w in wanted)


@lru_cache(maxsize=8192)
def _padded_words(genre_name: str) -> str:
    """" sci fi ": a genre name's words, normalised once (a catalog has a few hundred names)."""
    return f" {normalize(genre_name)} "


def child_friendly(item: CatalogItem) -> bool:
    return any(has_genre(item, g) for g in CHILD_FRIENDLY) and not any(has_genre(item, g) for g in CHILD_UNSAFE)


def genre_mentions(text: str) -> list[tuple[str, int]]:
    """(genre, position) of every genre word in `text`."""
    return [(GENRE_WORDS[m.group(1).lower()], m.start()) for m in _GENRE_WORD.finditer(text)]


def _child_mentioned(text: str) -> Optional[bool]:
    """True for a child in the audience, False for "just me" or a teenager, None for no word on it."""
    if _ADULTS_ONLY.search(text):
        return False
    if not _CHILDREN.search(text):
        return None
    ages = [int(a) for m in _AGE.finditer(text) for a in m.groups() if a]
    return not ages or min(ages) <= 12


def _era(text: str, shown_years: Sequence[int]) -> Optional[tuple[int, int]]:
    if match := _AFTER.search(text):
        return int(match.group(2)) + (0 if match.group(1).lower() == "since" else 1), 2100
    if match := _BEFORE.search(text):
        return 1800, int(match.group(2)) - 1
    if match := _DECADE.search(text):
        if match.group(3):
            start = 1900 + 10 * _DECADE_WORDS[match.group(3).lower()]
        else:
            century = int(match.group(1)) * 100 if match.group(1) else (2000 if match.group(2) in "01" else 1900)
            start = century + 10 * int(match.group(2))
        return start, start + 9
    if match := _FROM_YEAR.search(text):
        return int(match.group(2)), int(match.group(2))
    if _NEWER.search(text):
        return min(max(shown_years, default=2000) + 1, NEWEST_YEAR_ASKED), 2100
    if _OLDER.search(text):
        return 1800, max(min(shown_years, default=1990) - 1, 1950)
    return None


def _kind(text: str) -> Optional[str]:
    """The one kind the message asks for; none when it names several ("movies and tv")."""
    kinds = [kind for kind, pattern in _KINDS if pattern.search(text)]
    return kinds[0] if len(kinds) == 1 else None


def update(constraints: Constraints, text: str, *, complaint: bool, shown_years: Sequence[int] = (),
           kinds_matter: bool = False) -> Constraints:
    """The constraints after one more user message (`text` with its titles cut out).
    In a `complaint` a genre named outside a request clause is one the user does not want."""
    years = _era(text, shown_years) or constraints.years
    child = _child_mentioned(text)
    for_children = constraints.for_children if child is None else child
    unwanted = set(constraints.unwanted_genres)
    for genre, position in genre_mentions(text):
        if negated_before(text, position) or (complaint and not in_request_clause(text, position)):
            unwanted.add(genre)
        else:
            unwanted.discard(genre)
    kind = (_kind(text) or constraints.kind) if kinds_matter else None
    return replace(constraints, years=years, for_children=for_children, unwanted_genres=frozenset(unwanted),
                   kind=kind)


_REQUEST_CLAUSE = re.compile(
    r"\b(i want|i'?d (like|prefer|rather)|i would like|looking for|something|more like|"
    r"(films?|movies?|ones?) like|prefer|"
    r"rather|lighter|funnier|happier|"
    r"how about|what about|instead|maybe|give me|show me|recommend)\b", re.IGNORECASE)
CLAUSE_SPLIT = re.compile(r"[.!?;]+|,|\bbut\b", re.IGNORECASE)


def clauses(text: str) -> list[tuple[int, int]]:
    cuts = [0] + [m.end() for m in CLAUSE_SPLIT.finditer(text)] + [len(text)]
    return [(a, b) for a, b in zip(cuts, cuts[1:]) if text[a:b].strip()]


def in_request_clause(text: str, position: int) -> bool:
    """Whether `position` lies in a clause that asks for something ("I want something like Frozen")."""
    for start, end in clauses(text):
        if start <= position < end:
            return bool(_REQUEST_CLAUSE.search(text[start:end]))
    return False


def request_part(text: str) -> str:
    """The clauses of a complaint that ask for something, without the negated words."""
    kept = [text[a:b].strip(" ,") for a, b in clauses(text) if _REQUEST_CLAUSE.search(text[a:b])]
    return " ".join(k for k in kept if k)
