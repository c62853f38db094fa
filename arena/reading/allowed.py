"""Which catalog items a conversation's constraints allow: one flag per item, cached by part.

`Constraints.allows` is an "and" of clauses, each reading one field (or the genres with
`any_genre`), and every clause also keeps to the kind (`kind`, or "offered unasked" when none). So
the flags of a whole `Constraints` are the "and" of the flags of its parts: one `Constraints` per
ruled-out genre, person, intensity or word, one for the years and so on, each with the same kind; the
genres asked for are a part each, "and"-ed, or "or"-ed when any one of them is enough (`any_genre`).
Conversations share their parts ("no horror", "from the 1990s") far more often than their whole
constraints, and a part's flags are computed once, by `allows` itself: the
rules stay in `Constraints` alone, this only decides what to compute once.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import fields, replace
from typing import Any, Sequence

import numpy as np

from arena.catalogs.catalog import CatalogItem
from arena.reading.constraints import Constraints
from arena.reading.vocabulary import GENRE_WORDS

# How `Constraints.allows` reads each field. EACH: a set whose members each rule on their own (all must
# pass), so each member is a part; WHOLE: one part for the field; GENRES: the genres asked for, each a
# part, all of them needed or, with `any_genre`, any one; SHARED: kept in every part.
EACH = frozenset({"unwanted_genres", "unwanted_people", "unwanted_intensity", "unwanted_words", "people"})
WHOLE = frozenset({"years", "for_children", "subjects", "origins", "makers"})
GENRES = ("genres", "any_genre")
SHARED = frozenset({"kind"})
KNOWN_FIELDS = EACH | WHOLE | set(GENRES) | SHARED


def parts(constraints: Constraints) -> list[tuple[Constraints, ...]]:
    """Groups of constraints: an item is allowed by `constraints` when it is allowed by every group,
    and by a group when by any one of its constraints (the first group holds only the kind)."""
    base = Constraints(kind=constraints.kind)
    changes: list[dict[str, Any]] = []
    for name in sorted(EACH):
        changes += [{name: frozenset({member})} for member in sorted(getattr(constraints, name))]
    for name in sorted(WHOLE):
        if getattr(constraints, name):
            changes.append({name: getattr(constraints, name)})
    groups: list[tuple[Constraints, ...]] = [(base,), *((replace(base, **change),) for change in changes)]
    genres = [replace(base, genres=frozenset({genre})) for genre in sorted(constraints.genres)]
    if constraints.any_genre and genres:
        groups.append(tuple(genres))
    else:
        groups += [(genre,) for genre in genres]
    return groups


def _parts_known() -> bool:
    """Whether every field of `Constraints` is one this module knows how to split."""
    return {f.name for f in fields(Constraints)} <= KNOWN_FIELDS


class AllowedItems:
    """Flags over `items` (in order) for any `Constraints`, each part's flags computed once."""

    def __init__(self, items: Sequence[CatalogItem], size: int = 2048):
        self.items = tuple(items)
        self.size = size
        self._flags: OrderedDict[Constraints, np.ndarray] = OrderedDict()
        # A field added to `Constraints` that this module does not know: every call reads all the rules.
        self._split = _parts_known()

    def flags(self, constraints: Constraints) -> np.ndarray:
        """One bool per item: does `constraints.allows` it. The array is shared: do not change it."""
        if not self._split:
            flags = self._compute(constraints)
            flags.setflags(write=False)
            return flags
        pieces = [self._part(group[0]) if len(group) == 1
                  else np.logical_or.reduce([self._part(p) for p in group]) for group in parts(constraints)]
        if len(pieces) == 1:
            return pieces[0]
        joined = np.logical_and.reduce(pieces)
        joined.setflags(write=False)
        return joined

    def warm(self) -> None:
        """Compute now what the first turns would otherwise wait for: the kind-only flags, each genre
        asked for, and the per-item readings that ruled-out words and people need (item stems, people
        keys)."""
        for constraints in (Constraints(), Constraints(genres=frozenset(GENRE_WORDS.values())),
                            Constraints(unwanted_words=frozenset({"-"})),
                            Constraints(unwanted_people=frozenset({"-"}))):
            self.flags(constraints)

    def _part(self, part: Constraints) -> np.ndarray:
        found = self._flags.get(part)
        if found is not None:
            self._flags.move_to_end(part)
            return found
        computed = self._compute(part)
        computed.setflags(write=False)
        self._flags[part] = computed
        while len(self._flags) > self.size:
            self._flags.popitem(last=False)
        return computed

    def _compute(self, constraints: Constraints) -> np.ndarray:
        allows = constraints.allows
        return np.fromiter((allows(item) for item in self.items), dtype=bool, count=len(self.items))
