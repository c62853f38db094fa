"""Kendall tau and the per-system meta-evaluation table."""

import random

import pytest
from scipy.stats import kendalltau

from arena.dialogue import Score
from evaluators.meta import format_table, kendall_tau, meta_table, ranking_correlations
from tests.acts.acts_helpers import make_dialogue


def test_kendall_tau_by_hand():
    assert kendall_tau([1, 2, 3, 4], [10, 20, 30, 40]) == 1.0
    assert kendall_tau([1, 2, 3, 4], [4, 3, 2, 1]) == -1.0
    # pairs: (1,2)+ (1,3)+ (2,3)- -> (2-1)/3
    assert kendall_tau([1, 2, 3], [1, 3, 2]) == pytest.approx(1 / 3)
    assert kendall_tau([1, 1], [1, 2]) is None


def test_kendall_tau_matches_scipy_with_ties():
    rng = random.Random(7)
    for _ in range(50):
        n = rng.randint(3, 9)
        x = [rng.choice([0.1, 0.2, 0.3, 0.4]) for _ in range(n)]
        y = [rng.choice([1, 2, 3]) for _ in range(n)]
        expected = kendalltau(x, y).statistic
        got = kendall_tau(x, y)
        if got is None:
            assert expected != expected  # scipy gives nan
        else:
            assert got == pytest.approx(expected)


def _scored(crs, sentiment, rdl):
    d = make_dialogue([("U", "hi", ["OTH"])], crs_id=crs, sentiment=sentiment)
    if rdl is not None:
        d.scores["rdl"] = Score(value=rdl, scorer="rdl", version="1/provided")
    d.scores["acts"] = Score(value=1.0, scorer="acts", version="1/provided")
    return d


def test_meta_table_by_hand():
    ds = [
        _scored("A", "satisfied", 0.3), _scored("A", "satisfied", 0.1), _scored("A", "frustrated", None),
        _scored("B", "satisfied", 0.1), _scored("B", "frustrated", 0.1),
        _scored("C", "frustrated", 0.0), _scored("C", None, 0.2),
    ]
    rows = meta_table(ds)
    assert [r["crs_id"] for r in rows] == ["A", "B", "C"]
    a, b, c = rows
    assert a["satisfaction"] == pytest.approx(2 / 3) and a["rdl"] == pytest.approx(0.2) and a["rdl.n"] == 2
    assert b["satisfaction"] == 0.5 and b["rdl"] == pytest.approx(0.1)
    assert c["satisfaction"] == 0.0 and c["rated"] == 1 and c["dialogues"] == 2 and c["rdl"] == pytest.approx(0.1)
    assert "acts" not in a  # annotation coverage is not a metric to rank by
    taus = ranking_correlations(rows)
    # satisfaction A > B > C; rdl A > B = C -> tau-b = 2 / sqrt(3 * 2)
    assert taus["rdl"] == pytest.approx(2 / 6 ** 0.5)
    text = format_table(rows, taus)
    assert "Kendall tau" in text and "0.816" in text


def test_systems_without_ratings_are_left_out_of_tau():
    ds = [_scored("A", "satisfied", 0.3), _scored("B", None, 0.1), _scored("C", "frustrated", 0.2)]
    rows = meta_table(ds, ["rdl"])
    assert rows[-1]["crs_id"] == "B" and rows[-1]["satisfaction"] is None
    assert ranking_correlations(rows, ["rdl"])["rdl"] == 1.0
    assert ranking_correlations(meta_table(ds[:1], ["rdl"]), ["rdl"])["rdl"] is None
