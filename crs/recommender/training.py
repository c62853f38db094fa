"""Learning the recommender from iEvaLM-format training turns (never the test files).

A turn is one line of a `*_data_processed.jsonl` file: `context` (utterances,
user first and last), `entity` (names linked in it) and `rec` (target item
names). `scripts/train_recommender.py` drives this module:

1. dialogues are split by id with a seeded generator into a fitting part and a
   development part (model selection only);
2. the fitting part is split into folds (five): the counts (popularity,
   co-mentions) that a turn's features use come from the other folds, so the
   weights never learn from counts that already contain the turn's own targets,
   and the counts they learn from are nearly as full as the shipped ones;
3. weights are learnt pairwise on the fitting part (`combination.train_pairwise`)
   and Recall@k is measured on the development part, with counts from the whole
   fitting part;
4. the shipped counts use every training dialogue; the shipped weights are
   those learnt in step 3.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence

import numpy as np

from arena.catalogs.catalog import Catalog
from crs.recommender.combination import TrainingTurn
from crs.recommender.context import RequestContext
from crs.recommender.recommender import Recommender
from crs.recommender.signals import feature_matrix
from crs.recommender.statistics import ItemStatistics

POOL_PER_FEATURE = 40  # candidates kept per feature for the pairwise training
POOL_RANDOM = 40


@dataclass(frozen=True)
class Turn:
    dialog_id: str
    context: list[str]
    targets: list[str]  # catalog item ids
    named: list[str]  # catalog item ids of the items named in the context


def read_rows(paths: Iterable[Path]) -> Iterator[tuple[str, dict]]:
    """(dialogue key: file stem and `dialog_id`, row) of every line of iEvaLM processed files."""
    for path in paths:
        with Path(path).open(encoding="utf-8") as lines:
            for line in lines:
                if line.strip():
                    row = json.loads(line)
                    yield f"{Path(path).stem}:{row.get('dialog_id')}", row


def read_turns(paths: Iterable[Path], catalog: Catalog) -> tuple[list[Turn], int]:
    """Turns with at least one target in the catalog; also how many target names were unknown."""
    by_name = {}
    for item in catalog.items:
        by_name.setdefault(item.name, item.item_id)
    turns, unknown = [], 0
    for key, row in read_rows(paths):
        targets = [by_name[name] for name in row.get("rec") or () if name in by_name]
        unknown += sum(1 for name in row.get("rec") or () if name not in by_name)
        named = [by_name[name] for name in row.get("entity") or () if name in by_name]
        if targets and row.get("context"):
            turns.append(Turn(key, list(row["context"]), targets, named))
    return turns, unknown


def dialogue_item_sets(turns: Sequence[Turn]) -> list[list[str]]:
    """Every item a dialogue names or recommends, one list per dialogue."""
    items: dict[str, set[str]] = {}
    for turn in turns:
        items.setdefault(turn.dialog_id, set()).update(turn.named, turn.targets)
    return [sorted(v) for _, v in sorted(items.items())]


def split_dialogues(turns: Sequence[Turn], seed: int, parts: Sequence[float]) -> list[list[Turn]]:
    """Turns grouped by a seeded random split of their dialogue ids (fractions `parts`)."""
    ids = sorted({t.dialog_id for t in turns})
    order = np.random.default_rng(seed).permutation(len(ids))
    bounds = np.cumsum([0.0, *parts]) / sum(parts) * len(ids)
    group = {}
    for position, index in enumerate(order):
        group[ids[index]] = int(np.searchsorted(bounds, position, side="right") - 1)
    out: list[list[Turn]] = [[] for _ in parts]
    for turn in turns:
        out[min(group[turn.dialog_id], len(parts) - 1)].append(turn)
    return out


def candidate_pool(matrix: np.ndarray, targets: Sequence[int], rng: np.random.Generator) -> np.ndarray:
    rows = set(int(t) for t in targets)
    for column in range(matrix.shape[1]):
        values = matrix[:, column]
        if not values.any():
            continue
        top = np.argpartition(-values, POOL_PER_FEATURE)[:POOL_PER_FEATURE]
        rows.update(int(r) for r in top if values[r] > 0)
    rows.update(int(r) for r in rng.integers(0, matrix.shape[0], POOL_RANDOM))
    return np.asarray(sorted(rows))


def training_turns(recommender_for: Callable[[Turn], Recommender], turns: Sequence[Turn],
                   contexts: Callable[[Recommender, Turn], RequestContext], seed: int) -> list[TrainingTurn]:
    """Features of each turn's candidate pool (targets included), for the pairwise fit."""
    rng = np.random.default_rng(seed)
    out = []
    for turn in turns:
        recommender = recommender_for(turn)
        matrix = feature_matrix(recommender.signals, contexts(recommender, turn))
        row_of = recommender._row_of
        targets = [row_of[t] for t in turn.targets if t in row_of]
        pool = candidate_pool(matrix, targets, rng)
        position = {row: i for i, row in enumerate(pool)}
        out.append(TrainingTurn(matrix[pool], [position[t] for t in targets]))
    return out


def recall_per_target(rankings: Iterable[Sequence[str]], targets: Iterable[Sequence[str]],
                      ks: Sequence[int]) -> tuple[dict[int, float], int]:
    """(Recall@k for each k, number of samples) as iEvaLM counts it: every target of every
    turn is one sample, a hit when it is among the first k of that turn's ranking."""
    hits = {k: 0 for k in ks}
    samples = 0
    for ranking, wanted in zip(rankings, targets):
        position: dict[str, int] = {}
        for index, name in enumerate(ranking):
            position.setdefault(name, index)
        for target in wanted:
            samples += 1
            where = position.get(target)
            for k in ks:
                hits[k] += where is not None and where < k
    return {k: (hits[k] / samples if samples else 0.0) for k in ks}, samples


def full_matrices(recommender: Recommender, turns: Sequence[Turn],
                  contexts: Callable[[Recommender, Turn], RequestContext]) -> list[np.ndarray]:
    """Each turn's (items x features) matrix over the whole catalog, as float16 to save memory."""
    return [feature_matrix(recommender.signals, contexts(recommender, t)).astype(np.float16) for t in turns]


def evaluate(recommender: Recommender, turns: Sequence[Turn], matrices: Sequence[np.ndarray],
             combination, ks: Sequence[int]) -> dict[int, float]:
    """Recall@k of full-catalog rankings (nothing excluded, as in the offline protocol)."""
    items = recommender.catalog.items
    rankings = []
    for matrix in matrices:
        scores = np.asarray(combination.score(matrix.astype(np.float32)), np.float32)
        top = np.argpartition(-scores, max(ks))[: max(ks)]
        top = top[np.argsort(-scores[top], kind="stable")]
        rankings.append([items[i].item_id for i in top])
    return recall_per_target(rankings, [t.targets for t in turns], ks)[0]


def statistics_of(turns: Sequence[Turn], elsewhere_sets: Sequence[Sequence[str]] = ()) -> ItemStatistics:
    """Counts of `turns`' dialogues; `elsewhere_sets`: the other dataset's dialogues' items."""
    return ItemStatistics.from_dialogues(dialogue_item_sets(turns), [t for turn in turns for t in turn.targets],
                                         elsewhere_sets)
