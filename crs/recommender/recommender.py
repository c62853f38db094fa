"""The offline recommender: signals over the catalog, combined by learnt weights.

    recommender = load_recommender("redial", retriever)          # once per process
    ranked = recommender.recommend(dialogue, k=50, exclude={...})  # [(CatalogItem, score)], best first

`recommend` takes an `arena.dialogue.Dialogue` and ranks as a live system should:
titles the user named, rejected or has seen are left out (`exclude` adds more,
e.g. items already shown), what the user ruled out always costs, and only the
items matching the request best compete (`live_scores`). `rank_texts` takes plain
utterances (the evaluation files) and ranks by the learnt combination alone with
every item rankable, as the iEvaLM offline protocol does.

Artifacts live in `assets/recommender/<dataset>/`: `statistics.json`
(popularity and co-mention counts) and `weights.json` (the learnt combination; LambdaMART
trees beside it in `weights.trees.txt`);
`Recommender.version` names both, for citing with a score or ranking.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional, Sequence

import numpy as np
from threadpoolctl import ThreadpoolController

from arena.catalogs.catalog import CATALOG_DIR, Catalog, CatalogItem, load_catalog
from arena.runtime.config import ASSETS_DIR
from arena.dialogue import Dialogue, Role
from arena.titles.phrases import normalize
from crs.recommender.combination import LinearCombination, load_combination
from crs.recommender.context import RequestContext, read_context
from crs.recommender.elsewhere import ElsewhereSignal
from crs.recommender.signals import (
    CatalogPriorSignal,
    CoMentionSignal,
    DenseSignal,
    GraphSignal,
    LexicalSignal,
    MentionSignal,
    PopularitySignal,
    Signal,
    feature_matrix,
    feature_names,
)
from crs.recommender.statistics import ItemStatistics

RECOMMENDER_DIR = ASSETS_DIR / "recommender"
NEGATION_FEATURES = ("bm25_negated", "kg_negated_entities")
# Live ranking first keeps the items that best match the request itself, then orders them by
# the learnt weights (see `live_scores`).
MATCH_FEATURES = ("bm25_last", "dense_last", "kg_named_entities", "kg_liked_items", "dense_liked_items",
                  "comention_liked")
EARLIER_MATCH_FEATURES = ("bm25_dialogue", "dense_dialogue")
POPULARITY_FEATURES = ("popularity", "popularity_recommended", "popularity_elsewhere")
LIVE_CANDIDATES = 40
NEGATION_PENALTY = 3.0  # live ranking: score lost by an item fully matching what the user ruled out
ALGORITHM = "signals-v2"  # v2: counts from IARD and the other dataset (`elsewhere.py`)
# Until weights are learnt for a feature set: lexical match first, popularity breaks ties.
HAND_WEIGHTS = {"bm25_last": 1.0, "bm25_dialogue": 0.5, "bm25_negated": -0.5, "popularity": 0.3,
                "dense_last": 1.0, "dense_dialogue": 0.5, "dense_liked_items": 0.5,
                "named_by_user": 0.5, "rejected_or_seen": -2.0, "kg_named_entities": 1.0,
                "kg_negated_entities": -1.0, "kg_liked_items": 0.5, "comention_liked": 0.5}


_BLAS: Optional[ThreadpoolController] = None


def _one_blas_thread():
    """One BLAS thread for the block. The libraries are looked up once, at the first ranking (each
    `threadpool_limits` call would scan the loaded libraries again: a few ms a turn)."""
    global _BLAS
    if _BLAS is None:
        _BLAS = ThreadpoolController()
    return _BLAS.limit(limits=1, user_api="blas")


@dataclass(frozen=True)
class Ranked:
    item: CatalogItem
    score: float


class Recommender:
    def __init__(self, catalog: Catalog, signals: Sequence[Signal],
                 combination=None, artifact_version: str = "none"):
        """`combination`: a `LinearCombination` or `RankerCombination` over these signals'
        features (hand-set weights when None)."""
        self.catalog = catalog
        self.signals = list(signals)
        self.features = feature_names(self.signals)
        self.combination = combination or LinearCombination.uniform(self.features, HAND_WEIGHTS)
        if self.combination.features != self.features:
            raise ValueError(f"weights for {self.combination.features} do not fit features {self.features}")
        self.artifact_version = artifact_version
        self._row_of = {item.item_id: row for row, item in enumerate(catalog.items)}

    @property
    def version(self) -> str:
        """Cite this with any ranking: algorithm, artifacts and weights."""
        return f"{ALGORITHM}/{self.catalog.dataset}/{self.artifact_version}/{self.combination.version}"

    # -- reading the dialogue ---------------------------------------------------------------
    def context_of(self, dialogue: Dialogue) -> RequestContext:
        utterances = [u for u in dialogue.utterances if not u.error and u.text is not None]
        return read_context(
            self.catalog,
            [u.text for u in utterances],
            [u.role == Role.USER for u in utterances],
            [[item.item_id for item in u.items] for u in utterances],
        )

    def context_of_texts(self, texts: Sequence[str], first_is_user: bool = True) -> RequestContext:
        """Alternating utterances; the evaluation files start (and end) with the user."""
        n = len(texts)
        from_user = [(i % 2 == 0) == first_is_user for i in range(n)]
        return read_context(self.catalog, texts, from_user)

    # -- ranking -----------------------------------------------------------------------------
    def scores(self, ctx: RequestContext) -> np.ndarray:
        # One BLAS thread: on a small shared machine more threads wait on each other (5x slower).
        with _one_blas_thread():
            return self.combination.score(feature_matrix(self.signals, ctx))

    def rank(self, ctx: RequestContext, k: int = 50, exclude: Iterable[str] = (),
             leave_out_rejected: bool = True, allowed: Optional[np.ndarray] = None) -> list[Ranked]:
        """`leave_out_rejected` is the live behaviour: rejected and seen titles are dropped and
        what the user ruled out ("nothing too gory", "no horror") always counts against an item.
        `allowed` (one flag per catalog item) keeps the live ranking to the items the
        conversation's constraints allow (era, audience, genres), before the best matches are cut."""
        dropped = set(map(str, exclude))
        if not leave_out_rejected:
            return self.top(self.scores(ctx), k, dropped)
        named = {m.item.item_id for m in ctx.items if m.by_user}
        dropped |= named
        ctx.titles_as_words = False  # what was named is left out, so its words bring only lookalikes
        # "Something like Titanic": no Titanic, nor another film of that title.
        titles = {normalize(self.catalog.get(i).title) for i in named if self.catalog.get(i)}
        with _one_blas_thread():
            scores = self.live_scores(feature_matrix(self.signals, ctx), allowed)
        return self.top(scores, k, dropped, titles)

    def live_scores(self, matrix: np.ndarray, allowed: Optional[np.ndarray] = None) -> np.ndarray:
        """Scores for a live conversation. The logged dialogues reward popularity: there, the
        next title is often a popular film whatever was asked. A person asking for a heist film
        means one, so only the `LIVE_CANDIDATES` items matching the request best (its words,
        its meaning, the people and genres and titles it names) compete, in the learnt order.
        Likewise a ruled-out genre or word often stays the topic in the logs, so the learnt
        weights may reward it; live, it always costs `NEGATION_PENALTY`."""
        scores = np.asarray(self.combination.score(matrix), dtype=np.float64)
        for name in NEGATION_FEATURES:
            if name in self.features:
                column = matrix[:, self.features.index(name)]
                scores = scores - column * (self._linear_weight(name) + NEGATION_PENALTY)
        match = self._match(matrix, MATCH_FEATURES, allowed)
        if not match.any():  # "something more recent": the earlier messages say what is wanted
            match = self._match(matrix, EARLIER_MATCH_FEATURES, allowed)
        if not match.any():
            # Nothing but constraints ("a comedy", its genre read as a filter): the learnt weights draw
            # on popularity only through what a request matches, so alone they would put the newest
            # obscure entries first; the items the logged conversations talk of most go first instead.
            popular = sum((matrix[:, self.features.index(name)].astype(np.float64)
                           for name in POPULARITY_FEATURES if name in self.features), np.zeros(len(scores)))
            scores = popular + 1e-3 * scores
        if allowed is not None:
            scores = np.where(allowed, scores, -np.inf)
        if match.any() and len(scores) > LIVE_CANDIDATES:
            cut = np.partition(match, -LIVE_CANDIDATES)[-LIVE_CANDIDATES]
            scores = np.where(match >= cut, scores, -np.inf)
        return scores

    def _match(self, matrix: np.ndarray, names: Sequence[str], allowed: Optional[np.ndarray]) -> np.ndarray:
        """How well each item matches the request by `names`, each feature scaled to [0, 1] (0 where
        `allowed` says no)."""
        match = np.zeros(matrix.shape[0])
        for name in names:
            if name in self.features:
                column = matrix[:, self.features.index(name)].astype(np.float64)
                low, high = float(column.min()), float(column.max())
                if high > low:
                    match += (column - low) / (high - low)
        return match if allowed is None else np.where(allowed, match, 0.0)

    def _linear_weight(self, name: str) -> float:
        weights = getattr(self.combination, "weights", None)
        return float(weights[self.features.index(name)]) if weights is not None else 0.0

    def top(self, scores: np.ndarray, k: int, dropped: Iterable[str] = (),
            blocked_titles: Iterable[str] = ()) -> list[Ranked]:
        """The `k` best-scored items, best first, none of `dropped` nor titled (normalised)
        as in `blocked_titles`, and one per label."""
        blocked = set(blocked_titles)
        scores = np.array(scores, dtype=np.float64)
        dropped = set(dropped)
        for item_id in dropped:
            row = self._row_of.get(item_id)
            if row is not None:
                scores[row] = -np.inf
        # Catalogs list some films twice under one label: show one of them. A few spare rows
        # cover the duplicates; the full sort is the fallback.
        spare = min(len(scores), k + 50)
        head = np.argpartition(-scores, spare - 1)[:spare] if spare < len(scores) else np.arange(len(scores))
        order = head[np.argsort(-scores[head], kind="stable")]
        out = self._unique(order, scores, k, dropped, blocked)
        if len(out) < k and spare < len(scores):
            out = self._unique(np.argsort(-scores, kind="stable"), scores, k, dropped, blocked)
        return out

    def _unique(self, order: np.ndarray, scores: np.ndarray, k: int, dropped: set[str],
                blocked: set[str]) -> list[Ranked]:
        out, labels = [], {normalize(self.catalog.get(i).label) for i in dropped if self.catalog.get(i)}
        for row in order:
            if not np.isfinite(scores[row]) or len(out) >= k:
                break
            item = self.catalog.items[row]
            key = normalize(item.label)
            if key not in labels and (not blocked or normalize(item.title) not in blocked):
                labels.add(key)
                out.append(Ranked(item, float(scores[row])))
        return out

    def recommend(self, dialogue: Dialogue, k: int = 50, exclude: Iterable[str] = (),
                  allowed: Optional[np.ndarray] = None) -> list[Ranked]:
        """The `k` best items for the dialogue so far, best first, never one the user named,
        rejected or has seen (nor another film of that title), nor one in `exclude`, and only
        items `allowed` flags (all when None)."""
        return self.rank(self.context_of(dialogue), k, exclude, allowed=allowed)

    def rank_texts(self, texts: Sequence[str], k: int = 50, exclude: Iterable[str] = ()) -> list[Ranked]:
        """Ranking for plain alternating utterances (user first); nothing is left out
        but `exclude`, as in the offline evaluation protocol."""
        return self.rank(self.context_of_texts(texts), k, exclude, leave_out_rejected=False)


