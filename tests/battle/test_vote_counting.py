"""Votes a reviewer can trust: first votes only, ties left out as an option, tiers of overlapping intervals,
position bias, and the votes and participants each board rests on (webapp/leaderboard/vote_counting.py)."""

from __future__ import annotations

import random
from datetime import timedelta

import pandas as pd
import pytest

from arena.dialogue import UserKind, Vote, utc_now
from arena.store import Store
from webapp.leaderboard.battle_ratings import wilson_interval
from webapp.leaderboard.snapshot import compute_boards
from webapp.leaderboard.table import LeaderboardOptions, compute_leaderboard, display_table
from webapp.leaderboard.vote_counting import position_bias, tiers
from webapp.ui.leaderboard_tab import position_bias_table, rests_on_text
from tests.store.store_strategies import rich_dialogue

START = utc_now() - timedelta(days=1)


def vote(a: str, b: str, choice: str, user: str, minute: int) -> Vote:
    return Vote(battle_id=f"b-{random.random()}", dialogue_a=f"x{minute}{user}",
                dialogue_b=f"y{minute}{user}",
                crs_a=a, crs_b=b, choice=choice, user_id=user, user_kind=UserKind.HUMAN,
                timestamp=START + timedelta(minutes=minute))


def _first_and_later(people: int = 30) -> list[Vote]:
    """Each person's first vote prefers "fresh"; their four later votes prefer "practised"."""
    votes = []
    for p in range(people):
        votes.append(vote("fresh", "practised", "A", f"user-{p}", 0))
        votes += [vote("fresh", "practised", "B", f"user-{p}", k) for k in range(1, 5)]
    return votes


def test_first_votes_only_ranks_on_each_sessions_first_vote():
    votes = _first_and_later()
    every = compute_leaderboard([], votes)
    first = compute_leaderboard([], votes, options=LeaderboardOptions(first_votes_only=True))
    assert every["system"].tolist()[0] == "practised"
    assert first["system"].tolist()[0] == "fresh"
    assert (every.attrs["votes_fitted"], every.attrs["participants"]) == (150, 30)
    assert (first.attrs["votes_fitted"], first.attrs["participants"]) == (30, 30)
    assert rests_on_text(first) == ("This board's ratings rest on 30 votes from 30 participants; counting "
                                    "first vote of each session only.")


def test_votes_of_no_known_session_have_no_first_vote():
    votes = [vote("a", "b", "A", "anonymous", k) for k in range(3)] + [vote("a", "b", "B", "user-1", 9)]
    table = compute_leaderboard([], votes, options=LeaderboardOptions(first_votes_only=True))
    assert table.attrs["votes_fitted"] == 1 and table.attrs["votes_without_session"] == 0
    every = compute_leaderboard([], votes)
    assert (every.attrs["participants"], every.attrs["votes_without_session"]) == (1, 3)
    assert "(and 3 votes with no session known)" in rests_on_text(every)


def test_ties_are_half_wins_by_default_and_can_be_left_out():
    votes = ([vote("a", "b", "A", f"u{k}", k) for k in range(6)]
             + [vote("a", "b", "B", f"v{k}", k) for k in range(2)]
             + [vote("a", "b", "tie", f"w{k}", k) for k in range(40)])
    half = compute_leaderboard([], votes).set_index("system")
    dropped = compute_leaderboard([], votes, options=LeaderboardOptions(ties="drop")).set_index("system")
    # Forty ties pull the two together as half-wins; left out, 6 wins to 2 set them further apart.
    assert half.loc["a", "bt"] - half.loc["b", "bt"] < dropped.loc["a", "bt"] - dropped.loc["b", "bt"]
    assert dropped.loc["a", "ties"] == 40  # still shown among the counts
    assert dropped.attrs["votes_fitted"] == 8 and half.attrs["votes_fitted"] == 48
    with pytest.raises(ValueError, match="tie rule"):
        compute_leaderboard([], votes, options=LeaderboardOptions(ties="count"))


