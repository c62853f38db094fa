"""Rating systems for side-by-side battles, as pure functions.

A battle is reduced to `Battle(a, b, score_a)` where `score_a` is 1 when
system `a` won, 0 when `b` won and 0.5 for a tie ("both bad" counts as a
tie, as in the CRS Arena study). Three views are offered:

* `elo_ratings`: sequential Elo in time order (start 1000, K = 16), the
  rating reported by the CRS Arena study; it depends on battle order.
* `bradley_terry`: the maximum-likelihood Bradley-Terry strengths, order
  free, on the Elo scale (400 points = ten-fold odds), mean 1000.
* `bootstrap_intervals`: percentile intervals for any rating function by
  resampling battles with replacement, rating the same systems as the
  estimate so each interval holds its estimate (ties count half, as in
  FastChat); the resampling and the interval are `evaluators.bootstrap`'s.

`wilson_interval` gives the confidence interval of a satisfaction rate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from statistics import NormalDist
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence

import numpy as np

from evaluators.bootstrap import percentile_interval, resample_indices

ELO_INITIAL = 1000.0
ELO_K = 16.0
ELO_SCALE = 400.0

# Score of system A for each vote choice.
CHOICE_SCORE: Mapping[str, float] = {"A": 1.0, "B": 0.0, "tie": 0.5, "both_bad": 0.5}


@dataclass(frozen=True)
class Battle:
    a: str
    b: str
    score_a: float  # 1 = a won, 0 = b won, 0.5 = tie
    timestamp: Optional[datetime] = None
    choice: Optional[str] = None  # the raw vote choice, when known

    def __post_init__(self) -> None:
        if self.a == self.b:
            raise ValueError(f"a battle needs two different systems, got {self.a!r} twice")
        if not 0.0 <= self.score_a <= 1.0:
            raise ValueError(f"score_a must lie in [0, 1], got {self.score_a}")


def battle_from_vote(vote: Any) -> Battle:
    """A `Battle` from an `arena.dialogue.Vote` (or anything with the same fields)."""
    try:
        score = CHOICE_SCORE[vote.choice]
    except KeyError:
        raise ValueError(f"unknown vote choice {vote.choice!r}") from None
    return Battle(vote.crs_a, vote.crs_b, score, getattr(vote, "timestamp", None), vote.choice)


def _time_ordered(battles: Iterable[Battle]) -> list[Battle]:
    battles = list(battles)
    if all(b.timestamp is not None for b in battles):
        return sorted(battles, key=lambda b: b.timestamp)  # stable: equal times keep input order
    return battles


def systems_in(battles: Iterable[Battle]) -> list[str]:
    names: dict[str, None] = {}
    for b in battles:
        names.setdefault(b.a)
        names.setdefault(b.b)
    return sorted(names)


# -- Elo ----------------------------------------------------------------------


def elo_expected(rating_a: float, rating_b: float, scale: float = ELO_SCALE) -> float:
    """Expected score of A against B."""
    return 1.0 / (1.0 + 10.0 ** ((rating_b - rating_a) / scale))


def elo_ratings(
    battles: Iterable[Battle],
    *,
    initial: float = ELO_INITIAL,
    k: float = ELO_K,
    scale: float = ELO_SCALE,
    systems: Iterable[str] = (),
) -> dict[str, float]:
    """Sequential Elo over battles in time order (input order when timestamps are missing)."""
    ratings = {name: initial for name in systems}
    for battle in _time_ordered(battles):
        ra = ratings.setdefault(battle.a, initial)
        rb = ratings.setdefault(battle.b, initial)
        expected_a = elo_expected(ra, rb, scale)
        delta = k * (battle.score_a - expected_a)
        ratings[battle.a] = ra + delta
        ratings[battle.b] = rb - delta
    return ratings


# -- Bradley-Terry --------------------------------------------------------------


def _win_matrix(battles: Sequence[Battle], index: Mapping[str, int]) -> np.ndarray:
    """wins[i, j] = points i scored against j (ties give each side one half)."""
    n = len(index)
    wins = np.zeros((n, n))
    if not battles:
        return wins
    ia = np.fromiter((index[b.a] for b in battles), dtype=int, count=len(battles))
    ib = np.fromiter((index[b.b] for b in battles), dtype=int, count=len(battles))
    sa = np.fromiter((b.score_a for b in battles), dtype=float, count=len(battles))
    np.add.at(wins, (ia, ib), sa)
    np.add.at(wins, (ib, ia), 1.0 - sa)
    return wins


def bradley_terry_from_matrix(
    wins: np.ndarray, *, prior_games: float = 1.0, tol: float = 1e-9, max_iter: int = 10_000
) -> np.ndarray:
    """Log10 strengths (mean 0) by the minorise-maximise iteration.

    `prior_games` adds that many virtual tied games between every two
    systems. It keeps strengths finite when a system won (or lost) all its
    battles and pulls systems with little data towards each other; 0 gives
    the plain maximum-likelihood estimate, which is finite only when every
    system both won and lost points within one connected comparison graph.
    """
    n = wins.shape[0]
    if n == 0:
        return np.zeros(0)
    wins = wins + (prior_games / 2.0) * (1.0 - np.eye(n))
    games = wins + wins.T
    points = wins.sum(axis=1)
    strength = np.ones(n)
    for _ in range(max_iter):
        denom = (games / (strength[:, None] + strength[None, :])).sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            updated = np.where(denom > 0, points / denom, 1.0)
        # The likelihood fixes strengths only up to a common factor: pin the
        # geometric mean of the positive ones at 1.
        positive = updated[updated > 0]
        if positive.size:
            updated = updated / math.exp(np.log(positive).mean())
        done = np.max(np.abs(updated - strength) / np.maximum(strength, 1e-300)) < tol
        strength = updated
        if done:
            break
    with np.errstate(divide="ignore"):
        logs = np.log10(strength)
    finite = logs[np.isfinite(logs)]
    return logs - (finite.mean() if finite.size else 0.0)


def bradley_terry(
    battles: Iterable[Battle],
    *,
    prior_games: float = 1.0,
    center: float = ELO_INITIAL,
    scale: float = ELO_SCALE,
    systems: Iterable[str] = (),
) -> dict[str, float]:
    """Bradley-Terry ratings on the Elo scale: a difference of `scale` means ten-fold odds."""
    battles = list(battles)
    names = sorted(set(systems_in(battles)) | set(systems))
    index = {name: i for i, name in enumerate(names)}
    logs = bradley_terry_from_matrix(_win_matrix(battles, index), prior_games=prior_games)
    return {name: float(center + scale * logs[i]) for name, i in index.items()}


# -- bootstrap ------------------------------------------------------------------

RatingFn = Callable[..., Mapping[str, float]]


def bootstrap_samples(
    battles: Iterable[Battle],
    rating_fn: RatingFn = bradley_terry,
    *,
    rounds: int = 200,
    seed: int = 0,
    systems: Iterable[str] = (),
    **rating_kwargs: Any,
) -> dict[str, np.ndarray]:
    """`rating_fn` over `rounds` battle sets resampled with replacement: name -> one rating per round.

    Every resample rates the same systems as the estimate (those of the full
    set plus `systems`). Rating a different set would shift the mean-centred
    scale and put the intervals beside their estimate: an estimate centred
    over four systems with intervals centred over the two that played showed
    "1095-1095" beside 1073.
    """
    battles = list(battles)
    names = sorted(set(systems_in(battles)) | set(systems))
    if not battles or rounds <= 0:
        return {}
    samples: dict[str, list[float]] = {name: [] for name in names}
    for row in resample_indices(len(battles), rounds, seed):
        resample = [battles[i] for i in row]
        ratings = rating_fn(resample, systems=names, **rating_kwargs)
        for name in names:
            samples[name].append(ratings[name])
    return {name: np.asarray(values) for name, values in samples.items()}


def bootstrap_intervals(
    battles: Iterable[Battle],
    rating_fn: RatingFn = bradley_terry,
    *,
    rounds: int = 200,
    confidence: float = 0.95,
    seed: int = 0,
    systems: Iterable[str] = (),
    **rating_kwargs: Any,
) -> dict[str, tuple[float, float]]:
    """Percentile intervals of `rating_fn` over battle sets resampled with replacement.

    Each interval holds the estimate `rating_fn` gives on the full set for the
    same systems (see `bootstrap_samples`, `percentile_interval`).
    """
    battles = list(battles)
    samples = bootstrap_samples(battles, rating_fn, rounds=rounds, seed=seed, systems=systems, **rating_kwargs)
    if not samples:
        return {}
    estimate = rating_fn(battles, systems=sorted(samples), **rating_kwargs)
    return {name: percentile_interval(values, confidence, estimate[name]) for name, values in samples.items()}


def degenerate_intervals(battles: Iterable[Battle]) -> bool:
    """True when resampling cannot vary the data: every battle the same pair with the same outcome
    (all ties between two systems, a single battle). Its intervals would have zero width and say
    nothing, so they are not shown."""
    kinds = {(pair, score) for pair, score in ((tuple(sorted((b.a, b.b))), b.score_a if b.a < b.b
                                                 else 1.0 - b.score_a) for b in battles)}
    return len(kinds) <= 1


# -- counts and rates ---------------------------------------------------------------


def win_tie_loss(battles: Iterable[Battle]) -> dict[str, dict[str, int]]:
    """Per system: battles, wins, ties, both_bad, losses ("both bad" is not among ties)."""
    table: dict[str, dict[str, int]] = {}

    def row(name: str) -> dict[str, int]:
        return table.setdefault(name, {"battles": 0, "wins": 0, "ties": 0, "both_bad": 0, "losses": 0})

    for b in battles:
        ra, rb = row(b.a), row(b.b)
        ra["battles"] += 1
        rb["battles"] += 1
        if b.choice == "both_bad":
            ra["both_bad"] += 1
            rb["both_bad"] += 1
        elif b.score_a > 0.5:
            ra["wins"] += 1
            rb["losses"] += 1
        elif b.score_a < 0.5:
            ra["losses"] += 1
            rb["wins"] += 1
        else:
            ra["ties"] += 1
            rb["ties"] += 1
    return table


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> Optional[tuple[float, float]]:
    """Wilson score interval for a proportion; None when there are no trials."""
    if n <= 0:
        return None
    if not 0 <= successes <= n:
        raise ValueError(f"successes must lie in [0, {n}], got {successes}")
    z = NormalDist().inv_cdf(1.0 - (1.0 - confidence) / 2.0)
    p = successes / n
    z2n = z * z / n
    centre = (p + z2n / 2.0) / (1.0 + z2n)
    half = z * math.sqrt(p * (1.0 - p) / n + z2n / (4.0 * n)) / (1.0 + z2n)
    return max(0.0, centre - half), min(1.0, centre + half)
