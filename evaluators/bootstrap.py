"""The percentile bootstrap, one implementation for every interval the arena shows.

- `resample_indices`: `rounds` rows of `n` indexes drawn with replacement, from a seed
- `percentile_interval`: the central `confidence` interval of resampled values

Used by the correlations between metrics and human judgements
(`evaluators.meta_correlations`) and by the leaderboard's rating intervals
(`webapp.leaderboard.battle_ratings`, `webapp.leaderboard.style_control`).
"""

from __future__ import annotations

from typing import Optional

import numpy as np


def resample_indices(n: int, rounds: int, seed: int = 0) -> np.ndarray:
    """A (rounds, n) array: each row one resample of range(n) with replacement; the same for the same seed."""
    return np.random.default_rng(seed).integers(0, n, size=(rounds, n))


def percentile_interval(values: np.ndarray, confidence: float = 0.95,
                        estimate: Optional[float] = None) -> Optional[tuple[float, float]]:
    """The percentile interval of the finite bootstrap `values`; None when none is finite.

    With `estimate`, the interval is widened if needed to hold it: with a prior and few
    battles a rating can fall a hair outside the percentiles of its own resamples, and an
    interval beside its estimate reads as an error.
    """
    values = np.asarray(values, float)
    values = values[np.isfinite(values)]
    if not len(values):
        return None
    alpha = (1.0 - confidence) / 2.0
    low, high = (float(x) for x in np.quantile(values, [alpha, 1.0 - alpha]))
    if estimate is not None:
        low, high = min(low, estimate), max(high, estimate)
    return low, high
