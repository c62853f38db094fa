"""Evidence from the other dataset's dialogues (OpenDialKG's for ReDial, and back).

Many OpenDialKG dialogues are about films that ReDial's catalog has too; the
training script links their titles to this catalog by title and year
(`extra_dialogues.linked_item_sets`) and keeps the counts in `ItemStatistics`
(`elsewhere`, `elsewhere_comention`). This signal scores how many of those
dialogues name the item, and how often they name it together with the titles
named in this dialogue (cosine of the dialogue sets, older mentions count less).
"""

from __future__ import annotations

import math

import numpy as np

from crs.recommender.context import RequestContext
from crs.recommender.signals import RECENCY_DECAY
from crs.recommender.statistics import ItemStatistics


class ElsewhereSignal:
    features = ("popularity_elsewhere", "comention_elsewhere")

    def __init__(self, stats: ItemStatistics, row_of: dict[str, int], size: int):
        counts = stats.popularity_vector(row_of, size, stats.elsewhere)
        top = math.log1p(float(counts.max(initial=0)))
        self.popularity = (np.log1p(counts) / top).astype(np.float32) if top > 0 else counts
        self.matrix = stats.comention_matrix(row_of, size, elsewhere=True)
        self.row_of = row_of
        self.size = size

    def scores(self, ctx: RequestContext) -> list[np.ndarray]:
        comention = np.zeros(self.size, np.float32)
        if self.matrix.nnz:
            for m in ctx.items:
                row = self.row_of.get(m.item.item_id)
                if row is not None:
                    comention += self.matrix[:, row].toarray().ravel() * RECENCY_DECAY ** max(0, m.age)
        top = float(comention.max(initial=0))
        return [self.popularity, comention / top if top > 0 else comention]
