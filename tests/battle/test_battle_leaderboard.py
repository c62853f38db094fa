"""The leaderboard table from hand-made dialogues and votes."""

from datetime import datetime, timedelta, timezone

import pandas as pd
import pytest

from arena.dialogue import Dialogue, Feedback, Score, UserInfo, UserKind, Vote
from webapp.leaderboard.table import compute_leaderboard, display_table, leaderboard_figure
from webapp.leaderboard.battle_ratings import Battle, bradley_terry, elo_ratings, wilson_interval

T0 = datetime(2024, 5, 1, tzinfo=timezone.utc)


def dialogue(crs, sentiment=None, kind="human", rdl=None, core=None, turns=1):
    d = Dialogue(crs_id=crs, user=UserInfo(kind=UserKind(kind), id="u"))
    for i in range(turns):
        d.add_user(f"hi {i}")
        d.add_agent("hello")
    if sentiment:
        d.feedback = Feedback(sentiment=sentiment)
    if rdl is not None or rdl == "unscored":
        d.scores["rdl"] = Score(value=None if rdl == "unscored" else rdl, scorer="rdl", version="1")
    if core is not None:
        d.scores["core.overall"] = Score(value=core, scorer="core", version="1")
    return d


def vote(a, b, choice, minute, kind="human"):
    return Vote(battle_id=f"b{minute}", dialogue_a="x", dialogue_b="y", crs_a=a, crs_b=b, choice=choice,
                user_kind=UserKind(kind), timestamp=T0 + timedelta(minutes=minute))


@pytest.fixture
def data():
    dialogues = [
        dialogue("alpha", "satisfied", rdl=0.5, core=4.0),
        dialogue("alpha", "satisfied", rdl=0.7),
        dialogue("alpha", "frustrated", rdl="unscored"),
        dialogue("alpha"),  # not rated
        dialogue("alpha", turns=0),  # opened, never used: not a conversation
        dialogue("beta", "frustrated", core=2.0),
        dialogue("beta", "satisfied", kind="simulator"),
        dialogue("gamma", "satisfied", kind="simulator"),
    ]
    votes = [
        vote("alpha", "beta", "A", 1),
        vote("beta", "alpha", "B", 2),
        vote("alpha", "beta", "tie", 3),
        vote("beta", "alpha", "both_bad", 4),
        vote("gamma", "beta", "A", 5, kind="simulator"),
    ]
    return dialogues, votes


def test_human_rows(data):
    dialogues, votes = data
    table = compute_leaderboard(dialogues, votes, user_kind="human")
    rows = {r["system"]: r for r in table.to_dict("records")}
    assert list(table["system"]) == ["alpha", "beta"]  # best Bradley-Terry first; gamma has no human data
    alpha = rows["alpha"]
    assert (alpha["conversations"], alpha["rated"], alpha["satisfied"]) == (4, 3, 2)
    assert alpha["satisfaction"] == pytest.approx(2 / 3)
    low, high = wilson_interval(2, 3)
    assert (alpha["satisfaction_low"], alpha["satisfaction_high"]) == pytest.approx((low, high))
    counts = tuple(alpha[k] for k in ("battles", "wins", "ties", "both_bad", "losses"))
    assert counts == (4, 2, 1, 1, 0)
    assert (rows["beta"]["wins"], rows["beta"]["losses"]) == (0, 2)
    battles = [Battle("alpha", "beta", 1.0), Battle("beta", "alpha", 0.0), Battle("alpha", "beta", 0.5),
               Battle("beta", "alpha", 0.5)]
    assert alpha["elo"] == pytest.approx(elo_ratings(battles)["alpha"])
    assert alpha["bt"] == pytest.approx(bradley_terry(battles)["alpha"])
    assert alpha["bt_low"] <= alpha["bt"] <= alpha["bt_high"]
    assert alpha["mean_rdl"] == pytest.approx(0.6) and alpha["rdl_scored"] == 2  # unscored is not zero
    assert alpha["mean_core_overall"] == pytest.approx(4.0)
    assert pd.isna(rows["beta"]["mean_rdl"])


def test_simulated_rows_are_kept_apart(data):
    dialogues, votes = data
    table = compute_leaderboard(dialogues, votes, user_kind="simulator")
    rows = {r["system"]: r for r in table.to_dict("records")}
    assert set(rows) == {"beta", "gamma"}
    assert rows["gamma"]["wins"] == 1 and rows["beta"]["losses"] == 1
    assert rows["beta"]["conversations"] == 1 and rows["beta"]["satisfied"] == 1
    everyone = compute_leaderboard(dialogues, votes)
    assert int(everyone["battles"].sum()) == 2 * len(votes)


def test_unknown_filter_is_refused(data):
    with pytest.raises(ValueError):
        compute_leaderboard(*data, user_kind="robots")


def test_systems_without_data_and_empty_input():
    table = compute_leaderboard([], [], systems=["idle"])
    assert table.to_dict("records")[0]["conversations"] == 0
    assert pd.isna(table.to_dict("records")[0]["bt"])  # no battles, no rating
    assert compute_leaderboard([], []).empty


def test_display_and_figure(data):
    table = compute_leaderboard(*data, user_kind="human")
    shown = display_table(table)
    first = shown.iloc[0]
    assert first["System"] == "alpha"
    assert first["Satisfied / rated"] == "2 / 3"
    assert first["W / T / L (both bad)"] == "2 / 1 / 0 (1)"
    assert shown.iloc[1]["Mean RDL"] == "–"
    fig = leaderboard_figure(table, title="people")
    assert len(fig.axes) == 2
    empty_fig = leaderboard_figure(compute_leaderboard([], []))
    assert len(empty_fig.axes) == 2


def test_metric_meta_table_lists_means_and_kendall_tau():
    from webapp.ui.leaderboard_tab import metric_meta_table

    dialogues = [
        dialogue("alpha", "satisfied", rdl=0.9), dialogue("alpha", "satisfied", rdl=0.7),
        dialogue("beta", "satisfied", rdl=0.5), dialogue("beta", "frustrated", rdl=0.3),
        dialogue("gamma", "frustrated", rdl=0.1),
    ]
    table = metric_meta_table(dialogues)
    assert list(table["System"]) == ["alpha", "beta", "gamma", "Kendall tau vs satisfaction"]
    assert list(table["rdl"]) == ["0.800", "0.400", "0.100", "1.000"]  # same order as satisfaction
    assert metric_meta_table([dialogue("alpha", "satisfied")]) is None  # no metric scored yet
