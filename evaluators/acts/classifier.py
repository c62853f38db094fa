"""A small multi-label logistic regression in plain numpy.

One independent sigmoid per intent (one-vs-rest), trained full-batch with Adam
on the L2-regularised log loss. Features are standardised with the training
mean and spread, which are stored with the weights so inference needs nothing
but numpy.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))


@dataclass
class MultiLabelLogReg:
    labels: list[str]
    weights: np.ndarray  # (n_features, n_labels)
    bias: np.ndarray  # (n_labels,)
    mean: np.ndarray  # (n_features,)
    scale: np.ndarray  # (n_features,)
    thresholds: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def __post_init__(self) -> None:
        if self.thresholds.size == 0:
            self.thresholds = np.full(len(self.labels), 0.5)

    @property
    def n_features(self) -> int:
        return int(self.weights.shape[0])

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        X = np.atleast_2d(np.asarray(X, dtype=np.float64))
        if X.shape[1] != self.n_features:
            raise ValueError(f"expected {self.n_features} features, got {X.shape[1]}")
        return _sigmoid(((X - self.mean) / self.scale) @ self.weights + self.bias)

    def predict(self, X: np.ndarray) -> list[set[str]]:
        proba = self.predict_proba(X)
        return [{lab for lab, p, t in zip(self.labels, row, self.thresholds) if p >= t} for row in proba]

    def to_arrays(self, prefix: str) -> dict[str, np.ndarray]:
        return {
            f"{prefix}weights": self.weights.astype(np.float32),
            f"{prefix}bias": self.bias.astype(np.float32),
            f"{prefix}mean": self.mean.astype(np.float32),
            f"{prefix}scale": self.scale.astype(np.float32),
            f"{prefix}thresholds": self.thresholds.astype(np.float32),
        }

    @classmethod
    def from_arrays(cls, arrays, prefix: str, labels: list[str]) -> "MultiLabelLogReg":
        get = lambda k: np.asarray(arrays[f"{prefix}{k}"], dtype=np.float64)  # noqa: E731
        return cls(labels=list(labels), weights=get("weights"), bias=get("bias"), mean=get("mean"),
                   scale=get("scale"), thresholds=get("thresholds"))


def fit(
    X: np.ndarray,
    Y: np.ndarray,
    labels: list[str],
    *,
    l2: float = 1e-2,
    epochs: int = 400,
    lr: float = 0.05,
    positive_weight: float = 1.0,
    seed: int = 0,
    known: np.ndarray | None = None,
    row_weight: np.ndarray | None = None,
) -> MultiLabelLogReg:
    """Fit one logistic regression per column of the 0/1 matrix `Y`.

    `positive_weight` > 1 up-weights the rarer positive examples. `known` (same shape as `Y`,
    0/1) masks labels a source does not give (weak labels cover only some intents);
    `row_weight` weighs whole rows (one source against another).
    Deterministic for a given input (full batch, fixed initialisation).
    """
    X = np.asarray(X, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    n, d = X.shape
    mean = X.mean(axis=0)
    scale = X.std(axis=0)
    scale[scale < 1e-8] = 1.0
    Z = (X - mean) / scale
    rng = np.random.default_rng(seed)
    W = rng.normal(0.0, 1e-3, size=(d, Y.shape[1]))
    sample_w = np.where(Y > 0, positive_weight, 1.0)
    if known is not None:
        sample_w = sample_w * np.asarray(known, dtype=np.float64)
    if row_weight is not None:
        sample_w = sample_w * np.asarray(row_weight, dtype=np.float64)[:, None]
    norm = np.maximum(sample_w.sum(axis=0), 1e-9)
    prior = np.clip((Y * sample_w).sum(axis=0) / norm, 1e-3, 1 - 1e-3)
    b = np.log(prior / (1 - prior))
    m_W, v_W = np.zeros_like(W), np.zeros_like(W)
    m_b, v_b = np.zeros_like(b), np.zeros_like(b)
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    for t in range(1, epochs + 1):
        P = _sigmoid(Z @ W + b)
        G = (P - Y) * sample_w / norm
        gW = Z.T @ G + l2 * W
        gb = G.sum(axis=0)
        m_W = beta1 * m_W + (1 - beta1) * gW
        v_W = beta2 * v_W + (1 - beta2) * gW**2
        m_b = beta1 * m_b + (1 - beta1) * gb
        v_b = beta2 * v_b + (1 - beta2) * gb**2
        corr1, corr2 = 1 - beta1**t, 1 - beta2**t
        W -= lr * (m_W / corr1) / (np.sqrt(v_W / corr2) + eps)
        b -= lr * (m_b / corr1) / (np.sqrt(v_b / corr2) + eps)
    return MultiLabelLogReg(labels=list(labels), weights=W, bias=b, mean=mean, scale=scale)
