"""Style control: Bradley-Terry ratings with reply style as covariates, as LMArena's style control.

A person may prefer the system that writes longer replies or shows more
items, whatever their quality. Style control fits the Bradley-Terry model
with the style differences of each battle as extra covariates, so each
system's rating says how it fares *at equal style*:

    logit P(A beats B) = (beta_A - beta_B) + gamma . (s_A - s_B) / (s_A + s_B)

where s is a dialogue's style: mean characters per system reply and mean
items shown per reply (normalised differences, then standardised, as LMArena
does for length and markdown). Ties count as half a win each, as in FastChat.
The fit is logistic regression by Newton's method with a light ridge that
keeps strengths finite when a system won or lost everything. Ratings are on
the Elo scale (400 points = ten-fold odds), mean 1000. Their intervals are
percentile bootstrap intervals of this same fit over resampled battles, each
holding its estimate, as the uncontrolled board's are.
"""

from __future__ import annotations

import math
from typing import Iterable, Mapping, Optional, Sequence

import numpy as np

from arena.dialogue import Dialogue, Vote
from evaluators.bootstrap import percentile_interval
from webapp.leaderboard.battle_ratings import (
    CHOICE_SCORE, ELO_INITIAL, ELO_SCALE, Battle, degenerate_intervals,
)

STYLE_FEATURES = ("reply_length", "items_shown")
RIDGE = 1e-3
MAX_STEP = 2.0  # the largest Newton step in any coefficient (units of log-odds)


def dialogue_style(d: Dialogue) -> tuple[float, float]:
    """(mean characters per system reply, mean items shown per system reply)."""
    replies = d.agent_turns()
    if not replies:
        return 0.0, 0.0
    return (sum(len(u.text) for u in replies) / len(replies), sum(len(u.items) for u in replies) / len(replies))


def _normalised_difference(a: float, b: float) -> float:
    return (a - b) / (a + b) if a + b > 0 else 0.0


StyleRow = tuple[str, str, float, list[float]]  # (system A, system B, A's score, normalised style differences)


def style_rows(votes: Iterable[Vote], dialogues: Mapping[str, Dialogue] | Iterable[Dialogue]) -> list[StyleRow]:
    """One row per battle whose two dialogues are both given (others are left out)."""
    if not isinstance(dialogues, Mapping):
        dialogues = {d.dialogue_id: d for d in dialogues}
    rows = []
    for v in votes:
        da, db = dialogues.get(v.dialogue_a), dialogues.get(v.dialogue_b)
        if da is None or db is None or v.crs_a == v.crs_b:
            continue
        sa, sb = dialogue_style(da), dialogue_style(db)
        rows.append((v.crs_a, v.crs_b, CHOICE_SCORE[v.choice],
                     [_normalised_difference(x, y) for x, y in zip(sa, sb)]))
    return rows