# -- building from the shipped artifacts ----------------------------------------------------
def artifact_dir(dataset: str) -> Path:
    return RECOMMENDER_DIR / dataset


def _file_hash(*paths: Path) -> str:
    digest = hashlib.sha256()
    for path in paths:
        for part in (path, path.with_suffix(".trees.txt")):
            if part.exists():
                digest.update(part.read_bytes())
    return digest.hexdigest()[:10]


def build_signals(catalog: Catalog, stats: ItemStatistics, item_matrix: Optional[np.ndarray],
                  encode=None, kg_path: Optional[Path] = None) -> list[Signal]:
    """Every signal; the dense one only when item embeddings and an encoder are given."""
    row_of = {item.item_id: row for row, item in enumerate(catalog.items)}
    size = len(catalog.items)
    if size == 0:
        raise ValueError(f"catalog {catalog.name} has no items to rank: check the sample that built it")
    kg_path = kg_path or CATALOG_DIR / catalog.dataset / "kg.json"
    graph = GraphSignal.from_kg_file(catalog, kg_path) if kg_path.exists() else GraphSignal(catalog, {})
    signals: list[Signal] = [LexicalSignal(catalog)]
    if item_matrix is not None and encode is not None:
        if item_matrix.shape[0] != size:  # embeddings of another catalog: fail now, not on the first turn
            raise ValueError(f"item embeddings have {item_matrix.shape[0]} rows but catalog {catalog.name} "
                             f"has {size} items: build the retriever over the same catalog")
        signals.append(DenseSignal(item_matrix, encode, row_of))
    signals += [MentionSignal(row_of, size), graph, CoMentionSignal(stats, row_of, size),
                PopularitySignal(stats, row_of, size), ElsewhereSignal(stats, row_of, size),
                CatalogPriorSignal(catalog, graph)]
    return signals


def load_recommender(dataset: str, retriever=None, catalog: Optional[Catalog] = None,
                     directory: Optional[Path] = None) -> Recommender:
    """The recommender of `dataset` from `assets/recommender/<dataset>/`.

    `retriever` (an `arena.catalogs.retrieval.ItemRetriever` over the same catalog) adds the
    dense signal; without it the recommender runs on the other signals.
    """
    # An empty sample is still the catalog asked for (a Catalog of no items is falsy).
    catalog = catalog if catalog is not None else load_catalog(dataset)
    directory = Path(directory or artifact_dir(catalog.dataset))
    stats_path, weights_path = directory / "statistics.json", directory / "weights.json"
    stats = ItemStatistics.load(stats_path) if stats_path.exists() else ItemStatistics()
    matrix = retriever.item_matrix() if retriever is not None else None
    encode = retriever.encode if retriever is not None else None
    signals = build_signals(catalog, stats, matrix, encode)
    features = feature_names(signals)
    combination = None
    if weights_path.exists():
        candidate = load_combination(weights_path)
        if candidate.features == features:
            combination = candidate
    return Recommender(catalog, signals, combination, _file_hash(stats_path, weights_path))