def test_ties_left_out_with_only_ties_shows_no_rating():
    table = compute_leaderboard([], [vote("a", "b", "tie", "u", 1)], options=LeaderboardOptions(ties="drop"))
    assert table["bt"].isna().all() and table.attrs["votes_fitted"] == 0


def test_tiers_join_intervals_that_overlap_through_a_chain():
    ratings = {"a": 100.0, "b": 80.0, "c": 75.0, "d": 10.0, "e": 5.0}
    # b does not reach a, but c reaches both: one tier of three. d and e overlap; nothing reaches them.
    intervals = {"a": (90.0, 110.0), "b": (70.0, 85.0), "c": (50.0, 100.0), "d": (0.0, 20.0),
                 "e": (-5.0, 8.0)}
    assert tiers(ratings, intervals) == {"a": 1, "b": 1, "c": 1, "d": 2, "e": 2}
    assert tiers(ratings, {**intervals, "e": None}) == {}  # no interval: no tiers


def test_a_board_of_clearly_separated_systems_has_one_tier_each():
    rng = random.Random(7)
    strength = {"top": 3.0, "mid": 0.0, "low": -3.0}
    votes = []
    for k in range(600):
        a, b = rng.sample(sorted(strength), 2)
        p = 1 / (1 + 2.718281828 ** (strength[b] - strength[a]))
        votes.append(vote(a, b, "A" if rng.random() < p else "B", f"user-{k % 50}", k))
    table = compute_leaderboard([], votes)
    assert dict(zip(table["system"], table["tier"])) == {"top": 1, "mid": 2, "low": 3}
    assert display_table(table)["Tier"].tolist() == ["1", "2", "3"]


def test_position_bias_counts_each_side_with_a_wilson_interval():
    choices = pd.Series(["A"] * 60 + ["B"] * 30 + ["tie"] * 7 + ["both_bad"] * 3).to_numpy(dtype=object)
    bias = position_bias(choices).set_index("outcome")
    assert bias["battles"].tolist() == [60, 30, 7, 3]
    assert bias.loc["Left (A) won", "share"] == pytest.approx(0.6)
    low, high = wilson_interval(60, 100)  # the board's own Wilson formula, written apart from scipy's
    assert (bias.loc["Left (A) won", "share_low"], bias.loc["Left (A) won", "share_high"]) == pytest.approx(
        (low, high))
    assert position_bias(choices[:0])["share"].isna().all()


def test_each_board_carries_its_position_bias():
    votes = [vote("a", "b", "A", f"u{k}", k) for k in range(3)] + [vote("b", "a", "B", "u9", 9)]
    table = compute_leaderboard([], votes)
    shown = position_bias_table(table)
    assert shown["Battles"].tolist() == [3, 1, 0, 0]
    assert shown["Share"].tolist()[:2] == ["75%", "25%"]


def _stored_battle(store: Store, user: str, choice: str) -> None:
    a, b = (rich_dialogue(crs, user, n_turns=1) for crs in ("kbrd_redial", "barcor_redial"))  # no failed turn
    store.save_battle(a, b, Vote(battle_id=f"battle-{a.dialogue_id}", dialogue_a=a.dialogue_id,
                                 dialogue_b=b.dialogue_id, crs_a=a.crs_id, crs_b=b.crs_id, choice=choice,
                                 user_id=user))


def test_the_job_computes_the_counting_variants_from_the_stored_order(tmp_path):
    with Store(tmp_path / "arena.sqlite3") as store:
        for p in range(4):
            _stored_battle(store, f"user-{p}", "A")
            for _ in range(3):
                _stored_battle(store, f"user-{p}", "B")
        published = compute_boards(store, LeaderboardOptions(bootstrap_rounds=20, style_rounds=10))
    default = published.boards[("human", "all")]
    first = published.variants[("human", (True, "half"))]
    assert default.attrs["votes_fitted"] == 16 and first.attrs["votes_fitted"] == 4
    assert first["system"].tolist()[0] == "kbrd_redial" and default["system"].tolist()[0] == "barcor_redial"
    assert first.attrs["participants"] == 4
