"""Style control: Bradley-Terry ratings with reply style as covariates, as LMArena's style control.

A person may prefer the system that writes longer replies or shows more
items, whatever their quality. Style control fits the Bradley-Terry model
with the style differences of each battle as extra covariates, so each
system's rating says how it fares *at equal style*:

    logit P(A beats B) = (beta_A - beta_B) + gamma . (s_A - s_B) / (s_A + s_B)

where s is a dialogue's style: mean characters per system reply and mean
items shown per reply (normalised differences, then standardised, as LMArena
does for length and markdown). Ties count as half a win each, as in FastChat.
The fit is logistic regression by L-BFGS (scipy) with a light ridge that
keeps strengths finite when a system won or lost everything. Ratings are on
the Elo scale (400 points = ten-fold odds), mean 1000. Their intervals are
percentile bootstrap intervals of this same fit over resampled battles, each
holding its estimate, as the uncontrolled board's are.
"""

from __future__ import annotations

import math
import random
from typing import Iterable, Mapping, Optional, Sequence

import numpy as np
from scipy.optimize import minimize

from arena.dialogue import Dialogue, Vote
from webapp.ratings import (
    CHOICE_SCORE, ELO_INITIAL, ELO_SCALE, Battle, degenerate_intervals, percentile_interval,
)

STYLE_FEATURES = ("reply_length", "items_shown")
RIDGE = 1e-3


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


def fit_style_rows(rows: Sequence[StyleRow], systems: Iterable[str] = ()) -> tuple[dict[str, float], dict[str, float]]:
    """The style-controlled fit of `rows`, rating the systems in them plus `systems` (an absent one sits
    at the mean: only the ridge moves it). Empty when there are no rows."""
    if not rows:
        return {}, {}
    names = sorted({n for a, b, _, _ in rows for n in (a, b)} | set(systems))
    index = {n: i for i, n in enumerate(names)}
    n_sys, n_feat = len(names), len(STYLE_FEATURES)
    style = np.array([r[3] for r in rows], dtype=float)
    spread = style.std(axis=0)
    style = (style - style.mean(axis=0)) / np.where(spread > 0, spread, 1.0)
    x = np.zeros((len(rows), n_sys + n_feat))
    for k, (a, b, _, _) in enumerate(rows):
        x[k, index[a]] += 1.0
        x[k, index[b]] -= 1.0
    x[:, n_sys:] = style
    y = np.array([r[2] for r in rows], dtype=float)  # 0.5 for ties: half a win and half a loss

    def loss(beta: np.ndarray) -> tuple[float, np.ndarray]:
        z = x @ beta
        # -[y log s(z) + (1 - y) log s(-z)], written stably
        value = np.sum(np.logaddexp(0.0, z) - y * z) + RIDGE * beta @ beta
        grad = x.T @ (1.0 / (1.0 + np.exp(-z)) - y) + 2 * RIDGE * beta
        return float(value), grad

    beta = minimize(loss, np.zeros(n_sys + n_feat), jac=True, method="L-BFGS-B").x
    strengths = beta[:n_sys] - beta[:n_sys].mean()
    ratings = {n: float(ELO_INITIAL + ELO_SCALE * strengths[i] / math.log(10)) for n, i in index.items()}
    coefficients = {f: float(beta[n_sys + j]) for j, f in enumerate(STYLE_FEATURES)}
    return ratings, coefficients


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
    estimate, each interval widened if needed to hold its estimate (as `webapp.ratings.bootstrap_intervals`).
    Empty when resampling cannot vary the data (every battle the same pair and outcome) or there is none."""
    rows = list(rows)
    if not rows or rounds <= 0 or degenerate_intervals(Battle(a, b, s) for a, b, s, _ in rows):
        return {}
    estimate, _ = fit_style_rows(rows)
    names = sorted(estimate)
    rng = random.Random(seed)
    samples: dict[str, list[float]] = {n: [] for n in names}
    for _ in range(rounds):
        resample = [rows[rng.randrange(len(rows))] for _ in rows]
        ratings, _ = fit_style_rows(resample, systems=names)
        for n in names:
            samples[n].append(ratings[n])
    return {n: percentile_interval(np.asarray(samples[n]), estimate[n], confidence) for n in names}


def rank_change(ranks: Mapping[str, int], style_ratings: Mapping[str, float]) -> dict[str, Optional[int]]:
    """system -> places gained under style control (positive: ranks higher when style is controlled)."""
    shown = [n for n in ranks if n in style_ratings]
    order = sorted(shown, key=lambda n: (-style_ratings[n], n))
    style_rank = {n: i for i, n in enumerate(order, start=1)}
    return {n: (ranks[n] - style_rank[n]) if n in style_rank else None for n in ranks}
