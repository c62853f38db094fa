"""Leaderboard rigor (issue 26): intervals that hold their estimate, rank ranges, a minimum vote count,
degenerate data and categories."""

from __future__ import annotations

import random

import pytest

from arena.dialogue import Dialogue, Feedback, UserInfo, UserKind, Vote
from webapp.leaderboard.table import LeaderboardOptions, compute_leaderboard, display_table, rank_ranges
from webapp.leaderboard.categories import CATEGORIES, select
from webapp.leaderboard.battle_ratings import Battle, bootstrap_intervals, bradley_terry, degenerate_intervals


def vote(a, b, choice, kind="human", da="x", db="y"):
    return Vote(battle_id=f"b-{random.random()}", dialogue_a=da, dialogue_b=db, crs_a=a, crs_b=b,
                choice=choice, user_kind=UserKind(kind))


def test_interval_holds_its_estimate_when_registered_systems_did_not_play():
    # The probe: "1095-1095" beside 1073, because the estimate was centred over every registered
    # system and the resamples over the two that played.
    battles = [Battle("A", "B", 1.0), Battle("A", "B", 1.0), Battle("A", "B", 0.0)]
    names = ["A", "B", "C", "D"]
    estimate = bradley_terry(battles, systems=names)
    intervals = bootstrap_intervals(battles, rounds=50, systems=names)
    for name in names:
        low, high = intervals[name]
        assert low <= estimate[name] <= high


def test_leaderboard_intervals_hold_estimates_with_idle_systems():
    rng = random.Random(3)
    votes = [vote(*rng.sample(["a", "b", "c"], 2), rng.choice(["A", "B", "tie"])) for _ in range(40)]
    table = compute_leaderboard([], votes, systems=["a", "b", "c", "idle1", "idle2"])
    for row in table.to_dict("records"):
        if row["bt"] is not None and row["bt"] == row["bt"]:
            assert row["bt_low"] <= row["bt"] <= row["bt_high"], row


def test_all_ties_are_degenerate_and_show_no_interval():
    votes = [vote("a", "b", "tie"), vote("b", "a", "tie")]
    assert degenerate_intervals([Battle("a", "b", 0.5), Battle("b", "a", 0.5)])
    assert not degenerate_intervals([Battle("a", "b", 0.5), Battle("a", "b", 1.0)])
    table = compute_leaderboard([], votes)
    assert table["bt"].tolist() == pytest.approx([1000.0, 1000.0])
    assert table["bt_low"].isna().all() and table["bt_high"].isna().all()
    shown = display_table(table)
    assert set(shown["BT 95% CI"]) == {"too few distinct outcomes"}
    assert set(shown["Rank"]) == {"1–2"}  # nothing tells them apart


def test_rank_ranges_as_lmarena():
    ratings = {"a": 1100.0, "b": 1050.0, "c": 900.0, "d": 850.0}
    intervals = {"a": (1060.0, 1140.0), "b": (1000.0, 1090.0), "c": (860.0, 940.0), "d": (800.0, 880.0)}
    ranks = rank_ranges(ratings, intervals)
    assert ranks["a"] == (1, 1, 2)  # overlaps b
    assert ranks["b"] == (2, 1, 2)
    assert ranks["c"] == (3, 3, 4)
    assert ranks["d"] == (4, 3, 4)
    ranks = rank_ranges({"a": 1.0, "b": 0.0}, {"a": (0.5, 1.5), "b": None})
    assert ranks == {"a": (1, 1, 2), "b": (2, 1, 2)}


def test_rank_column_shows_a_range_and_separated_systems_a_single_rank():
    votes = [vote("strong", "weak", "A") for _ in range(30)] + [vote("strong", "weak", "B") for _ in range(2)]
    table = compute_leaderboard([], votes)
    shown = display_table(table).set_index("System")
    assert shown.loc["strong", "Rank"] == "1" and shown.loc["weak", "Rank"] == "2"


def test_minimum_votes_hides_ratings_and_rank():
    votes = [vote("a", "b", "A"), vote("a", "b", "B"), vote("a", "b", "A")]
    table = compute_leaderboard([], votes, options=LeaderboardOptions(min_votes=5))
    assert table["bt"].isna().all() and table["elo"].isna().all() and table["rank"].isna().all()
    assert table.attrs["below_min_votes"] == ["a", "b"]
    assert set(display_table(table)["BT 95% CI"]) == {"needs 5 votes"}
    shown = compute_leaderboard([], votes, options=LeaderboardOptions(min_votes=3))
    assert shown["bt"].notna().all()


def dialogue(crs, turns, kind="human", sentiment="satisfied", dataset_meta=None):
    d = Dialogue(crs_id=crs, user=UserInfo(kind=UserKind(kind), id="u"), metadata=dataset_meta or {})
    for i in range(turns):
        d.add_user(f"hi {i}")
        d.add_agent("hello")
    d.feedback = Feedback(sentiment=sentiment)
    return d


def test_categories_split_by_dataset_and_dialogue_length():
    short_r = dialogue("kbrd_redial", 1)
    long_r = dialogue("unicrs_redial", 6)
    long_o = dialogue("kbrd_opendialkg", 6)
    long_o2 = dialogue("barcor_opendialkg", 7)
    dialogues = [short_r, long_r, long_o, long_o2]
    votes = [vote("kbrd_redial", "unicrs_redial", "A", da=short_r.dialogue_id, db=long_r.dialogue_id),
             vote("kbrd_opendialkg", "barcor_opendialkg", "B", da=long_o.dialogue_id, db=long_o2.dialogue_id)]
    assert {"all", "redial", "opendialkg", "short", "long"} <= set(CATEGORIES)
    d, v = select("redial", dialogues, votes)
    assert {x.crs_id for x in d} == {"kbrd_redial", "unicrs_redial"} and len(v) == 1
    d, v = select("opendialkg", dialogues, votes)
    assert {x.crs_id for x in d} == {"kbrd_opendialkg", "barcor_opendialkg"} and len(v) == 1
    d, v = select("long", dialogues, votes)
    assert short_r not in d and [x.crs_a for x in v] == ["kbrd_opendialkg"]
    d, v = select("short", dialogues, votes)
    assert d == [short_r] and v == []
    assert select("all", dialogues, votes) == (dialogues, votes)
    with pytest.raises(ValueError):
        select("nonsense", dialogues, votes)
