"""The project's Bradley-Terry solver (batched Newton, `webapp/leaderboard/bt_model.py`) lands where scipy's
L-BFGS-B lands on the same objective, written here once more from the model's definition: the weighted
logistic loss of the battles (a tie is y = 0.5), one virtual tie of weight `prior_games` per pair of systems,
the strengths' sum pinned at zero. The fits and the bootstrap rounds are compared; a wrong gradient, Hessian
or stopping rule in the solver moves its answer away from scipy's."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from webapp.leaderboard import bt_model


def _objective(theta, x, y, weight, m, prior_games):
    z = x @ theta
    loss = float((weight * (np.logaddexp(0.0, z) - y * z)).sum())
    grad = ((1.0 / (1.0 + np.exp(-z)) - y) * weight) @ x
    strengths = theta[:m]
    for i in range(m):
        for j in range(i + 1, m):
            d = strengths[i] - strengths[j]
            loss += prior_games * (np.logaddexp(0.0, d) - 0.5 * d)
            g = prior_games * (1.0 / (1.0 + np.exp(-d)) - 0.5)
            grad[i] += g
            grad[j] -= g
    total = strengths.sum()
    loss += total**2 / (2 * m)
    grad[:m] += total / m
    scale = weight.sum()
    return loss / scale, grad / scale


def _scipy_fit(rows: bt_model.Rows, weight: np.ndarray, prior_games: float = bt_model.PRIOR_GAMES):
    n, m = len(rows.y), rows.n_systems
    x = np.zeros((n, rows.width))
    x[np.arange(n), rows.a] += 1.0
    x[np.arange(n), rows.b] -= 1.0
    x[:, m:] = rows.style
    result = minimize(_objective, np.zeros(rows.width), args=(x, rows.y, weight, m, prior_games), jac=True,
                      method="L-BFGS-B", options={"gtol": 1e-11, "ftol": 1e-15, "maxiter": 5000})
    assert result.success, result.message
    return result.x


def _battles(n: int, m: int, seed: int):
    rng = np.random.default_rng(seed)
    strength = np.linspace(-0.6, 0.6, m)
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m
    p = 1.0 / (1.0 + np.exp(-(strength[a] - strength[b])))
    y = np.where(rng.random(n) < 0.15, 0.5, (rng.random(n) < p).astype(float))
    return a, b, y, rng


@pytest.mark.parametrize("prior_games", [bt_model.PRIOR_GAMES, 0.0])
def test_plain_fit_is_scipys_minimum(prior_games):
    a, b, y, _ = _battles(2000, 5, seed=3)
    rows = bt_model.aggregate(a, b, y, 5)
    ours = bt_model.fit(rows, prior_games)
    assert np.allclose(ours, _scipy_fit(rows, rows.count, prior_games), atol=1e-6)
    # on the Elo scale: well under a hundredth of a point
    reference = _scipy_fit(rows, rows.count, prior_games)
    assert np.abs(bt_model.to_elo(ours) - bt_model.to_elo(reference)).max() < 1e-3


def test_style_fit_is_scipys_minimum():
    a, b, y, rng = _battles(1500, 4, seed=5)
    style = bt_model.standardise(rng.normal(size=(1500, 2)) + 0.4 * (y[:, None] - 0.5))
    rows = bt_model.Rows(a, b, y, style, np.ones(1500), 4)
    assert np.allclose(bt_model.fit(rows), _scipy_fit(rows, rows.count), atol=1e-6)


def test_bootstrap_rounds_are_scipys_fits_of_the_resampled_counts():
    a, b, y, rng = _battles(800, 4, seed=7)
    style = bt_model.standardise(rng.normal(size=(800, 1)))
    for rows in (bt_model.aggregate(a, b, y, 4), bt_model.Rows(a, b, y, style, np.ones(800), 4)):
        estimate = bt_model.fit(rows)
        rounds = bt_model.bootstrap(rows, estimate, rounds=6, seed=11)
        # the same resampled counts as bootstrap draws (same seed, same order of draws)
        draws = np.random.default_rng(11)
        if np.all(rows.count == 1.0):
            n = len(rows.y)
            drawn = draws.integers(0, n, size=(6, n)) + (np.arange(6) * n)[:, None]
            counts = np.bincount(drawn.ravel(), minlength=6 * n).reshape(6, n).astype(float)
        else:
            shares = rows.count / rows.count.sum()
            counts = draws.multinomial(int(rows.count.sum()), shares, size=6).astype(float)
        for r in range(6):
            assert np.allclose(rounds[r], _scipy_fit(rows, counts[r]), atol=1e-5)
