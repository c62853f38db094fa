"""How the signals add up: one weight per feature learnt pairwise, or LambdaMART trees.

An item's score is `features @ weights`. The weights come from a pairwise
logistic regression (RankNet with a linear scorer, fitted with scipy's L-BFGS-B so that
evidence never counts against an item): for every training turn and
target item, the target's feature vector minus that of a competing item should
come out positive. Competitors are the items ranked highest by the current
weights (the ones that matter for Recall@k) plus a few random ones, drawn from a
seeded generator, so the same data and seed give the same weights.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from arena.runtime.imports import heavy_imports


@dataclass
class TrainingTurn:
    features: np.ndarray  # (items x features)
    targets: list[int]  # rows of the target items


# Products of two signals: popularity counts among the items that match the request, not
# against them (a heist film nobody in the training dialogues named still beats a popular comedy).
INTERACTIONS = (("bm25_last", "popularity"), ("dense_last", "popularity"), ("dense_dialogue", "popularity"),
                ("kg_named_entities", "popularity"), ("bm25_last", "dense_last"),
                ("kg_liked_items", "popularity"), ("dense_liked_items", "popularity"),
                ("comention_any", "popularity"), ("recent", "popularity"), ("dense_dialogue", "popularity_elsewhere"),
                ("comention_any", "popularity_elsewhere"))
# Evidence for an item may not count against it, nor a ruled-out word for it; the logged
# dialogues alone would sometimes learn either (collinear signals cancel out).
NEVER_NEGATIVE = ("bm25_last", "bm25_dialogue", "dense_last", "dense_dialogue", "dense_liked_items",
                  "kg_named_entities", "kg_liked_items", "comention_liked", "comention_any", "popularity",
                  "popularity_recommended", "popularity_elsewhere", "comention_elsewhere")
NEVER_POSITIVE = ("bm25_negated", "kg_negated_entities")


def expand(matrix: np.ndarray, features: Sequence[str], interactions: Sequence[tuple[str, str]]) -> np.ndarray:
    """The features followed by the products named in `interactions` (those present)."""
    index = {name: i for i, name in enumerate(features)}
    extra = [matrix[:, index[a]] * matrix[:, index[b]] for a, b in interactions if a in index and b in index]
    return np.concatenate([matrix, np.stack(extra, axis=1)], axis=1) if extra else matrix


def usable_interactions(features: Sequence[str]) -> list[tuple[str, str]]:
    return [(a, b) for a, b in INTERACTIONS if a in features and b in features]


@dataclass
class LinearCombination:
    features: list[str]
    weights: np.ndarray  # one per feature, then one per interaction
    version: str = "untrained"
    notes: dict = field(default_factory=dict)
    interactions: list[tuple[str, str]] = field(default_factory=list)

    def score(self, matrix: np.ndarray) -> np.ndarray:
        return expand(matrix, self.features, self.interactions) @ self.weights

    def to_json(self) -> dict:
        return {
            "version": self.version,
            "features": list(self.features),
            "interactions": [list(pair) for pair in self.interactions],
            "weights": [round(float(w), 6) for w in self.weights],
            "notes": self.notes,
        }

    def save(self, path: Path) -> None:
        Path(path).write_text(json.dumps(self.to_json(), indent=2) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: Path, expected_features: Optional[Sequence[str]] = None) -> "LinearCombination":
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        combination = cls(list(data["features"]), np.asarray(data["weights"], np.float32),
                          data.get("version", "unknown"), data.get("notes", {}),
                          [tuple(pair) for pair in data.get("interactions", [])])
        if expected_features is not None and list(expected_features) != combination.features:
            raise ValueError(f"{path} was trained for features {combination.features}, "
                             f"not {list(expected_features)}: retrain with scripts/train_recommender.py")
        return combination

    @classmethod
    def uniform(cls, features: Sequence[str], overrides: Optional[dict[str, float]] = None) -> "LinearCombination":
        weights = np.asarray([(overrides or {}).get(name, 0.0) for name in features], np.float32)
        return cls(list(features), weights, "hand-set")



def _pairs(turns: Sequence[TrainingTurn], weights: np.ndarray, rng: np.random.Generator,
           hard: int, random: int) -> np.ndarray:
    differences = []
    for turn in turns:
        scores = turn.features @ weights
        targets = set(turn.targets)
        order = np.argsort(-scores, kind="stable")
        competitors = [r for r in order[: hard + len(targets)] if r not in targets][:hard]
        pool = rng.integers(0, len(scores), size=random)
        competitors += [int(r) for r in pool if int(r) not in targets]
        for target in turn.targets:
            differences.append(turn.features[target][None, :] - turn.features[competitors])
    return np.concatenate(differences) if differences else np.zeros((0, len(weights)), np.float32)


def _fit_logistic(differences: np.ndarray, regularization: float,
                  bounds: list[tuple[Optional[float], Optional[float]]], start: np.ndarray) -> np.ndarray:
    """Pairwise logistic regression without intercept, weights within `bounds` (L-BFGS-B)."""
    with heavy_imports():
        from scipy.optimize import minimize
        from scipy.special import expit, log1p

    x = differences.astype(np.float64)
    n = len(x)

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        margin = x @ w
        # log(1 + exp(-m)), computed stably
        value = np.where(margin > 0, log1p(np.exp(-margin)), -margin + log1p(np.exp(margin))).sum()
        grad = -(x * expit(-margin)[:, None]).sum(axis=0)
        return (value + 0.5 * w @ w / regularization) / n, (grad + w / regularization) / n

    result = minimize(loss, start.astype(np.float64), jac=True, method="L-BFGS-B", bounds=bounds,
                      options={"maxiter": 2000})
    return result.x.astype(np.float32)


def train_pairwise(
    turns: Sequence[TrainingTurn],
    features: Sequence[str],
    *,
    seed: int,
    rounds: int = 3,
    hard: int = 30,
    random: int = 30,
    regularization: float = 1.0,
    interactions: Optional[Sequence[tuple[str, str]]] = None,
) -> LinearCombination:
    """Learn the weights; each round re-draws competitors under the weights learnt so far.
    Evidence features stay >= 0 and ruled-out features <= 0 (`NEVER_NEGATIVE`, `NEVER_POSITIVE`)."""
    pairs = list(usable_interactions(features) if interactions is None else interactions)
    expanded = [TrainingTurn(expand(t.features, features, pairs), t.targets) for t in turns]
    names = list(features) + [f"{a}*{b}" for a, b in pairs]
    bounds = [(0.0, None) if n in NEVER_NEGATIVE or "*" in n else (None, 0.0) if n in NEVER_POSITIVE
              else (None, None) for n in names]
    rng = np.random.default_rng(seed)
    weights = np.asarray([0.0 if b == (None, 0.0) else 1.0 for b in bounds], np.float32)
    collected: list[np.ndarray] = []
    for _ in range(rounds):
        # Pairs of earlier rounds stay: training on the latest hard competitors alone oscillates.
        collected.append(_pairs(expanded, weights, rng, hard, random))
        differences = np.concatenate(collected)
        if len(differences) == 0:
            raise ValueError("no training pairs: every turn needs at least one target item")
        weights = _fit_logistic(differences, regularization, bounds, weights)
    digest = hashlib.sha256(np.round(weights, 6).tobytes()).hexdigest()[:8]
    notes = {"seed": seed, "rounds": rounds, "hard": hard, "random": random,
             "regularization": regularization, "turns": len(turns)}
    return LinearCombination(list(features), weights, f"pairwise-{digest}", notes, pairs)


class RankerCombination:
    """LambdaMART (LightGBM's `lambdarank`): trees over the same features, so that a signal can
    matter in one situation and not another (popularity when nothing specific was asked)."""

    kind = "lambdamart"

    def __init__(self, features: Sequence[str], booster, version: str, notes: Optional[dict] = None):
        self.features = list(features)
        self.booster = booster
        self.version = version
        self.notes = dict(notes or {})

    def score(self, matrix: np.ndarray) -> np.ndarray:
        return self.booster.predict(np.asarray(matrix, np.float32), num_threads=1)

    def save(self, path: Path) -> None:
        """`path` (JSON: version, features, notes) and the trees beside it (`<stem>.trees.txt`)."""
        trees = Path(path).with_suffix(".trees.txt")
        trees.write_text(self.booster.model_to_string(), encoding="utf-8")
        data = {"kind": self.kind, "version": self.version, "features": self.features,
                "trees": trees.name, "notes": self.notes}
        Path(path).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> "RankerCombination":
        import lightgbm

        data = json.loads(Path(path).read_text(encoding="utf-8"))
        text = (Path(path).parent / data["trees"]).read_text(encoding="utf-8")
        return cls(data["features"], lightgbm.Booster(model_str=text), data["version"], data.get("notes"))


def load_combination(path: Path):
    """The combination saved at `path`, linear or trees."""
    kind = json.loads(Path(path).read_text(encoding="utf-8")).get("kind", "linear")
    return RankerCombination.load(path) if kind == RankerCombination.kind else LinearCombination.load(path)


def train_lambdamart(turns: Sequence[TrainingTurn], features: Sequence[str], *, seed: int,
                     trees: int = 300, leaves: int = 15, learning_rate: float = 0.05,
                     threads: int = 2) -> RankerCombination:
    """LambdaMART on each turn's candidate pool (targets labelled 1), deterministic for a seed."""
    import lightgbm

    matrix = np.concatenate([t.features for t in turns]).astype(np.float32)
    labels = np.zeros(len(matrix), np.float32)
    offset = 0
    for turn in turns:
        labels[[offset + r for r in turn.targets]] = 1
        offset += len(turn.features)
    params = {"objective": "lambdarank", "num_leaves": leaves, "learning_rate": learning_rate,
              "min_data_in_leaf": 50, "feature_fraction": 0.9, "bagging_fraction": 0.8, "bagging_freq": 1,
              "lambdarank_truncation_level": 50, "seed": seed, "deterministic": True, "force_row_wise": True,
              "num_threads": threads, "verbosity": -1}
    data = lightgbm.Dataset(matrix, labels, group=[len(t.features) for t in turns], feature_name=list(features))
    booster = lightgbm.train(params, data, num_boost_round=trees)
    digest = hashlib.sha256(booster.model_to_string().encode()).hexdigest()[:8]
    notes = {"seed": seed, "trees": trees, "leaves": leaves, "learning_rate": learning_rate, "turns": len(turns)}
    return RankerCombination(features, booster, f"lambdamart-{digest}", notes)
