"""Counts learnt from training dialogues: item popularity and co-mentions.

A dialogue contributes the set of catalog items it names (by either side, or as
a recommendation target). Popularity is the number of dialogues naming an item;
co-mention counts how many dialogues name both items of a pair; `recommended`
counts how often an item is a turn's recommendation target. Both are saved
as a small JSON file keyed by catalog item id (see `scripts/train_recommender.py`
for the data they come from), so the product never reads the training data.
"""

from __future__ import annotations

import collections
import itertools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

import numpy as np
from scipy import sparse


def _counts(item_sets: Iterable[Iterable[str]]) -> tuple[dict[str, int], dict[tuple[str, str], int]]:
    """Dialogues naming each item, and each pair of items (a < b)."""
    popularity: collections.Counter[str] = collections.Counter()
    pairs: collections.Counter[tuple[str, str]] = collections.Counter()
    for items in item_sets:
        distinct = sorted(set(items))
        popularity.update(distinct)
        pairs.update(itertools.combinations(distinct, 2))
    return dict(popularity), dict(pairs)


@dataclass
class ItemStatistics:
    popularity: dict[str, int] = field(default_factory=dict)  # item id -> dialogues naming it
    comention: dict[tuple[str, str], int] = field(default_factory=dict)  # (a, b), a < b -> dialogues
    recommended: dict[str, int] = field(default_factory=dict)  # item id -> turns recommending it
    # The same counts from the other dataset's training dialogues, titles linked to this catalog.
    elsewhere: dict[str, int] = field(default_factory=dict)
    elsewhere_comention: dict[tuple[str, str], int] = field(default_factory=dict)

    @classmethod
    def from_dialogues(cls, item_sets: Iterable[Iterable[str]], recommendations: Iterable[str] = (),
                       elsewhere_sets: Iterable[Iterable[str]] = ()) -> "ItemStatistics":
        """`item_sets`: the items each dialogue names; `recommendations`: every target item
        of every training turn (an item recommended twice counts twice); `elsewhere_sets`:
        the items each dialogue of the other dataset names (linked to this catalog)."""
        popularity, pairs = _counts(item_sets)
        elsewhere, elsewhere_pairs = _counts(elsewhere_sets)
        return cls(popularity, pairs, dict(collections.Counter(recommendations)), elsewhere, elsewhere_pairs)

    def popularity_vector(self, row_of: dict[str, int], size: int, counts: dict[str, int] | None = None) -> np.ndarray:
        vector = np.zeros(size, dtype=np.float32)
        for item_id, count in (self.popularity if counts is None else counts).items():
            row = row_of.get(item_id)
            if row is not None:
                vector[row] = count
        return vector

    def comention_matrix(self, row_of: dict[str, int], size: int, elsewhere: bool = False) -> sparse.csc_matrix:
        """Symmetric (items x items): count / sqrt(pop_a * pop_b), i.e. cosine of dialogue sets
        (of the other dataset's dialogues when `elsewhere`)."""
        pairs, popularity = ((self.elsewhere_comention, self.elsewhere) if elsewhere
                             else (self.comention, self.popularity))
        rows, cols, values = [], [], []
        for (a, b), count in pairs.items():
            ra, rb = row_of.get(a), row_of.get(b)
            if ra is None or rb is None:
                continue
            value = count / np.sqrt(popularity.get(a, 1) * popularity.get(b, 1))
            rows += [ra, rb]
            cols += [rb, ra]
            values += [value, value]
        return sparse.csc_matrix((np.asarray(values, np.float32), (rows, cols)), shape=(size, size))

    # -- files --------------------------------------------------------------------------
    def to_json(self) -> dict:
        return {
            "popularity": dict(sorted(self.popularity.items())),
            "comention": [[a, b, n] for (a, b), n in sorted(self.comention.items())],
            "recommended": dict(sorted(self.recommended.items())),
            "elsewhere": dict(sorted(self.elsewhere.items())),
            "elsewhere_comention": [[a, b, n] for (a, b), n in sorted(self.elsewhere_comention.items())],
        }

    @classmethod
    def from_json(cls, data: dict) -> "ItemStatistics":
        return cls(
            {str(k): int(v) for k, v in data.get("popularity", {}).items()},
            {(str(a), str(b)): int(n) for a, b, n in data.get("comention", [])},
            {str(k): int(v) for k, v in data.get("recommended", {}).items()},
            {str(k): int(v) for k, v in data.get("elsewhere", {}).items()},
            {(str(a), str(b)): int(n) for a, b, n in data.get("elsewhere_comention", [])},
        )

    def save(self, path: Path) -> None:
        Path(path).write_text(json.dumps(self.to_json(), separators=(",", ":")) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> "ItemStatistics":
        return cls.from_json(json.loads(Path(path).read_text(encoding="utf-8")))
