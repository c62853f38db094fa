"""Popularity spread over what items share, for the many items the training dialogues never name.

ReDial's training dialogues name about one catalog film in six, so a quarter of
the films a recommender goes on to suggest have no count at all. Two smoothed
priors carry counts over to them, both computed from the training counts
(`ItemStatistics`) and the shipped catalog only:

- `popularity_people`: how popular the films of the item's people are (its
  stars, directors, writers in the knowledge graph): the mean, over the item's
  people, of the average count of their films, other than the item itself.
- `popularity_year`: the average count of the catalog's films of the item's
  release year, other than the item itself (a dialogue collection favours the
  films of its own years).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import sparse

from arena.catalog import Catalog
from crs.recommender.context import RequestContext
from crs.recommender.statistics import ItemStatistics

NOT_PEOPLE = frozenset({"genre", "year", "language"})  # entity kinds that are not people


def _log_scaled(values: np.ndarray) -> np.ndarray:
    top = math.log1p(float(values.max(initial=0)))
    return (np.log1p(np.maximum(values, 0)) / top).astype(np.float32) if top > 0 else np.zeros_like(
        values, dtype=np.float32)


def leave_one_out_mean(groups: sparse.csr_matrix, counts: np.ndarray) -> np.ndarray:
    """Per item (row of `groups`, items x groups, 0/1): the mean over its groups of the mean
    count of the group's other items (0 for an item alone in all its groups)."""
    size = groups.sum(axis=0).A.ravel()  # items per group
    total = groups.T @ counts  # count per group
    others = np.maximum(size - 1, 0)
    rows, cols = groups.nonzero()
    per_link = np.where(others[cols] > 0, (total[cols] - counts[rows]) / np.maximum(others[cols], 1), 0.0)
    useful = others[cols] > 0
    summed = np.bincount(rows[useful], weights=per_link[useful], minlength=groups.shape[0])
    links = np.bincount(rows[useful], minlength=groups.shape[0])
    return np.where(links > 0, summed / np.maximum(links, 1), 0.0)


class SmoothedPopularitySignal:
    features = ("popularity_people", "popularity_year")

    def __init__(self, catalog: Catalog, stats: ItemStatistics, row_of: dict[str, int],
                 edges: dict[int, list[int]]):
        size = len(catalog.items)
        counts = stats.popularity_vector(row_of, size).astype(np.float64)
        kinds = catalog.entity_kinds
        rows, cols = [], []
        for i, item in enumerate(catalog.items):
            for entity in set(edges.get(item.entity_id, ())) if item.entity_id is not None else ():
                if kinds.get(entity) not in NOT_PEOPLE:
                    rows.append(i)
                    cols.append(entity)
        people = sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(size, max(cols, default=-1) + 1))
        self.people = _log_scaled(leave_one_out_mean(people, counts))
        years = sorted({item.year for item in catalog.items if item.year})
        column = {year: j for j, year in enumerate(years)}
        year_rows = [i for i, item in enumerate(catalog.items) if item.year]
        by_year = sparse.csr_matrix(
            (np.ones(len(year_rows)), (year_rows, [column[catalog.items[i].year] for i in year_rows])),
            shape=(size, len(years)))
        self.year = _log_scaled(leave_one_out_mean(by_year, counts))

    def scores(self, ctx: RequestContext) -> list[np.ndarray]:
        return [self.people, self.year]
