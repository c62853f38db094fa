"""What a board's votes say about their own reliability, and the counting options a reviewer can change.

- `counted_votes`: with `first_votes_only`, each participant's first vote alone (its order within the
  session, `arena.store.session_order`, is 1); a vote with no known session (a pooled id) has no first vote
  and is left out of such a board.
- `fitted`: which votes the ratings are fitted from. Ties ("tie" and "both bad") count as half a win for
  each side by default (`ties="half"`, FastChat's rule); with `ties="drop"` they are left out of Elo and
  Bradley-Terry (still shown among the W / T / L counts).
- `tiers`: systems whose confidence intervals overlap, directly or through a chain of overlapping
  intervals, share one tier (the connected parts of the overlap graph), numbered from the best.
- `position_bias`: how often the left (A) and the right (B) system won, and how often the vote was a tie or
  "both bad", each a share of the board's battles with a 95% Wilson interval (scipy).
- `participants`: how many distinct participants the board's votes come from.
"""

from __future__ import annotations

from typing import Optional

import numpy as np
import pandas as pd
from scipy.stats import binomtest

TIE_RULES = ("half", "drop")
NO_SESSION_IDS = frozenset({"", "anonymous"})  # as `arena.store.session_order.NO_SESSION_IDS`
# The boards the background job also computes, for each audience on the whole arena (category "all"):
# (first votes only, tie rule). The default board is (False, "half").
DEFAULT_COUNTING = (False, "half")
COUNTING_VARIANTS = ((True, "half"), (False, "drop"), (True, "drop"))
POSITION_COLUMNS = ["outcome", "battles", "share", "share_low", "share_high"]
POSITION_OUTCOMES = (("Left (A) won", "A"), ("Right (B) won", "B"), ("Tie", "tie"), ("Both bad", "both_bad"))


def counted_votes(votes: pd.DataFrame, first_votes_only: bool) -> pd.DataFrame:
    """The votes a board counts: all, or each participant's first vote alone."""
    if not first_votes_only or votes.empty:
        return votes
    order = pd.to_numeric(votes["session_order"], errors="coerce")
    return votes[(order == 1).to_numpy()]


def fitted(y: np.ndarray, ties: str) -> np.ndarray:
    """Which battles (by A's score) the ratings are fitted from under the tie rule."""
    if ties not in TIE_RULES:
        raise ValueError(f"unknown tie rule {ties!r}; one of {', '.join(TIE_RULES)}")
    return np.ones(len(y), dtype=bool) if ties == "half" else y != 0.5


def tiers(ratings: dict[str, float], intervals: dict[str, Optional[tuple[float, float]]]) -> dict[str, int]:
    """name -> tier (1 best): systems whose intervals overlap, directly or through a chain, share a tier.

    Two intervals overlap when each one's lower bound is at most the other's upper bound; the tiers are the
    connected parts of that overlap graph (their intervals' unions are disjoint, so a tier's systems are
    neighbours by rating), numbered in rating order. Without intervals (too little varied data) there are
    no tiers."""
    if not ratings or any(intervals.get(n) is None for n in ratings):
        return {}
    order = sorted(ratings, key=lambda n: (-ratings[n], n))
    bounds = {n: intervals[n] for n in order}
    parent = {n: n for n in order}

    def root(n: str) -> str:
        while parent[n] != n:
            n = parent[n]
        return n

    for i, a in enumerate(order):
        for b in order[i + 1:]:
            (low_a, high_a), (low_b, high_b) = bounds[a], bounds[b]  # type: ignore[misc]
            if low_a <= high_b and low_b <= high_a:
                parent[root(b)] = root(a)
    numbers: dict[str, int] = {}
    return {n: numbers.setdefault(root(n), len(numbers) + 1) for n in order}


def position_bias(choices: np.ndarray, confidence: float = 0.95) -> pd.DataFrame:
    """One row per outcome (`POSITION_OUTCOMES`): battles, share of all battles and its Wilson interval."""
    n = len(choices)
    rows = []
    for label, choice in POSITION_OUTCOMES:
        k = int((choices == choice).sum())
        if n:
            ci = binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
            rows.append((label, k, k / n, float(ci.low), float(ci.high)))
        else:
            rows.append((label, 0, None, None, None))
    return pd.DataFrame(rows, columns=POSITION_COLUMNS)


def participants(votes: pd.DataFrame) -> tuple[int, int]:
    """(distinct participants with a known session, votes with none) among the votes."""
    if votes.empty:
        return 0, 0
    users = votes["user_id"].to_numpy(dtype=object)
    pooled = np.isin(users, list(NO_SESSION_IDS)) | pd.isna(users)
    return len(set(users[~pooled].tolist())), int(pooled.sum())
