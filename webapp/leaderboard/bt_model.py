"""The one Bradley-Terry model behind every board: plain and style-controlled ratings and their intervals.

FastChat's formulation: logistic regression on the battle design matrix (one
column per system, +1 for side A and -1 for side B, plus optional style
covariates), a tie counting as half a win for each side (target 0.5), no
intercept. One regularisation serves both boards: `prior_games` virtual tied
battles between every two rated systems, which keep a system that won (or
lost) everything finite and pull systems with little data together. With the
style columns at zero the style-controlled fit *is* the plain fit, so "rank
change from style" compares like with like.

Rows are aggregated where the statistics allow: the plain board fits one row
per (pair, outcome) with its count as weight, so its cost does not grow with
the votes; the style board needs one row per battle (its covariates are
continuous). A bootstrap round is a multinomial count per row (for aggregated
rows, with probabilities proportional to their counts: the same distribution
as resampling battles), and all rounds are fitted together by Newton's method,
the Hessian assembled from per-pair sums so that no (rounds x battles x
parameters) array is ever built.

Why not scipy's L-BFGS-B, as FastChat fits it: measured on one style board of
100k battles (8 systems, 2 style columns; one CPU thread), the 200 bootstrap
rounds take 1.6 s CPU here against 9.7 s with L-BFGS-B over the rounds fitted
together and 15.9 s with one L-BFGS-B run per round, for the same ratings
(within 0.01 Elo points). The refresh of every board at 100k votes (target
10 s, `benchmarks/board_growth.py`, SQLite) took 13.8 s CPU with L-BFGS-B
against 8.0 s with this solver (at 10k votes 3.1 s against 0.8 s): the style
bootstraps are most of it. The plain fits are small either way (one
row per pair and outcome). tests/battle/test_bt_model_reference.py checks this
solver against L-BFGS-B on the same objective, fits and bootstrap rounds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

ELO_INITIAL = 1000.0
ELO_SCALE = 400.0
PRIOR_GAMES = 1.0  # virtual tied battles between every two systems: the model's one regularisation
MAX_STEP = 2.0  # the largest Newton step in any coefficient while far from the optimum (log-odds)
# Keeps the style block of the Hessian invertible when a style column is constant (every difference zero);
# far too small to move any fitted coefficient.
NUMERICAL_FLOOR = 1e-9
ROUND_CHUNK = 32  # bootstrap rounds fitted at once (bounds memory at rounds x battles)


@dataclass(frozen=True)
class Rows:
    """The rows of one fit: side-A and side-B system indices, A's score, style covariates (rows x k, k may be 0)
    and how often each row counts."""

    a: np.ndarray
    b: np.ndarray
    y: np.ndarray
    style: np.ndarray
    count: np.ndarray
    n_systems: int

    @property
    def width(self) -> int:
        return self.n_systems + self.style.shape[1]


def aggregate(a: np.ndarray, b: np.ndarray, y: np.ndarray, n_systems: int) -> Rows:
    """Plain rows: one per distinct (A, B, score), weighted by how often it occurred."""
    if len(a) == 0:
        return Rows(a, b, y, np.zeros((0, 0)), np.zeros(0), n_systems)
    key = np.stack([a, b, np.round(y * 2).astype(int)], axis=1)
    unique, counts = np.unique(key, axis=0, return_counts=True)
    return Rows(unique[:, 0], unique[:, 1], unique[:, 2] / 2.0, np.zeros((len(unique), 0)),
                counts.astype(float), n_systems)


def _prior_terms(beta: np.ndarray, prior_games: float) -> tuple[np.ndarray, np.ndarray]:
    """Gradient and Hessian (rounds x m, rounds x m x m) of the virtual ties between every two systems."""
    m = beta.shape[1]
    diff = beta[:, :, None] - beta[:, None, :]
    p = 1.0 / (1.0 + np.exp(-diff))
    off = np.ones((m, m)) - np.eye(m)
    # Each unordered pair is one virtual tie of weight `prior_games` (row i holds all of i's pairs).
    grad = prior_games * ((p - 0.5) * off).sum(axis=2)
    w = prior_games * p * (1 - p) * off
    hess = -w
    idx = np.arange(m)
    hess[:, idx, idx] = w.sum(axis=2)
    return grad, hess


@dataclass(frozen=True)
class _Design:
    """What every Newton iteration of one set of rows reuses, built once per fit or bootstrap."""

    x: np.ndarray  # rows x width: +1 for A, -1 for B, then the style differences
    x_rows: np.ndarray  # its transpose, contiguous
    hessian_columns: np.ndarray  # rows x (pairs + style products + style x systems)
    pi: np.ndarray
    pj: np.ndarray
    cross: list[tuple[int, int]]


def _design(rows: Rows) -> _Design:
    m, k, n = rows.n_systems, rows.style.shape[1], len(rows.y)
    x = np.zeros((n, m + k))
    x[np.arange(n), rows.a] += 1.0
    x[np.arange(n), rows.b] -= 1.0
    x[:, m:] = rows.style
    low, high = np.minimum(rows.a, rows.b), np.maximum(rows.a, rows.b)
    pairs, pair_of_row = np.unique(low * m + high, return_inverse=True)
    cross = [(i, j) for i in range(k) for j in range(i, k)]
    # Columns whose s-weighted sums are the Hessian's entries: pairs, style x style, style x systems.
    columns = [np.eye(len(pairs))[pair_of_row]] if n else [np.zeros((0, len(pairs)))]
    columns += [np.stack([rows.style[:, i] * rows.style[:, j] for i, j in cross], axis=1)] if k else []
    columns += [x[:, :m] * rows.style[:, [f]] for f in range(k)]
    return _Design(x, np.ascontiguousarray(x.T), np.concatenate(columns, axis=1), pairs // m, pairs % m, cross)


def _newton(rows: Rows, weights: np.ndarray, prior_games: float, start: Optional[np.ndarray] = None,
            tol: float = 1e-9, max_iter: int = 100, design: Optional[_Design] = None) -> np.ndarray:
    """Coefficients (rounds x width) minimising, per row of `weights`, the weighted logistic loss plus the
    virtual ties.

    Each iteration is three dense products with fixed matrices (systems are few, battles many): the
    linear predictor X theta, the gradient e X, and every Hessian entry as s times a fixed column
    (per-pair sums for the strengths block, style products and style-weighted system columns).
    """
    m, k = rows.n_systems, rows.style.shape[1]
    rounds = weights.shape[0]
    width = m + k
    theta = np.zeros((rounds, width)) if start is None else np.array(np.broadcast_to(start, (rounds, width)))
    design = design or _design(rows)
    x, x_rows, hessian_columns, pi, pj, cross = (design.x, design.x_rows, design.hessian_columns, design.pi,
                                                 design.pj, design.cross)
    n_pairs, n_cross = len(pi), len(cross)
    idx = np.arange(m)
    for _ in range(max_iter):
        p = theta @ x_rows  # in place from here: these arrays are rounds x battles
        np.negative(p, out=p)
        np.exp(p, out=p)
        p += 1.0
        np.reciprocal(p, out=p)
        e = p - rows.y
        e *= weights
        s = 1.0 - p
        s *= p
        s *= weights
        grad = e @ x
        sums = s @ hessian_columns
        hess = np.zeros((rounds, width, width))
        pair_sums = sums[:, :n_pairs]
        hess[:, pi, pj] -= pair_sums
        hess[:, pj, pi] -= pair_sums
        np.add.at(hess, (slice(None), pi, pi), pair_sums)
        np.add.at(hess, (slice(None), pj, pj), pair_sums)
        if k:
            for c, (i, j) in enumerate(cross):
                hess[:, m + i, m + j] = hess[:, m + j, m + i] = sums[:, n_pairs + c]
            for f in range(k):
                block = sums[:, n_pairs + n_cross + f * m:n_pairs + n_cross + (f + 1) * m]
                hess[:, :m, m + f] = block
                hess[:, m + f, :m] = block
            hess[:, m + np.arange(k), m + np.arange(k)] += NUMERICAL_FLOOR
        prior_grad, prior_hess = _prior_terms(theta[:, :m], prior_games)
        grad[:, :m] += prior_grad
        hess[:, :m, :m] += prior_hess
        # The strengths are fixed only up to a common shift: pin their sum at zero (a Lagrange row).
        hess[:, idx[:, None], idx[None, :]] += 1.0 / max(m, 1)
        grad[:, :m] += theta[:, :m].sum(axis=1, keepdims=True) / max(m, 1)
        step = np.linalg.solve(hess, grad[:, :, None])[:, :, 0]
        step *= np.minimum(1.0, MAX_STEP / np.maximum(np.abs(step).max(axis=1, keepdims=True), 1e-300))
        theta -= step
        if np.abs(step).max() < tol:
            break
    return theta


def fit(rows: Rows, prior_games: float = PRIOR_GAMES) -> np.ndarray:
    """The coefficients of the data itself: strengths (natural log-odds, mean zero), then style."""
    return _newton(rows, rows.count[None, :], prior_games)[0]


def bootstrap(rows: Rows, estimate: np.ndarray, rounds: int, seed: int,
              prior_games: float = PRIOR_GAMES) -> np.ndarray:
    """Coefficients (rounds x width) over battle sets resampled with replacement, fitted from the estimate."""
    total = int(round(rows.count.sum()))
    rng = np.random.default_rng(seed)
    n = len(rows.y)
    if np.all(rows.count == 1.0):  # one row per battle: draw battles, count each one's draws per round
        drawn = rng.integers(0, n, size=(rounds, n)) + (np.arange(rounds) * n)[:, None]
        counts = np.bincount(drawn.ravel(), minlength=rounds * n).reshape(rounds, n).astype(float)
    else:  # aggregated rows: a multinomial over them, in proportion to their counts
        counts = rng.multinomial(total, rows.count / rows.count.sum(), size=rounds).astype(float)
    design = _design(rows)
    # A resample's ratings need no more than 1e-6 log-odds (2e-4 rating points) of precision.
    return np.concatenate([_newton(rows, counts[i:i + ROUND_CHUNK], prior_games, start=estimate, tol=1e-6,
                                   design=design)
                           for i in range(0, rounds, ROUND_CHUNK)], axis=0)


def to_elo(strengths: np.ndarray) -> np.ndarray:
    """Natural log-odds strengths (mean zero) on the Elo scale: 400 points = ten-fold odds, mean 1000."""
    centred = strengths - strengths.mean(axis=-1, keepdims=True)
    return ELO_INITIAL + ELO_SCALE * centred / math.log(10)


def standardise(style: np.ndarray) -> np.ndarray:
    """Each style column centred and scaled over the battles fitted (as FastChat's style control does)."""
    if style.size == 0:
        return style
    spread = style.std(axis=0)
    return (style - style.mean(axis=0)) / np.where(spread > 1e-12, spread, 1.0)


def degenerate(a: Sequence[int], b: Sequence[int], y: Sequence[float]) -> bool:
    """True when resampling cannot vary the data: every battle the same pair with the same outcome."""
    a, b, y = np.asarray(a), np.asarray(b), np.asarray(y, dtype=float)
    if len(a) <= 1:
        return True
    flip = a > b
    kinds = np.stack([np.where(flip, b, a), np.where(flip, a, b), np.where(flip, 1 - y, y)], axis=1)
    return len(np.unique(kinds, axis=0)) <= 1
