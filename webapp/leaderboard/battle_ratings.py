"""Rating systems for side-by-side battles, as pure functions.

A battle is reduced to `Battle(a, b, score_a)` where `score_a` is 1 when
system `a` won, 0 when `b` won and 0.5 for a tie ("both bad" counts as a
tie, as in the CRS Arena study). Three views are offered:

* `elo_ratings`: sequential Elo in time order (start 1000, K = 16), the
  rating reported by the CRS Arena study; it depends on battle order.
* `bradley_terry`: the Bradley-Terry strengths of the board's one model
  (`webapp.leaderboard.bt_model`: FastChat's logistic regression, ties half
  a win, virtual ties as its one regularisation), order free, on the Elo
  scale (400 points = ten-fold odds), mean 1000.
* `bootstrap_intervals`: percentile intervals of those ratings by resampling
  battles with replacement (all rounds fitted together), rating the same
  systems as the estimate so each interval holds its estimate; the interval
  is `evaluators.bootstrap`'s.

`wilson_interval` gives the confidence interval of a satisfaction rate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from statistics import NormalDist
from typing import Any, Iterable, Mapping, Optional, Sequence

import numpy as np

from evaluators.bootstrap import percentile_interval
from webapp.leaderboard import bt_model

ELO_INITIAL = bt_model.ELO_INITIAL
ELO_K = 16.0
ELO_SCALE = bt_model.ELO_SCALE

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


# -- Bradley-Terry (webapp.leaderboard.bt_model) ------------------------------------


def _rows(battles: Sequence[Battle], names: Sequence[str]) -> bt_model.Rows:
    index = {name: i for i, name in enumerate(names)}
    a = np.fromiter((index[b.a] for b in battles), dtype=int, count=len(battles))
    b_ = np.fromiter((index[b.b] for b in battles), dtype=int, count=len(battles))
    y = np.fromiter((b.score_a for b in battles), dtype=float, count=len(battles))
    return bt_model.aggregate(a, b_, y, len(names))


def bradley_terry(
    battles: Iterable[Battle],
    *,
    prior_games: float = bt_model.PRIOR_GAMES,
    center: float = ELO_INITIAL,
    scale: float = ELO_SCALE,
    systems: Iterable[str] = (),
) -> dict[str, float]:
    """Bradley-Terry ratings on the Elo scale (a difference of `scale` means ten-fold odds), mean `center`:
    the one model of `webapp.leaderboard.bt_model`, with `prior_games` virtual ties per pair of systems."""
    battles = list(battles)
    names = sorted(set(systems_in(battles)) | set(systems))
    if not names:
        return {}
    strengths = bt_model.fit(_rows(battles, names), prior_games)[:len(names)]
    logs = (strengths - strengths.mean()) / math.log(10)
    return {name: float(center + scale * logs[i]) for i, name in enumerate(names)}


# -- bootstrap ------------------------------------------------------------------


def bootstrap_samples(
    battles: Iterable[Battle],
    *,
    rounds: int = 200,
    seed: int = 0,
    systems: Iterable[str] = (),
    prior_games: float = bt_model.PRIOR_GAMES,
) -> dict[str, np.ndarray]:
    """Bradley-Terry ratings over `rounds` battle sets resampled with replacement: name -> one per round.

    Every resample rates the same systems as the estimate (those of the full
    set plus `systems`). Rating a different set would shift the mean-centred
    scale and put the intervals beside their estimate: an estimate centred
    over four systems with intervals centred over the two that played showed
    "1095-1095" beside 1073. All rounds are fitted at once (`bt_model.bootstrap`).
    """
    battles = list(battles)
    names = sorted(set(systems_in(battles)) | set(systems))
    if not battles or rounds <= 0:
        return {}
    rows = _rows(battles, names)
    estimate = bt_model.fit(rows, prior_games)
    ratings = bt_model.to_elo(bt_model.bootstrap(rows, estimate, rounds, seed, prior_games)[:, :len(names)])
    return {name: ratings[:, i] for i, name in enumerate(names)}


def bootstrap_intervals(
    battles: Iterable[Battle],
    *,
    rounds: int = 200,
    confidence: float = 0.95,
    seed: int = 0,
    systems: Iterable[str] = (),
    prior_games: float = bt_model.PRIOR_GAMES,
) -> dict[str, tuple[float, float]]:
    """Percentile intervals of the Bradley-Terry ratings over battle sets resampled with replacement.

    Each interval holds the estimate on the full set for the same systems (see `bootstrap_samples`,
    `percentile_interval`).
    """
    battles = list(battles)
    samples = bootstrap_samples(battles, rounds=rounds, seed=seed, systems=systems, prior_games=prior_games)
    if not samples:
        return {}
    estimate = bradley_terry(battles, systems=sorted(samples), prior_games=prior_games)
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
