"""Crowds are kept apart: the leaderboard and meta-evaluation count the open arena unless a study is named,
and a study's flagged workers count nowhere."""

from __future__ import annotations

import json

from arena.dialogue import Dialogue, Feedback, Score, UserInfo, UserKind, Utterance, Role, Vote
from evaluators.cli import main as evaluators_main
from evaluators.meta import meta_table
from webapp.leaderboard.table import compute_leaderboard


def dialogue(crs: str, sentiment: str, study: str | None = None, user: str = "u1") -> Dialogue:
    d = Dialogue(crs_id=crs, user=UserInfo(kind=UserKind.HUMAN, id=user),
                 metadata={"study": study, "study_version": 1} if study else {})
    d.utterances = [Utterance(role=Role.USER, text="a movie please"), Utterance(role=Role.AGENT, text="Jaws")]
    d.feedback = Feedback(sentiment=sentiment)
    d.scores = {"rdl": Score(value=0.5 if sentiment == "satisfied" else 0.1, scorer="rdl", version="1")}
    return d


def test_the_leaderboard_counts_one_crowd_at_a_time():
    data = [dialogue("alpha", "satisfied"), dialogue("alpha", "frustrated", "pilot"),
            dialogue("beta", "frustrated", "pilot", user="pseudonym:bad")]
    a, b = data[1], data[2]
    votes = [Vote(battle_id="b1", dialogue_a=a.dialogue_id, dialogue_b=b.dialogue_id, crs_a="alpha", crs_b="beta",
                  choice="A", study="pilot", study_version=1)]
    open_board = compute_leaderboard(data, votes).set_index("system")
    assert open_board.loc["alpha", "rated"] == 1 and open_board["battles"].sum() == 0
    study_board = compute_leaderboard(data, votes, crowd="pilot").set_index("system")
    assert study_board.loc["alpha", "satisfaction"] == 0 and study_board.loc["alpha", "battles"] == 1
    clean = compute_leaderboard(data, votes, crowd="pilot", left_out_users={"pseudonym:bad"}).set_index("system")
    assert "beta" not in clean.index or clean.loc["beta", "rated"] == 0
    assert compute_leaderboard(data, votes, crowd=None)["rated"].sum() == 3


def test_meta_evaluation_filters_by_crowd(tmp_path, capsys):
    data = [dialogue("alpha", "satisfied"), dialogue("beta", "frustrated"),
            dialogue("alpha", "frustrated", "pilot"), dialogue("beta", "satisfied", "pilot")]
    assert {r["crs_id"]: r["satisfaction"] for r in meta_table(data)} == {"alpha": 1.0, "beta": 0.0}
    assert {r["crs_id"]: r["satisfaction"] for r in meta_table(data, crowd="pilot")} == {"alpha": 0.0, "beta": 1.0}
    path = tmp_path / "dialogues.jsonl"
    path.write_text("".join(d.model_dump_json() + "\n" for d in data))
    assert evaluators_main(["meta", "--input", str(path), "--crowd", "pilot", "--json", "--rounds", "10"]) == 0
    systems = json.loads(capsys.readouterr().out)["systems"]
    assert {r["crs_id"]: r["dialogues"] for r in systems} == {"alpha": 1, "beta": 1}
