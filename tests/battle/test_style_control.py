"""Style control (issue 26): reply length and items shown as Bradley-Terry covariates; the rank change
is shown."""

from __future__ import annotations

import math
import random

import pytest

from arena.dialogue import Dialogue, RecommendedItem, UserInfo, Vote
from webapp.leaderboard.table import compute_leaderboard, display_table
from webapp.leaderboard.battle_ratings import bradley_terry, battle_from_vote
from webapp.leaderboard.style_control import dialogue_style, rank_change, style_controlled_ratings


def dialogue(crs, length, items=1):
    d = Dialogue(crs_id=crs, user=UserInfo(id="u"))
    d.add_user("a film please")
    d.add_agent("x" * length, items=[RecommendedItem(item_id=str(i), title=f"T{i}") for i in range(items)])
    return d


def length_driven_battles(seed=0, n=1500):
    """People prefer the longer reply (odds rising with the length difference, as the model says); the
    systems differ only in how long they write."""
    import math

    rng = random.Random(seed)
    means = {"wordy": 300, "middling": 200, "brief": 100}
    dialogues, votes = [], []
    for k in range(n):
        a, b = rng.sample(sorted(means), 2)
        da = dialogue(a, max(1, int(rng.gauss(means[a], 80))))
        db = dialogue(b, max(1, int(rng.gauss(means[b], 80))))
        la, lb = len(da.utterances[-1].text), len(db.utterances[-1].text)
        a_wins = rng.random() < 1 / (1 + math.exp(-6 * (la - lb) / (la + lb)))
        dialogues += [da, db]
        votes.append(Vote(battle_id=f"b{k}", dialogue_a=da.dialogue_id, dialogue_b=db.dialogue_id, crs_a=a,
                          crs_b=b, choice="A" if a_wins else "B"))
    return dialogues, votes


def test_style_of_a_dialogue():
    d = dialogue("x", 10, items=3)
    d.add_user("more")
    d.add_agent("y" * 30)
    assert dialogue_style(d) == (20.0, 1.5)


def test_length_preference_is_explained_by_the_covariate():
    dialogues, votes = length_driven_battles()
    plain = bradley_terry([battle_from_vote(v) for v in votes])
    style, coefficients = style_controlled_ratings(votes, dialogues)
    assert plain["wordy"] - plain["brief"] > 150
    assert abs(style["wordy"] - style["brief"]) < 0.3 * (plain["wordy"] - plain["brief"])
    assert coefficients["reply_length"] > 1.0
    assert sum(style.values()) / 3 == pytest.approx(1000.0)


def test_ties_count_half_and_missing_dialogues_are_left_out():
    a, b = dialogue("a", 50), dialogue("b", 50)
    tie = Vote(battle_id="t", dialogue_a=a.dialogue_id, dialogue_b=b.dialogue_id, crs_a="a", crs_b="b", choice="tie")
    ratings, _ = style_controlled_ratings([tie, tie], [a, b])
    assert ratings["a"] == pytest.approx(ratings["b"])
    lost = Vote(battle_id="l", dialogue_a="gone", dialogue_b=b.dialogue_id, crs_a="a", crs_b="b", choice="A")
    assert style_controlled_ratings([lost], [b]) == ({}, {})


def test_rank_change_is_shown_on_the_leaderboard():
    assert rank_change({"x": 1, "y": 2, "z": 3}, {"x": 900.0, "y": 1100.0, "z": 1000.0}) == {"x": -2, "y": 1, "z": 1}
    # a system that wins on quality at equal length keeps its place; the length-driven order collapses
    dialogues, votes = length_driven_battles(seed=3, n=300)
    table = compute_leaderboard(dialogues, votes)
    assert table["bt_style"].notna().all()
    rows = {r["system"]: r for r in table.to_dict("records")}
    assert sorted(rows, key=lambda n: rows[n]["rank"]) == ["wordy", "middling", "brief"]  # by length alone
    style_order = sorted(rows, key=lambda n: -rows[n]["bt_style"])
    expected = {n: rows[n]["rank"] - (style_order.index(n) + 1) for n in rows}
    assert {n: rows[n]["rank_change_style"] for n in rows} == expected
    assert expected["wordy"] < 0  # without its length advantage the wordy system loses its first place
    shown = display_table(table)
    assert "BT, style controlled" in shown.columns
    assert dict(zip(shown["System"], shown["Rank change, style controlled"])) == {
        n: f"{c:+d}" if c else "0" for n, c in expected.items()}


def test_style_controlled_intervals_hold_their_estimates_and_narrow_with_data():
    from webapp.leaderboard.style_control import fit_style_rows, style_controlled_intervals, style_rows

    dialogues, votes = length_driven_battles(seed=5, n=120)
    rows = style_rows(votes, dialogues)
    estimate, _ = fit_style_rows(rows)
    intervals = style_controlled_intervals(rows, rounds=40, seed=1)
    assert set(intervals) == set(estimate)
    for name, (low, high) in intervals.items():
        assert low <= estimate[name] <= high and high > low
    assert style_controlled_intervals(rows, rounds=40, seed=1) == intervals  # one seed, one answer
    many_d, many_v = length_driven_battles(seed=5, n=600)
    wide = {n: h - lo for n, (lo, h) in intervals.items()}
    narrow = {n: h - lo for n, (lo, h) in style_controlled_intervals(style_rows(many_v, many_d), rounds=40).items()}
    assert all(narrow[n] < wide[n] for n in wide)


def test_style_controlled_intervals_on_the_board_and_none_for_degenerate_data():
    dialogues, votes = length_driven_battles(seed=2, n=150)
    table = compute_leaderboard(dialogues, votes)
    for row in table.to_dict("records"):
        assert row["bt_style_low"] <= row["bt_style"] <= row["bt_style_high"]
    shown = display_table(table)
    assert shown["Style-controlled 95% CI"].str.match(r"^\d+–\d+$").all()
    assert set(table.attrs["style_coefficients"]) == {"reply_length", "items_shown"}
    from webapp.ui.leaderboard_tab import summary_text
    odds = math.exp(table.attrs["style_coefficients"]["reply_length"])
    assert f"a standard deviation more reply length multiplies the odds of winning by {odds:.2f}" in \
        summary_text(table)
    a, b = dialogue("a", 50), dialogue("b", 80)
    ties = [Vote(battle_id=f"t{i}", dialogue_a=a.dialogue_id, dialogue_b=b.dialogue_id, crs_a="a", crs_b="b",
                 choice="tie") for i in range(3)]
    from webapp.leaderboard.style_control import style_controlled_intervals, style_rows
    assert style_controlled_intervals(style_rows(ties, [a, b])) == {}
    flat = compute_leaderboard([a, b], ties)
    assert flat["bt_style"].notna().all() and flat["bt_style_low"].isna().all()
    assert set(display_table(flat)["Style-controlled 95% CI"]) == {"–"}
