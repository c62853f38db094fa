"""Linking a title an LLM wrote to a catalog item: fuzzy, then by embedding.

An LLM recommending from its own knowledge writes titles its own way
("Star Wars: The Last Jedi", "Interstelar (2014)"). As iEvaLM's ChatGPT
system does, the written title is matched against the catalog's titles by
string similarity first; near misses are settled by comparing sentence
embeddings of the written title and the closest catalog titles. A title
with no close enough match is unknown to the catalog (None).
"""

from __future__ import annotations

from typing import Callable, Optional, Sequence

import numpy as np
from rapidfuzz import fuzz, process

from arena.catalogs.catalog import Catalog, CatalogItem, split_name
from arena.titles.phrases import normalize

SURE_RATIO = 92  # string similarity that links without asking the embeddings
SHORTLIST_RATIO = 65  # catalog titles at least this similar (as strings) are compared by embedding
SHORTLIST_SIZE = 8
# MiniLM tells a misspelt title from its original poorly (cosines of 0.45 to 0.85), so the
# embedding only settles near misses that already look alike as strings.
EMBEDDING_MIN_COSINE = 0.8

Encoder = Callable[[Sequence[str]], np.ndarray]


class TitleMatcher:
    def __init__(self, catalog: Catalog, encode: Optional[Encoder] = None):
        self.catalog = catalog
        self.encode = encode
        self._by_key: dict[str, list[CatalogItem]] = {}
        for item in catalog.items:
            self._by_key.setdefault(normalize(item.title), []).append(item)
        self._keys = list(self._by_key)

    def match(self, written: str) -> Optional[CatalogItem]:
        """The catalog item `written` ("Title" or "Title (Year)") stands for, or None."""
        title, year = split_name(written.strip("\"“”*_ "), self.catalog.dataset)
        key = normalize(title)
        if not key:
            return None
        if key in self._by_key:
            return self._with_year(self._by_key[key], year)
        exact = self.catalog.exact_title(title)  # aliases: "The Last Jedi", no leading article
        if exact is not None:
            return exact
        shortlist = process.extract(
            key, self._keys, scorer=fuzz.ratio, limit=SHORTLIST_SIZE, score_cutoff=SHORTLIST_RATIO
        )
        if not shortlist:
            return None
        best_key, best_ratio, _ = shortlist[0]
        if best_ratio >= SURE_RATIO:
            return self._with_year(self._by_key[best_key], year)
        if self.encode is None:
            return None
        vectors = self.encode([title] + [self._by_key[k][0].title for k, _, _ in shortlist])
        cosines = vectors[1:] @ vectors[0]
        best = int(np.argmax(cosines))
        if float(cosines[best]) < EMBEDDING_MIN_COSINE:
            return None
        return self._with_year(self._by_key[shortlist[best][0]], year)

    def _with_year(self, items: list[CatalogItem], year: Optional[int]) -> CatalogItem:
        if year is not None:
            for item in items:
                if item.year == year:
                    return item
        return max(items, key=self.catalog.popularity) if len(items) > 1 else items[0]
