"""The evidence for each catalog item, one score vector per feature.

Every signal turns a `RequestContext` into named vectors over the whole catalog
(row i = `catalog.items[i]`), so the combination is one matrix product and a
call stays within milliseconds:

- `LexicalSignal`: BM25 (the `bm25s` library) of the user's words against item
  text (title, genres, people, plot), for the last user turn and the whole
  dialogue (older turns count less), plus BM25 of the words the user ruled out.
- `DenseSignal`: MiniLM cosine of the user's turns to the item embeddings, and
  item-to-item cosine to the titles the user liked.
- `MentionSignal`: the titles named so far, by whom, and liked, rejected or seen.
- `GraphSignal`: items linked in the knowledge graph to the people, genres and
  years the user named (rare entities weigh more), minus those the user ruled
  out, and items sharing graph neighbours with the titles the user liked.
- `CoMentionSignal`: items that other dialogues mention together with the titles
  the user liked (counts from the training dialogues, see `statistics.py`).
- `PopularitySignal`: how often the training dialogues mention an item, and how
  often they recommend it.
- `CatalogPriorSignal`: the item's year and how much the knowledge graph knows of it.
- `ElsewhereSignal` (`elsewhere.py`): popularity and co-mentions in the other dataset's dialogues.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Callable, Optional, Protocol, Sequence

from cachetools import LRUCache
import numpy as np
from scipy import sparse

from arena.catalogs.catalog import Catalog, CatalogItem
from arena.reading.vocabulary import REQUEST_WORDS, says_what_is_wanted
from arena.titles.phrases import FUNCTION_WORDS
from crs.recommender.context import RequestContext
from crs.recommender.statistics import ItemStatistics

RECENCY_DECAY = 0.6  # an utterance one turn older counts this much as the next one


class Signal(Protocol):
    features: tuple[str, ...]

    def scores(self, ctx: RequestContext) -> list[np.ndarray]:
        """One float32 vector over the catalog per name in `features`."""


class TextCache:
    """Results per utterance text, least recently used dropped first: in a live dialogue
    every call repeats the earlier utterances, so each call computes only the new one."""

    def __init__(self, compute: Callable[[str], np.ndarray], size: int = 2048):
        self.compute = compute
        self.size = size
        self.entries: LRUCache[str, np.ndarray] = LRUCache(maxsize=size)

    def many(self, texts: Sequence[str], compute_many: Optional[Callable] = None) -> list[np.ndarray]:
        # Read into a local table first: storing the new results may evict older ones this call needs.
        found = {t: v for t in dict.fromkeys(texts) if (v := self.entries.get(t)) is not None}
        missing = [t for t in dict.fromkeys(texts) if t not in found]
        if missing:
            values = compute_many(missing) if compute_many else [self.compute(t) for t in missing]
            for text, value in zip(missing, values):
                found[text] = self.entries[text] = value
        return [found[text] for text in texts]

    def __call__(self, text: str) -> np.ndarray:
        return self.many([text])[0]


def _decay(age: int) -> float:
    return RECENCY_DECAY ** max(0, age)


def _scaled(vector: np.ndarray) -> np.ndarray:
    """Divide by the maximum so that queries of any length weigh alike (0 stays 0)."""
    top = float(vector.max()) if vector.size else 0.0
    return (vector / top).astype(np.float32) if top > 0 else np.zeros_like(vector, dtype=np.float32)


def item_text(item: CatalogItem) -> str:
    """The text BM25 indexes: the title twice (names matter), genres, people, plot."""
    people = " ".join(name for names in item.people.values() for name in names)
    return " ".join([item.title, item.title, " ".join(item.genres), people, item.plot])


class LexicalSignal:
    features = ("bm25_last", "bm25_dialogue", "bm25_negated")

    def __init__(self, catalog: Catalog):
        import bm25s
        import Stemmer

        self._bm25s = bm25s
        self._stemmer = Stemmer.Stemmer("english")
        self.size = len(catalog.items)
        self.stopwords = sorted(FUNCTION_WORDS | REQUEST_WORDS)
        self.index = bm25s.BM25()
        self.index.index(self._tokens([item_text(item) for item in catalog.items]), show_progress=False)
        self.cached_query = TextCache(self.query, size=512)

    def _tokens(self, texts: Sequence[str]):
        return self._bm25s.tokenize(list(texts), stopwords=self.stopwords, stemmer=self._stemmer, show_progress=False)

    def query(self, text: str) -> np.ndarray:
        """Raw BM25 scores of every item for `text` (zeros when nothing in it is indexed)."""
        tokens = self._bm25s.tokenize([text], stopwords=self.stopwords, stemmer=self._stemmer,
                                      return_ids=False, show_progress=False)[0]
        if not tokens:
            return np.zeros(self.size, dtype=np.float32)
        return np.asarray(self.index.get_scores(tokens), dtype=np.float32)

    def scores(self, ctx: RequestContext) -> list[np.ndarray]:
        user = ctx.user_words  # the titles named count as items, not as words
        last = self.cached_query(user[-1][1]) if user else np.zeros(self.size, np.float32)
        dialogue = np.zeros(self.size, np.float32)
        for age, text in user:
            dialogue += _decay(age) * _scaled(self.cached_query(text))
        negated = np.zeros(self.size, np.float32)
        if ctx.negated_phrases:
            negated = self.query(" ".join(ctx.negated_phrases))
        return [_scaled(last), _scaled(dialogue), _scaled(negated)]


class DenseSignal:
    """`encode` maps texts to unit vectors with the model that embedded `item_matrix`."""

    features = ("dense_last", "dense_dialogue", "dense_liked_items")

    def __init__(self, item_matrix: np.ndarray, encode: Callable[[Sequence[str]], np.ndarray],
                 row_of: dict[str, int]):
        self.matrix = np.ascontiguousarray(item_matrix, dtype=np.float32)
        self.encode = encode
        self.row_of = row_of
        self.vectors = TextCache(lambda text: encode([text])[0], size=2048)

    def scores(self, ctx: RequestContext) -> list[np.ndarray]:
        size = self.matrix.shape[0]
        user = [(age, t) for age, t in ctx.user_texts if says_what_is_wanted(t)][-4:]
        last = dialogue = liked = np.zeros(size, np.float32)
        if user:
            vectors = np.stack(self.vectors.many([t for _, t in user], compute_many=self.encode))
            weights = np.array([_decay(age) for age, _ in user], dtype=np.float32)
            query = (weights[:, None] * vectors).sum(axis=0)
            query /= max(float(np.linalg.norm(query)), 1e-6)
            last, dialogue = (self.matrix @ np.stack([vectors[-1], query], axis=1)).T
        rows = [self.row_of[m.item.item_id] for m in ctx.items
                if m.by_user and not m.negative and m.item.item_id in self.row_of]
        if rows:
            liked = (self.matrix @ self.matrix[rows].T).max(axis=1)
        return [np.asarray(v, dtype=np.float32) for v in (last, dialogue, liked)]


class MentionSignal:
    features = ("named_by_user", "named_by_system", "rejected_or_seen")

    def __init__(self, row_of: dict[str, int], size: int):
        self.row_of = row_of
        self.size = size

    def scores(self, ctx: RequestContext) -> list[np.ndarray]:
        user, system, rejected = (np.zeros(self.size, np.float32) for _ in range(3))
        for m in ctx.items:
            row = self.row_of.get(m.item.item_id)
            if row is None:
                continue
            weight = _decay(m.age)
            if m.by_user and (m.negative or m.seen):
                rejected[row] = max(rejected[row], weight)
            elif m.by_user:
                user[row] = max(user[row], weight)
            else:
                system[row] = max(system[row], weight)
        return [user, system, rejected]


class GraphSignal:
    """Items x entities incidence from the knowledge graph, weighted by inverse frequency."""

    features = ("kg_named_entities", "kg_negated_entities", "kg_liked_items")

    def __init__(self, catalog: Catalog, edges: dict[int, list[int]]):
        self.size = len(catalog.items)
        self.row_of = {item.item_id: i for i, item in enumerate(catalog.items)}
        rows, cols = [], []
        for i, item in enumerate(catalog.items):
            for entity in set(edges.get(item.entity_id, ())) if item.entity_id is not None else ():
                rows.append(i)
                cols.append(entity)
        n_entities = max(cols, default=-1) + 1
        incidence = sparse.csr_matrix((np.ones(len(rows), np.float32), (rows, cols)),
                                      shape=(self.size, n_entities))
        frequency = np.asarray(incidence.sum(axis=0)).ravel()
        self.idf = np.log((self.size + 1) / (frequency + 1)).astype(np.float32)
        weighted = incidence.multiply(self.idf[None, :]).tocsr()
        norms = np.sqrt(np.asarray(weighted.multiply(weighted).sum(axis=1)).ravel())
        self.normalized = sparse.diags(1 / np.maximum(norms, 1e-6)) @ weighted
        self.incidence = incidence.tocsc()
        self.n_entities = n_entities

    @classmethod
    def from_kg_file(cls, catalog: Catalog, kg_path: Path) -> "GraphSignal":
        graph = json.loads(Path(kg_path).read_text(encoding="utf-8"))
        edges = {int(subject): [int(obj) for _, obj in pairs] for subject, pairs in graph.items()}
        return cls(catalog, edges)

    def _entity_vector(self, ctx: RequestContext, negative: bool) -> np.ndarray:
        weights = np.zeros(self.n_entities, np.float32)
        for m in ctx.entities:
            if m.negative == negative and 0 <= m.entity_id < self.n_entities:
                weights[m.entity_id] = max(weights[m.entity_id], _decay(m.age) * self.idf[m.entity_id])
        return np.asarray(self.incidence @ weights, dtype=np.float32).ravel()

    def scores(self, ctx: RequestContext) -> list[np.ndarray]:
        named = _scaled(self._entity_vector(ctx, negative=False))
        negated = _scaled(self._entity_vector(ctx, negative=True))
        liked = np.zeros(self.size, np.float32)
        rows = [self.row_of[m.item.item_id] for m in ctx.items
                if m.by_user and not m.negative and m.item.item_id in self.row_of]
        if rows:
            profile = np.asarray(self.normalized[rows].sum(axis=0)).ravel()
            liked = _scaled(np.asarray(self.normalized @ profile, dtype=np.float32).ravel())
        return [named, negated, liked]


class CoMentionSignal:
    features = ("comention_liked", "comention_any")

    def __init__(self, stats: ItemStatistics, row_of: dict[str, int], size: int):
        self.matrix = stats.comention_matrix(row_of, size)  # cosine-normalised co-mention counts
        self.row_of = row_of
        self.size = size

    def scores(self, ctx: RequestContext) -> list[np.ndarray]:
        liked = np.zeros(self.size, np.float32)
        anything = np.zeros(self.size, np.float32)
        for m in ctx.items:
            row = self.row_of.get(m.item.item_id)
            if row is None:
                continue
            column = self.matrix[:, row].toarray().ravel() * _decay(m.age)
            anything += column
            if m.by_user and not m.negative:
                liked += column
        return [_scaled(liked), _scaled(anything)]


def _log_scaled(counts: np.ndarray) -> np.ndarray:
    return (np.log1p(counts) / max(math.log1p(float(counts.max(initial=0))), 1e-6)).astype(np.float32)


class PopularitySignal:
    features = ("popularity", "popularity_recommended")

    def __init__(self, stats: ItemStatistics, row_of: dict[str, int], size: int):
        self.named = _log_scaled(stats.popularity_vector(row_of, size))
        self.recommended = _log_scaled(stats.popularity_vector(row_of, size, stats.recommended))

    def scores(self, ctx: RequestContext) -> list[np.ndarray]:
        return [self.named, self.recommended]


class CatalogPriorSignal:
    """What the catalog itself says about an item's appeal, whatever the dialogue: how
    recent it is and how much the knowledge graph knows about it (well-known films have
    more people and genres linked)."""

    features = ("recent", "graph_degree")

    def __init__(self, catalog: Catalog, graph: "GraphSignal"):
        years = np.array([item.year or 0 for item in catalog.items], dtype=np.float32)
        self.recent = np.where(years > 0, np.clip((years - 1950) / 70, 0, 1), 0).astype(np.float32)
        degree = np.asarray(graph.incidence.sum(axis=1)).ravel().astype(np.float32)
        self.degree = _log_scaled(degree)

    def scores(self, ctx: RequestContext) -> list[np.ndarray]:
        return [self.recent, self.degree]


def feature_names(signals: Sequence[Signal]) -> list[str]:
    return [name for signal in signals for name in signal.features]


def feature_matrix(signals: Sequence[Signal], ctx: RequestContext) -> np.ndarray:
    """(items x features) float32, columns in `feature_names` order."""
    columns, sizes = [], {}
    for signal in signals:
        for column in signal.scores(ctx):
            columns.append(column)
            sizes.setdefault(len(column), type(signal).__name__)
    if len(sizes) > 1:  # name the signal built over another catalog rather than numpy's bare shape error
        raise ValueError("signals score catalogs of different sizes: "
                         + ", ".join(f"{name} {size}" for size, name in sizes.items()))
    return np.stack(columns, axis=1).astype(np.float32)


def optional(value: Optional[Signal]) -> list[Signal]:
    return [value] if value is not None else []
