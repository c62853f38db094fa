"""A simulator's view of an item catalog (`arena.catalogs.catalog.Catalog`).

Simulators need a few plain facts per movie (title, year, genres, actors,
directors, plot) and a title index that tolerates the ways datasets write
titles ("Usual Suspects, The" vs "The Usual Suspects (1995)").
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

from arena.catalogs.catalog import Catalog
from arena.dialogue import RecommendedItem
from arena.titles.names import title_key, split_year, title_variants

NOT_FILM_GENRES = frozenset({
    "england", "united kingdom", "novel", "literature", "television", "children's literature",
    "romance novel", "fiction", "speculative fiction", "film adaptation", "blockbuster", "classics",
    "young-adult fiction", "short",
})
ACTOR_ROLES = ("actor", "actors", "star", "stars", "cast")
DIRECTOR_ROLES = ("director", "directors")


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value.strip() else []
    out: list[str] = []
    for v in value:
        if v and str(v) not in out:
            out.append(str(v))
    return out


def _people(item: Any, roles: tuple[str, ...]) -> list[str]:
    people = getattr(item, "people", None)
    found: list[str] = []
    if isinstance(people, Mapping):
        for role in roles:
            found += [p for p in _as_list(people.get(role)) if p not in found]
    elif people:
        # a list of (role, name) pairs or of objects with .role/.name
        for entry in people:
            role = getattr(entry, "role", None) or (entry[0] if isinstance(entry, (tuple, list)) else None)
            name = getattr(entry, "name", None) or (entry[1] if isinstance(entry, (tuple, list)) else None)
            if role in roles and name and name not in found:
                found.append(str(name))
    for role in roles:
        found += [p for p in _as_list(getattr(item, role, None)) if p not in found]
    return found


def _year(value: Any) -> Optional[int]:
    try:
        year = int(str(value)[:4])
    except (TypeError, ValueError):
        return None
    return year if 1850 <= year <= 2100 else None


@dataclass(frozen=True)
class ItemFacts:
    item_id: str
    title: str
    year: Optional[int] = None
    genres: list[str] = field(default_factory=list)
    actors: list[str] = field(default_factory=list)
    directors: list[str] = field(default_factory=list)
    plot: str = ""

    @classmethod
    def from_item(cls, item: Any) -> "ItemFacts":
        title = str(getattr(item, "title", "") or "")
        year = _year(getattr(item, "year", None)) or split_year(title)[1]
        return cls(
            item_id=str(getattr(item, "item_id")),
            title=title,
            year=year,
            genres=_as_list(getattr(item, "genres", None)),
            actors=_people(item, ACTOR_ROLES),
            directors=_people(item, DIRECTOR_ROLES),
            plot=str(getattr(item, "plot", "") or ""),
        )

    @property
    def display_title(self) -> str:
        name, year = split_year(self.title)
        year = year or self.year
        return f"{name} ({year})" if year else name

    def has(self, slot: str, value: str) -> bool:
        value_norm = value.strip().lower()
        if slot == "genre":
            return any(g.lower() == value_norm for g in self.genres)
        if slot == "year":
            return self.year is not None and str(self.year) == value_norm
        if slot == "actor":
            return any(a.lower() == value_norm for a in self.actors)
        if slot == "director":
            return any(d.lower() == value_norm for d in self.directors)
        return False

    def describe(self, with_title: bool = True) -> str:
        """A one-line description, optionally without the title (for target personas)."""
        parts = []
        if with_title:
            parts.append(self.display_title)
        if self.genres:
            parts.append("genres: " + ", ".join(self.genres[:4]))
        if self.year and not with_title:
            parts.append(f"released around {self.year // 10 * 10}s")
        if self.directors:
            parts.append("directed by " + ", ".join(self.directors[:2]))
        if self.actors:
            parts.append("starring " + ", ".join(self.actors[:3]))
        if self.plot:
            parts.append("plot: " + self.plot)
        return "; ".join(parts)


class CatalogView:
    """Facts and title look-ups over a catalog, built once per catalog and shared."""

    def __init__(self, catalog: Catalog, dataset: Optional[str] = None):
        self.catalog = catalog
        self.dataset = dataset or getattr(catalog, "dataset", None) or getattr(catalog, "name", "")
        items = getattr(catalog, "items")
        items = list(items.values()) if isinstance(items, dict) else list(items)
        self._facts: dict[str, ItemFacts] = {}
        for item in items:
            facts = ItemFacts.from_item(item)
            self._facts[facts.item_id] = facts
        self._ids = sorted(self._facts)
        counts = Counter(g for f in self._facts.values() for g in f.genres)
        floor = max(20, len(self._facts) // 100)
        # OpenDialKG's genre lists mix in places and book categories; goals use frequent film genres.
        self.common_genres = frozenset(
            g for g, n in counts.items() if n >= floor and "#" not in g and g.lower() not in NOT_FILM_GENRES
        )
        self.actor_counts = Counter(a for f in self._facts.values() for a in f.actors)
        self.director_counts = Counter(d for f in self._facts.values() for d in f.directors)
        self._by_title: dict[str, list[ItemFacts]] = {}
        for facts in self._facts.values():
            for variant in title_variants(facts.title):
                self._by_title.setdefault(variant, []).append(facts)

    def __len__(self) -> int:
        return len(self._facts)

    def all(self) -> Iterable[ItemFacts]:
        return (self._facts[i] for i in self._ids)

    def get(self, item_id: str) -> Optional[ItemFacts]:
        return self._facts.get(str(item_id))

    def random_item(self, rng: random.Random) -> ItemFacts:
        return self._facts[rng.choice(self._ids)]

    def find(self, title: str, year: Optional[int] = None, year_tolerance: int = 1) -> Optional[ItemFacts]:
        """The catalog item called `title` (released within `year_tolerance` of `year` if given)."""
        year = year or split_year(title)[1]
        for variant in title_variants(title):
            candidates = self._by_title.get(variant, [])
            if not candidates:
                continue
            if year is None:
                if len(candidates) == 1:
                    return candidates[0]
                continue
            dated = [c for c in candidates if c.year is not None and abs(c.year - year) <= year_tolerance]
            if dated:
                return min(dated, key=lambda c: abs(c.year - year))
            undated = [c for c in candidates if c.year is None]
            if len(undated) == 1:
                return undated[0]
        return None

    def resolve(self, title: str) -> Optional[ItemFacts]:
        """A dataset's own title: exact look-up first, then the catalog's fuzzy title search."""
        found = self.find(title)
        if found is None and hasattr(self.catalog, "find_title"):
            item = self.catalog.find_title(title)
            found = self.get(item.item_id) if item is not None else None
        return found

    def lookup(self, item: RecommendedItem) -> Optional[ItemFacts]:
        """Facts for a shown item: by id first, then by title."""
        return self.get(item.item_id) or self.resolve(item.title)

    def key(self, facts: ItemFacts) -> str:
        return title_key(facts.title)