def _design(rows: Sequence[StyleRow], names: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(system columns: +1 for A, -1 for B; raw style differences; A's scores), one row per battle."""
    index = {n: i for i, n in enumerate(names)}
    systems = np.zeros((len(rows), len(names)))
    for k, (a, b, _, _) in enumerate(rows):
        systems[k, index[a]] += 1.0
        systems[k, index[b]] -= 1.0
    style = np.array([r[3] for r in rows], dtype=float).reshape(len(rows), len(STYLE_FEATURES))
    return systems, style, np.array([r[2] for r in rows], dtype=float)


def _fit(systems: np.ndarray, style: np.ndarray, y: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The coefficients (system strengths, then style) for each row of `weights` (how often each battle
    counts: ones for the data itself, multinomial counts for a bootstrap resample), fitted together.

    Each fit standardises the style differences over its own (weighted) battles, then minimises the
    ridge-penalised logistic loss by Newton's method; the problem is strictly convex, so the steps
    (capped while far from the optimum) converge in a few iterations.
    """
    rounds = weights.shape[0]
    total = weights.sum(axis=1, keepdims=True)
    mean = weights @ style / total
    spread = np.sqrt(np.maximum(weights @ style**2 / total - mean**2, 0.0))
    spread = np.where(spread > 1e-12, spread, 1.0)
    standard = (style[None, :, :] - mean[:, None, :]) / spread[:, None, :]
    x = np.concatenate([np.broadcast_to(systems, (rounds, *systems.shape)), standard], axis=2)
    width = x.shape[2]
    beta = np.zeros((rounds, width))
    ridge = 2 * RIDGE * np.eye(width)
    for _ in range(100):
        z = np.einsum("rnp,rp->rn", x, beta)
        p = 1.0 / (1.0 + np.exp(-z))
        grad = np.einsum("rn,rnp->rp", weights * (p - y), x) + 2 * RIDGE * beta
        hessian = np.einsum("rnp,rnq->rpq", x * (weights * p * (1 - p))[:, :, None], x) + ridge
        step = np.linalg.solve(hessian, grad[:, :, None])[:, :, 0]
        step *= np.minimum(1.0, MAX_STEP / np.maximum(np.abs(step).max(axis=1, keepdims=True), 1e-300))
        beta -= step
        if np.abs(step).max() < 1e-10:
            break
    return beta


def _ratings(beta: np.ndarray, n_sys: int) -> np.ndarray:
    strengths = beta[..., :n_sys] - beta[..., :n_sys].mean(axis=-1, keepdims=True)
    return ELO_INITIAL + ELO_SCALE * strengths / math.log(10)


def fit_style_rows(rows: Sequence[StyleRow], systems: Iterable[str] = ()) -> tuple[dict[str, float], dict[str, float]]:
    """The style-controlled fit of `rows`, rating the systems in them plus `systems` (an absent one sits
    at the mean: only the ridge moves it). Empty when there are no rows."""
    if not rows:
        return {}, {}
    names = sorted({n for a, b, _, _ in rows for n in (a, b)} | set(systems))
    design, style, y = _design(rows, names)
    beta = _fit(design, style, y, np.ones((1, len(rows))))[0]
    ratings = _ratings(beta, len(names))
    return ({n: float(ratings[i]) for i, n in enumerate(names)},
            {f: float(beta[len(names) + j]) for j, f in enumerate(STYLE_FEATURES)})


def style_controlled_ratings(
    votes: Iterable[Vote], dialogues: Mapping[str, Dialogue] | Iterable[Dialogue],
) -> tuple[dict[str, float], dict[str, float]]:
    """(system -> style-controlled rating, style feature -> its coefficient in standard units).

    Battles whose two dialogues are not both given are left out. Empty when no battle remains.
    """
    return fit_style_rows(style_rows(votes, dialogues))


def style_controlled_intervals(
    rows: Sequence[StyleRow], *, rounds: int = 100, confidence: float = 0.95, seed: int = 0,
) -> dict[str, tuple[float, float]]:
    """Percentile bootstrap intervals of the style-controlled ratings: the same estimator (`fit_style_rows`,
    standardisation included) over battles resampled with replacement, rating the same systems as the
    estimate, each interval widened if needed to hold its estimate (as `webapp.leaderboard.battle_ratings.bootstrap_intervals`).
    Empty when resampling cannot vary the data (every battle the same pair and outcome) or there is none."""
    rows = list(rows)
    if not rows or rounds <= 0 or degenerate_intervals(Battle(a, b, s) for a, b, s, _ in rows):
        return {}
    estimate, _ = fit_style_rows(rows)
    names = sorted(estimate)
    design, style, y = _design(rows, names)
    # A resample is a multinomial count per battle; all rounds are fitted at once (`_fit`).
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(len(rows), np.full(len(rows), 1.0 / len(rows)), size=rounds).astype(float)
    ratings = _ratings(_fit(design, style, y, counts), len(names))
    samples = {n: ratings[:, i] for i, n in enumerate(names)}
    return {n: percentile_interval(samples[n], confidence, estimate[n]) for n in names}


def rank_change(ranks: Mapping[str, int], style_ratings: Mapping[str, float]) -> dict[str, Optional[int]]:
    """system -> places gained under style control (positive: ranks higher when style is controlled)."""
    shown = [n for n in ranks if n in style_ratings]
    order = sorted(shown, key=lambda n: (-style_ratings[n], n))
    style_rank = {n: i for i, n in enumerate(order, start=1)}
    return {n: (ranks[n] - style_rank[n]) if n in style_rank else None for n in ranks}
