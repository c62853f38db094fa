"""How the signals add up: one weight per feature, learnt pairwise.

An item's score is `features @ weights`. The weights come from a pairwise
logistic regression (RankNet with a linear scorer): for every training turn and
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


@dataclass
class TrainingTurn:
    features: np.ndarray  # (items x features)
    targets: list[int]  # rows of the target items


@dataclass
class LinearCombination:
    features: list[str]
    weights: np.ndarray
    version: str = "untrained"
    notes: dict = field(default_factory=dict)

    def score(self, matrix: np.ndarray) -> np.ndarray:
        return matrix @ self.weights

    def to_json(self) -> dict:
        return {
            "version": self.version,
            "features": list(self.features),
            "weights": [round(float(w), 6) for w in self.weights],
            "notes": self.notes,
        }

    def save(self, path: Path) -> None:
        Path(path).write_text(json.dumps(self.to_json(), indent=2) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: Path, expected_features: Optional[Sequence[str]] = None) -> "LinearCombination":
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        combination = cls(list(data["features"]), np.asarray(data["weights"], np.float32),
                          data.get("version", "unknown"), data.get("notes", {}))
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


def train_pairwise(
    turns: Sequence[TrainingTurn],
    features: Sequence[str],
    *,
    seed: int,
    rounds: int = 3,
    hard: int = 30,
    random: int = 30,
    regularization: float = 1.0,
    start: Optional[np.ndarray] = None,
) -> LinearCombination:
    """Learn the weights; each round re-draws competitors under the weights learnt so far."""
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(seed)
    weights = np.asarray(start if start is not None else np.ones(len(features)), np.float32)
    collected: list[np.ndarray] = []
    for _ in range(rounds):
        # Pairs of earlier rounds stay: training on the latest hard competitors alone oscillates.
        collected.append(_pairs(turns, weights, rng, hard, random))
        differences = np.concatenate(collected)
        if len(differences) == 0:
            raise ValueError("no training pairs: every turn needs at least one target item")
        # Symmetric pairs (d, 1) and (-d, 0) keep the model without an intercept balanced.
        x = np.concatenate([differences, -differences])
        y = np.concatenate([np.ones(len(differences)), np.zeros(len(differences))])
        model = LogisticRegression(C=regularization, fit_intercept=False, max_iter=2000, tol=1e-6)
        model.fit(x, y)
        weights = model.coef_.ravel().astype(np.float32)
    digest = hashlib.sha256(np.round(weights, 6).tobytes()).hexdigest()[:8]
    notes = {"seed": seed, "rounds": rounds, "hard": hard, "random": random,
             "regularization": regularization, "turns": len(turns)}
    return LinearCombination(list(features), weights, f"pairwise-{digest}", notes)
