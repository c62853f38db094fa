"""Rating functions on small hand-made battle sets with known answers."""

import math
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.dialogue import Vote
from webapp.leaderboard.battle_ratings import (
    Battle,
    battle_from_vote,
    bootstrap_intervals,
    bradley_terry,
    elo_expected,
    elo_ratings,
    wilson_interval,
    win_tie_loss,
)

T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)


def at(minutes):
    return T0 + timedelta(minutes=minutes)


def test_elo_single_win_moves_half_k_each_way():
    assert elo_ratings([Battle("A", "B", 1.0)]) == {"A": 1008.0, "B": 992.0}


def test_elo_tie_between_equals_changes_nothing_and_both_bad_is_a_tie():
    ratings = elo_ratings([Battle("A", "B", 0.5, choice="tie"), Battle("A", "B", 0.5, choice="both_bad")])
    assert ratings == {"A": 1000.0, "B": 1000.0}


def test_elo_second_battle_uses_updated_ratings():
    ratings = elo_ratings([Battle("A", "B", 1.0), Battle("A", "B", 0.0)])
    expected_b = 1.0 / (1.0 + 10 ** (16 / 400))  # B is 16 points behind after battle one
    gain = 16 * (1 - expected_b)
    assert ratings["B"] == pytest.approx(992 + gain)
    assert ratings["A"] == pytest.approx(1008 - gain)
    assert ratings["A"] < 1000 < ratings["B"]  # the later win counts more: order matters


def test_elo_follows_timestamps_not_input_order():
    first = Battle("A", "B", 1.0, timestamp=at(1))
    second = Battle("A", "B", 0.0, timestamp=at(2))
    assert elo_ratings([second, first]) == elo_ratings([first, second])
    assert elo_ratings([second, first])["B"] > 1000


def test_elo_is_zero_sum_and_includes_idle_systems():
    battles = [Battle("A", "B", 1.0), Battle("B", "C", 0.5), Battle("C", "A", 1.0)]
    ratings = elo_ratings(battles, systems=["D"])
    assert sum(ratings.values()) == pytest.approx(4000.0)
    assert ratings["D"] == 1000.0


def test_elo_expected_is_symmetric():
    assert elo_expected(1200, 1000) + elo_expected(1000, 1200) == pytest.approx(1.0)
    assert elo_expected(1400, 1000) == pytest.approx(10 / 11)


def test_bradley_terry_three_to_one_gives_log_odds_of_three():
    battles = [Battle("A", "B", 1.0)] * 3 + [Battle("A", "B", 0.0)]
    ratings = bradley_terry(battles, prior_games=0)
    assert ratings["A"] - ratings["B"] == pytest.approx(400 * math.log10(3))
    assert ratings["A"] + ratings["B"] == pytest.approx(2000.0)


def test_bradley_terry_ties_count_half():
    # two wins and two ties for A = 3 points of 4, the same as a 3-1 record
    battles = [Battle("A", "B", 1.0)] * 2 + [Battle("A", "B", 0.5)] * 2
    ratings = bradley_terry(battles, prior_games=0)
    assert ratings["A"] - ratings["B"] == pytest.approx(400 * math.log10(3))


def test_bradley_terry_prior_keeps_unbeaten_system_finite():
    ratings = bradley_terry([Battle("A", "B", 1.0)], prior_games=1.0)
    # one real win plus one virtual tie: 1.5 of 2 points, odds 3
    assert ratings["A"] - ratings["B"] == pytest.approx(400 * math.log10(3))


def test_bradley_terry_ignores_order_and_side():
    battles = [Battle("A", "B", 1.0), Battle("B", "C", 1.0), Battle("C", "A", 0.0), Battle("B", "A", 0.5)]
    mirrored = [Battle(b.b, b.a, 1.0 - b.score_a) for b in reversed(battles)]
    one, two = bradley_terry(battles), bradley_terry(mirrored)
    assert one == pytest.approx(two)
    assert one["A"] > one["B"] > one["C"]


battle_sets = st.lists(
    st.tuples(st.sampled_from("ABCD"), st.sampled_from("ABCD"), st.sampled_from([0.0, 0.5, 1.0])).filter(
        lambda t: t[0] != t[1]
    ),
    min_size=1,
    max_size=40,
)


@settings(max_examples=60, deadline=None)
@given(battle_sets)
def test_bradley_terry_solves_its_score_equations(raw):
    """At the estimate, each system's expected points equal its actual points (prior included)."""
    battles = [Battle(a, b, s) for a, b, s in raw]
    prior = 1.0
    ratings = bradley_terry(battles, prior_games=prior)
    names = sorted(ratings)
    strength = {n: 10 ** ((ratings[n] - 1000) / 400) for n in names}
    for name in names:
        actual = expected = 0.0
        for other in names:
            if other == name:
                continue
            p = strength[name] / (strength[name] + strength[other])
            actual += prior / 2
            expected += prior * p
            for b in battles:
                if {b.a, b.b} == {name, other}:
                    actual += b.score_a if b.a == name else 1 - b.score_a
                    expected += p
        assert expected == pytest.approx(actual, abs=1e-6)


def test_bootstrap_is_reproducible_and_brackets_the_estimate():
    battles = [Battle("A", "B", 1.0)] * 8 + [Battle("A", "B", 0.0)] * 2 + [Battle("B", "C", 1.0)] * 6
    one = bootstrap_intervals(battles, rounds=100, seed=7)
    assert one == bootstrap_intervals(battles, rounds=100, seed=7)
    point = bradley_terry(battles)
    for name, (low, high) in one.items():
        assert low <= point[name] <= high
    assert one["A"][0] > 1000 > one["C"][1]


def test_bootstrap_of_nothing_is_empty():
    assert bootstrap_intervals([], rounds=10) == {}


def test_win_tie_loss_counts_both_bad_apart():
    battles = [
        Battle("A", "B", 1.0, choice="A"),
        Battle("A", "B", 0.0, choice="B"),
        Battle("B", "A", 0.0, choice="B"),
        Battle("A", "B", 0.5, choice="tie"),
        Battle("A", "B", 0.5, choice="both_bad"),
    ]
    table = win_tie_loss(battles)
    assert table["A"] == {"battles": 5, "wins": 2, "ties": 1, "both_bad": 1, "losses": 1}
    assert table["B"] == {"battles": 5, "wins": 1, "ties": 1, "both_bad": 1, "losses": 2}


def test_battle_from_vote_maps_choices():
    def vote(choice):
        return Vote(battle_id="x", dialogue_a="d1", dialogue_b="d2", crs_a="A", crs_b="B", choice=choice)

    assert [battle_from_vote(vote(c)).score_a for c in ("A", "B", "tie", "both_bad")] == [1.0, 0.0, 0.5, 0.5]
    assert battle_from_vote(vote("both_bad")).choice == "both_bad"


def test_battle_rejects_self_play_and_bad_scores():
    with pytest.raises(ValueError):
        Battle("A", "A", 1.0)
    with pytest.raises(ValueError):
        Battle("A", "B", 1.5)


def test_wilson_known_values():
    low, high = wilson_interval(8, 10)
    assert (round(low, 4), round(high, 4)) == (0.4902, 0.9433)
    low, high = wilson_interval(0, 10)
    assert low == pytest.approx(0.0, abs=1e-12) and round(high, 4) == 0.2775
    low, high = wilson_interval(50, 100)
    assert low == pytest.approx(1 - high)
    assert wilson_interval(0, 0) is None
    with pytest.raises(ValueError):
        wilson_interval(3, 2)
