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
the Elo scale (400 points = ten-fold odds), mean 1000.
"""

from __future__ import annotations

import math
from typing import Iterable, Mapping, Optional

import numpy as np
from scipy.optimize import minimize

from arena.dialogue import Dialogue, Vote
from webapp.ratings import CHOICE_SCORE, ELO_INITIAL, ELO_SCALE

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


def style_controlled_ratings(
    votes: Iterable[Vote], dialogues: Mapping[str, Dialogue] | Iterable[Dialogue],
) -> tuple[dict[str, float], dict[str, float]]:
    """(system -> style-controlled rating, style feature -> its coefficient in standard units).

    Battles whose two dialogues are not both given are left out. Empty when no battle remains.
    """
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
    if not rows:
        return {}, {}
    names = sorted({n for a, b, _, _ in rows for n in (a, b)})
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


def rank_change(ranks: Mapping[str, int], style_ratings: Mapping[str, float]) -> dict[str, Optional[int]]:
    """system -> places gained under style control (positive: ranks higher when style is controlled)."""
    shown = [n for n in ranks if n in style_ratings]
    order = sorted(shown, key=lambda n: (-style_ratings[n], n))
    style_rank = {n: i for i, n in enumerate(order, start=1)}
    return {n: (ranks[n] - style_rank[n]) if n in style_rank else None for n in ranks}
