"""Style control: Bradley-Terry ratings with reply style as covariates, as LMArena's style control.

A person may prefer the system that writes longer replies or shows more
items, whatever their quality. Style control fits the Bradley-Terry model
with the style differences of each battle as extra covariates, so each
system's rating says how it fares *at equal style*:

    logit P(A beats B) = (beta_A - beta_B) + gamma . (s_A - s_B) / (s_A + s_B)

where s is a dialogue's style: mean characters per system reply and mean
items shown per reply (normalised differences, then standardised, as LMArena
does for length and markdown). It is the plain board's model
(`webapp.leaderboard.bt_model`) with two more columns: the same logistic
regression, ties half a win, the same virtual ties as its one regularisation,
so with no style effect the two boards agree and the rank change from style
carries nothing else. Ratings are on the Elo scale (400 points = ten-fold
odds), mean 1000. Their intervals are percentile bootstrap intervals of this
same fit over resampled battles, each holding its estimate, as the
uncontrolled board's are.
"""

from __future__ import annotations

from typing import Iterable, Mapping, Optional, Sequence

import numpy as np

from arena.dialogue import Dialogue, Vote
from evaluators.bootstrap import percentile_interval
from webapp.leaderboard import bt_model
from webapp.leaderboard.battle_ratings import CHOICE_SCORE

STYLE_FEATURES = ("reply_length", "items_shown")


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


def _arrays(rows: Sequence[StyleRow], names: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    index = {n: i for i, n in enumerate(names)}
    a = np.array([index[r[0]] for r in rows], dtype=int)
    b = np.array([index[r[1]] for r in rows], dtype=int)
    y = np.array([r[2] for r in rows], dtype=float)
    style = np.array([r[3] for r in rows], dtype=float).reshape(len(rows), len(STYLE_FEATURES))
    return a, b, y, style


def style_model_rows(a: np.ndarray, b: np.ndarray, y: np.ndarray, differences: np.ndarray,
                     n_systems: int) -> bt_model.Rows:
    """One row per battle: system indices, A's score and the standardised style differences."""
    return bt_model.Rows(a, b, y, bt_model.standardise(differences), np.ones(len(a)), n_systems)


def fit_style_arrays(rows: bt_model.Rows, names: Sequence[str], prior_games: float = bt_model.PRIOR_GAMES,
                     ) -> tuple[dict[str, float], dict[str, float], np.ndarray]:
    """(ratings, style coefficients, the fitted coefficients) of `bt_model`'s fit with the style columns."""
    theta = bt_model.fit(rows, prior_games)
    ratings = bt_model.to_elo(theta[:len(names)])
    return ({n: float(ratings[i]) for i, n in enumerate(names)},
            {f: float(theta[len(names) + j]) for j, f in enumerate(STYLE_FEATURES)}, theta)


def style_interval_arrays(rows: bt_model.Rows, names: Sequence[str], theta: np.ndarray, estimate: Mapping[str, float],
                          *, rounds: int, confidence: float, seed: int,
                          prior_games: float = bt_model.PRIOR_GAMES) -> dict[str, tuple[float, float]]:
    """Percentile bootstrap intervals of the style-controlled ratings, each holding its estimate."""
    if rounds <= 0 or bt_model.degenerate(rows.a, rows.b, rows.y):
        return {}
    ratings = bt_model.to_elo(bt_model.bootstrap(rows, theta, rounds, seed, prior_games)[:, :len(names)])
    return {n: percentile_interval(ratings[:, i], confidence, estimate[n]) for i, n in enumerate(names)}


def fit_style_rows(rows: Sequence[StyleRow], systems: Iterable[str] = (),
                   prior_games: float = bt_model.PRIOR_GAMES) -> tuple[dict[str, float], dict[str, float]]:
    """The style-controlled fit of `rows`, rating the systems in them plus `systems` (an absent one sits
    at the mean: only the virtual ties move it). Empty when there are no rows."""
    if not rows:
        return {}, {}
    names = sorted({n for a, b, _, _ in rows for n in (a, b)} | set(systems))
    ratings, coefficients, _ = fit_style_arrays(style_model_rows(*_arrays(rows, names), len(names)), names,
                                                prior_games)
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
    prior_games: float = bt_model.PRIOR_GAMES,
) -> dict[str, tuple[float, float]]:
    """Percentile bootstrap intervals of the style-controlled ratings: the same fit over battles resampled
    with replacement (the style columns standardised once, over the data, as FastChat does), rating the same
    systems as the estimate, each interval widened if needed to hold its estimate (`percentile_interval`).
    Empty when resampling cannot vary the data (every battle the same pair and outcome) or there is none."""
    rows = list(rows)
    if not rows:
        return {}
    names = sorted({n for a, b, _, _ in rows for n in (a, b)})
    model_rows = style_model_rows(*_arrays(rows, names), len(names))
    estimate, _, theta = fit_style_arrays(model_rows, names, prior_games)
    return style_interval_arrays(model_rows, names, theta, estimate, rounds=rounds, confidence=confidence,
                                 seed=seed, prior_games=prior_games)


def rank_change(ranks: Mapping[str, int], style_ratings: Mapping[str, float]) -> dict[str, Optional[int]]:
    """system -> places gained under style control (positive: ranks higher when style is controlled)."""
    shown = [n for n in ranks if n in style_ratings]
    order = sorted(shown, key=lambda n: (-style_ratings[n], n))
    style_rank = {n: i for i, n in enumerate(order, start=1)}
    return {n: (ranks[n] - style_rank[n]) if n in style_rank else None for n in ranks}
