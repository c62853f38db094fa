"""One board from its compact rows (`webapp.leaderboard.board_data`): counts, Elo, the Bradley-Terry model with
and without style control, intervals and rank ranges, as array operations.

Voiding follows `arena.crowd.counting.counted`: a dialogue where a system failed a
turn is left out, and so is the vote of its battle. Satisfaction counts the
labels marked as counted; the ratings count battles (ties and "both bad" half
a win each) in the one model of `webapp.leaderboard.bt_model`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Optional

import numpy as np
import pandas as pd

from evaluators.bootstrap import percentile_interval
from webapp.leaderboard import bt_model
from webapp.leaderboard.battle_ratings import CHOICE_SCORE, ELO_INITIAL, ELO_K, ELO_SCALE, wilson_interval
from webapp.leaderboard.board_data import BoardData
from webapp.leaderboard.vote_counting import counted_votes, fitted, participants, position_bias, tiers
from webapp.leaderboard.style_control import (
    fit_style_arrays, rank_change, style_interval_arrays, style_model_rows,
)

SCORE_COLUMNS = {"rdl": "mean_rdl", "core.overall": "mean_core_overall"}

COLUMNS = [
    "system", "conversations", "rated", "satisfied", "satisfaction", "satisfaction_low", "satisfaction_high",
    "battles", "wins", "ties", "both_bad", "losses", "elo", "bt", "bt_low", "bt_high",
    "rank", "rank_best", "rank_worst", "tier",
    "bt_style", "bt_style_low", "bt_style_high", "rank_change_style",
    "mean_rdl", "rdl_scored", "mean_core_overall", "core_overall_scored",
]


@dataclass(frozen=True)
class LeaderboardOptions:
    bootstrap_rounds: int = 200
    confidence: float = 0.95
    seed: int = 0
    bt_prior_games: float = 1.0
    min_votes: int = 0  # battles a system needs before its ratings and rank show
    style_rounds: int = 100  # bootstrap rounds of the style-controlled fit (each a logistic regression)
    # The counting options (`webapp.leaderboard.vote_counting`): each participant's first vote alone; ties
    # as half-wins ("half") or left out of the ratings ("drop"); whether the style-controlled fit is made.
    first_votes_only: bool = False
    ties: str = "half"
    style_control: bool = True

    @classmethod
    def from_settings(cls, settings: Any) -> "LeaderboardOptions":
        return cls(min_votes=settings.leaderboard_min_votes)


COUNT_KEYS = ("battles", "wins", "ties", "both_bad", "losses")


def rank_ranges(
    ratings: dict[str, float], intervals: dict[str, Optional[tuple[float, float]]]
) -> dict[str, tuple[int, int, int]]:
    """name -> (rank by rating, best rank, worst rank) as LMArena reads them from intervals.

    Best rank = 1 + systems whose lower bound is above this one's upper bound;
    worst rank = systems whose upper bound is not below this one's lower bound
    (itself included). A system without an interval (too little varied data)
    could be anywhere: its interval counts as unbounded.
    """
    unbounded = (-math.inf, math.inf)
    bounds = {n: intervals.get(n) or unbounded for n in ratings}
    order = sorted(ratings, key=lambda n: (-ratings[n], n))
    out = {}
    for position, name in enumerate(order, start=1):
        low, high = bounds[name]
        above = sum(1 for other in ratings if other != name and bounds[other][0] > high)
        below = sum(1 for other in ratings if other != name and bounds[other][1] < low)
        out[name] = (position, 1 + above, len(ratings) - below)
    return out




def _elo(a: np.ndarray, b: np.ndarray, y: np.ndarray, n: int) -> np.ndarray:
    """Sequential Elo in cast order (start 1000, K = 16), as `battle_ratings.elo_ratings`."""
    ratings = [ELO_INITIAL] * n
    for i, j, s in zip(a.tolist(), b.tolist(), y.tolist()):
        ra, rb = ratings[i], ratings[j]
        delta = ELO_K * (s - 1.0 / (1.0 + 10.0 ** ((rb - ra) / ELO_SCALE)))
        ratings[i], ratings[j] = ra + delta, rb - delta
    return np.asarray(ratings)


def _counts(a: np.ndarray, b: np.ndarray, y: np.ndarray, both_bad: np.ndarray, n: int) -> np.ndarray:
    """systems x (battles, wins, ties, both_bad, losses); "both bad" is not among ties."""
    out = np.zeros((n, 5), dtype=int)
    plain_tie = (y == 0.5) & ~both_bad
    for side, other, won in ((a, b, y > 0.5), (b, a, y < 0.5)):
        out[:, 0] += np.bincount(side, minlength=n)
        out[:, 1] += np.bincount(side[won], minlength=n)
        out[:, 2] += np.bincount(side[plain_tie], minlength=n)
        out[:, 3] += np.bincount(side[both_bad], minlength=n)
        out[:, 4] += np.bincount(other[won], minlength=n)
    return out


def _dialogue_stats(dialogues: pd.DataFrame) -> pd.DataFrame:
    used = dialogues[dialogues["num_turns"] > 0]
    grouped = used.groupby("crs_id", sort=True)
    return pd.DataFrame({
        "conversations": grouped.size(), "rated": grouped["rated"].sum(), "satisfied": grouped["satisfied"].sum(),
        "mean_rdl": grouped["rdl"].mean(), "rdl_scored": grouped["rdl"].count(),
        "mean_core_overall": grouped["core"].mean(), "core_overall_scored": grouped["core"].count(),
    })


def _none(value: object) -> object:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def rank_board(data: BoardData, *, systems: Iterable[str] = (),
               options: Optional[LeaderboardOptions] = None) -> pd.DataFrame:
    """One row per system (columns `table.COLUMNS`), best Bradley-Terry rating first."""
    options = options or LeaderboardOptions()
    dialogues, votes = data.dialogues, data.votes
    failed = dialogues.loc[dialogues["failed"].astype(bool), "dialogue_id"]
    if len(failed):
        dialogues = dialogues[~dialogues["failed"].astype(bool)]
        votes = votes[~(votes["dialogue_a"].isin(failed) | votes["dialogue_b"].isin(failed))]
    votes = counted_votes(votes, options.first_votes_only)
    stats = _dialogue_stats(dialogues)
    crs_a, crs_b = votes["crs_a"].to_numpy(dtype=object), votes["crs_b"].to_numpy(dtype=object)
    played = sorted(set(pd.unique(crs_a)) | set(pd.unique(crs_b)))
    names = sorted(set(stats.index) | set(played) | set(systems))
    index = {n: i for i, n in enumerate(played)}
    a = pd.Index(played, dtype=object).get_indexer(crs_a)
    b = pd.Index(played, dtype=object).get_indexer(crs_b)
    choices = votes["choice"].to_numpy(dtype=object)
    choice_index = pd.Index(list(CHOICE_SCORE), dtype=object).get_indexer(choices)
    if (choice_index < 0).any():
        raise ValueError(f"unknown vote choice {choices[choice_index < 0][0]!r}")
    y = np.array(list(CHOICE_SCORE.values()))[choice_index]
    m = len(played)
    counts = _counts(a, b, y, choices == "both_bad", m)
    fit = fitted(y, options.ties)
    votes, a, b, y = votes[fit], a[fit], b[fit], y[fit]
    elo = _elo(a, b, y, m)
    bt, intervals = _bradley_terry(a, b, y, played, options)
    rated = [n for n in played if n in bt and counts[index[n], 0] >= max(1, options.min_votes)]
    ranks = rank_ranges({n: bt[n] for n in rated}, {n: intervals.get(n) for n in rated})
    tier = tiers({n: bt[n] for n in ranks}, {n: intervals.get(n) for n in ranks})
    style, coefficients, style_intervals = (_style(dialogues, votes, a, b, y, played, set(ranks), options)
                                            if options.style_control else ({}, {}, {}))
    style_moves = rank_change({n: r[0] for n, r in ranks.items()}, style)

    out = []
    for name in names:
        s = stats.loc[name] if name in stats.index else None
        rated_n = int(s["rated"]) if s is not None else 0
        satisfied = int(s["satisfied"]) if s is not None else 0
        c = dict(zip(COUNT_KEYS, counts[index[name]].tolist())) if name in index else dict.fromkeys(COUNT_KEYS, 0)
        wilson = wilson_interval(satisfied, rated_n, options.confidence)
        shown = name in ranks
        low_high = intervals.get(name) if shown else None
        rank = ranks.get(name, (None, None, None))
        out.append({
            "system": name,
            "conversations": int(s["conversations"]) if s is not None else 0,
            "rated": rated_n, "satisfied": satisfied,
            "satisfaction": satisfied / rated_n if rated_n else None,
            "satisfaction_low": wilson[0] if wilson else None,
            "satisfaction_high": wilson[1] if wilson else None,
            **c,
            "elo": float(elo[index[name]]) if shown else None,
            "bt": bt.get(name) if shown else None,
            "bt_low": low_high[0] if low_high else None,
            "bt_high": low_high[1] if low_high else None,
            "rank": rank[0], "rank_best": rank[1], "rank_worst": rank[2], "tier": tier.get(name),
            "bt_style": style.get(name) if shown else None,
            "bt_style_low": style_intervals[name][0] if shown and name in style_intervals else None,
            "bt_style_high": style_intervals[name][1] if shown and name in style_intervals else None,
            "rank_change_style": style_moves.get(name) if shown else None,
            "mean_rdl": _none(float(s["mean_rdl"])) if s is not None else None,
            "rdl_scored": int(s["rdl_scored"]) if s is not None else 0,
            "mean_core_overall": _none(float(s["mean_core_overall"])) if s is not None else None,
            "core_overall_scored": int(s["core_overall_scored"]) if s is not None else 0,
        })
    table = pd.DataFrame(out, columns=COLUMNS)
    if not table.empty:
        table = table.sort_values(
            ["bt", "satisfaction", "conversations", "system"],
            ascending=[False, False, False, True], na_position="last", kind="stable",
        ).reset_index(drop=True)
    table.attrs["min_votes"] = options.min_votes
    table.attrs["below_min_votes"] = sorted(set(played) - set(rated))
    table.attrs["style_coefficients"] = coefficients
    table.attrs.update(_reliability(votes, choices, options))
    return table


def _reliability(fitted_votes: pd.DataFrame, choices: np.ndarray,
                 options: LeaderboardOptions) -> dict[str, Any]:
    """What the board rests on: the votes its ratings are fitted from and their participants, the counting
    options, and the position-bias table of the battles it counts (`vote_counting`)."""
    people, without_session = participants(fitted_votes)
    return {"votes_fitted": len(fitted_votes), "participants": people,
            "votes_without_session": without_session,
            "first_votes_only": options.first_votes_only, "ties": options.ties,
            "position_bias": position_bias(choices, options.confidence)}


def _bradley_terry(a: np.ndarray, b: np.ndarray, y: np.ndarray, played: list[str],
                   options: LeaderboardOptions) -> tuple[dict[str, float], dict[str, tuple[float, float]]]:
    """The plain Bradley-Terry ratings and their bootstrap intervals (none for degenerate data)."""
    if not len(y):
        return {}, {}
    rows = bt_model.aggregate(a, b, y, len(played))
    theta = bt_model.fit(rows, options.bt_prior_games)
    ratings = bt_model.to_elo(theta)
    bt = {n: float(ratings[i]) for i, n in enumerate(played)}
    if bt_model.degenerate(a, b, y) or options.bootstrap_rounds <= 0:
        return bt, {}
    samples = bt_model.to_elo(bt_model.bootstrap(rows, theta, options.bootstrap_rounds, options.seed,
                                                 options.bt_prior_games))
    return bt, {n: percentile_interval(samples[:, i], options.confidence, bt[n])
                for i, n in enumerate(played)}


def _style(dialogues: pd.DataFrame, votes: pd.DataFrame, a: np.ndarray, b: np.ndarray, y: np.ndarray,
           played: list[str], ranked: set[str], options: LeaderboardOptions,
           ) -> tuple[dict[str, float], dict[str, float], dict[str, tuple[float, float]]]:
    """The style-controlled fit of the battles between ranked systems whose two dialogues are both on the
    board: ratings, style coefficients, intervals."""
    if not ranked or votes.empty:
        return {}, {}, {}
    by_id = pd.Index(dialogues["dialogue_id"])
    ia, ib = by_id.get_indexer(votes["dialogue_a"]), by_id.get_indexer(votes["dialogue_b"])
    in_ranked = np.array([n in ranked for n in played])
    keep = (ia >= 0) & (ib >= 0) & in_ranked[a] & in_ranked[b]
    if not keep.any():
        return {}, {}, {}
    style = dialogues[["reply_length", "items_shown"]].to_numpy(dtype=float)
    sa, sb = style[ia[keep]], style[ib[keep]]
    total = sa + sb
    with np.errstate(invalid="ignore", divide="ignore"):
        differences = np.where(total > 0, (sa - sb) / np.where(total > 0, total, 1.0), 0.0)
    # Rate the systems of these battles only (as the object form, `style_control.fit_style_rows`).
    names = sorted({played[i] for i in np.r_[a[keep], b[keep]]})
    local = {n: i for i, n in enumerate(names)}
    remap = np.array([local.get(n, -1) for n in played])
    rows = style_model_rows(remap[a[keep]], remap[b[keep]], y[keep], differences, len(names))
    estimate, coefficients, theta = fit_style_arrays(rows, names, options.bt_prior_games)
    intervals = style_interval_arrays(rows, names, theta, estimate, rounds=options.style_rounds,
                                      confidence=options.confidence, seed=options.seed,
                                      prior_games=options.bt_prior_games)
    return estimate, coefficients, intervals
