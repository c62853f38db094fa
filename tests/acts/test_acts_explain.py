"""Explaining RDL, SRRR and SR: the pure function, and `score --explain` on a file and on a database."""

import json

import pytest

from arena.store import Store
from evaluators import metrics as M
from evaluators.acts.llm import LLMActAnnotator
from evaluators.cli import main
from tests.acts.acts_helpers import make_dialogue, three_rounds
from tests.acts.test_acts_cli import write_corpus
from tests.acts.test_acts_scoring import fake_client, unannotated
from webapp.runs.scorer import BackgroundScorer


def test_three_rounds_are_explained_one_by_one():
    d = three_rounds()
    e = M.explain_act_metrics(d)
    assert [(r.number, r.recommend.index, r.outcome) for r in e.rounds] == [
        (1, 1, "rejected"), (2, 3, "accepted"), (3, 7, "pending")]
    assert [r.decided_by.index if r.decided_by else None for r in e.rounds] == [2, 6, None]
    assert e.rounds[0].decided_by.text == "yes, I didn't like it"
    assert e.rounds[0].decided_by.intents == ("REJ", "SEE")
    assert [(a.utterance.index, a.round, a.decides_round) for a in e.acceptances] == [(6, 2, True)]
    assert (e.length, e.length_unit) == (9, "utterances")
    assert (e.rdl, e.srrr, e.sr) == (pytest.approx(1 / 9), pytest.approx(1 / 3), 1.0)
    assert (e.rdl, e.srrr, e.sr) == (M.rdl(d), M.srrr(d), M.success(d))


def test_acceptances_outside_a_decision_still_count_for_rdl():
    # An Accept before any recommendation counts in |I_acc| (RDL counts accepting utterances) but
    # accepts nothing recommended; an Accept after a Reject in a round makes the round accepted.
    d = make_dialogue([
        ("U", "I'll watch anything with Pacino", ["PRO", "ACC"]),
        ("A", "Heat (1995)?", ["REC-E"], [("m1", "Heat (1995)")]),
        ("U", "no", ["REJ"]),
        ("U", "actually yes, I'll watch it", ["ACC"]),
        ("U", "and I'll watch it twice", ["ACC"]),
        ("A", "Great.", ["OTH"]),
    ])
    e = M.explain_act_metrics(d)
    assert [(r.outcome, r.decided_by.index, r.titles) for r in e.rounds] == [("accepted", 3, ("Heat (1995)",))]
    assert [(a.utterance.index, a.round, a.decides_round) for a in e.acceptances] == [(0, None, False),
                                                                                       (3, 1, True),
                                                                                       (4, 1, False)]
    assert (e.rdl, e.srrr, e.sr) == (pytest.approx(3 / 6), 1.0, 1.0)
    assert e.as_dict()["acceptances"][1]["utterance"]["text"] == "actually yes, I'll watch it"


def test_explaining_needs_acts():
    with pytest.raises(M.MissingActs):
        M.explain_act_metrics(unannotated())


def test_score_explain_on_a_file_prints_each_round(tmp_path, capsys):
    src = tmp_path / "dialogues.json"
    write_corpus(src)
    assert main(["score", "--input", str(src), "--explain", "a2"]) == 0
    out = capsys.readouterr().out
    assert "dialogue a2 (sys_a): acts by the corpus" in out
    assert 'round 1: utterance 1 "I would recommend the following items: 1: Heat (1995)" [REC-S]' in out
    assert 'rejected by utterance 2 "that\'s not a comedy" [REJ]' in out
    assert 'accepted by utterance 4 "ok I\'ll watch that" [ACC]' in out
    assert "RDL = |I_acc| / |d| = 1/6 = 0.167" in out
    assert "SRRR = accepted rounds / rounds = 1/2 = 0.500" in out
    assert "SR = 1 (a round accepted)" in out
    assert "stored: rdl 0.167 (version 2/provided); srrr 0.500" in out


def test_score_explain_json_and_refusals(tmp_path, capsys):
    src = tmp_path / "dialogues.json"
    write_corpus(src)
    assert main(["score", "--input", str(src), "--explain", "b2", "--explain", "a1",
                 "--explain-format", "json"]) == 0
    b2, a1 = (json.loads(line) for line in capsys.readouterr().out.splitlines())
    assert (b2["dialogue_id"], b2["rounds"], b2["rdl"], b2["sr"]) == ("b2", [], 0.0, 0.0)
    assert [r["outcome"] for r in a1["rounds"]] == ["accepted"]
    assert a1["rounds"][0]["decided_by"]["index"] == 2 and a1["stored_scores"]["rdl"]["agrees"]
    assert main(["score", "--input", str(src), "--explain", "zz"]) == 2
    assert capsys.readouterr().err.strip() == f"error: no dialogue 'zz' in {src}"
    assert main(["score", "--input", str(src), "--explain", "a1", "--out", str(tmp_path / "o.jsonl")]) == 2
    assert "leave out --out" in capsys.readouterr().err


def test_score_explain_on_a_database_uses_the_stored_acts(tmp_path, capsys):
    db = tmp_path / "arena.sqlite3"
    store = Store(db)
    d = unannotated()
    store.save_dialogue(d)
    annotator = LLMActAnnotator(fake_client(), use_catalog=False)
    scorer = BackgroundScorer(store, ["acts", "rdl", "srrr", "sr"], annotator=annotator)
    scorer.submit(d.dialogue_id)
    assert scorer.wait(timeout=30)
    scorer.shutdown()
    # No annotator is at hand here: the explanation can only come from the acts stored with the scores.
    assert main(["score", "--db", str(db), "--explain", d.dialogue_id]) == 0
    out = capsys.readouterr().out
    assert f"dialogue d-1 (sys): acts by {annotator.label}" in out
    assert 'round 1: utterance 1 "Try Heat (1995)." [REC-S] recommends Heat (1995)' in out
    assert 'rejected by utterance 2 "no, seen it" [REJ]' in out
    assert 'accepted by utterance 4 "great, I\'ll watch it" [ACC]' in out
    assert "utterance 4 \"great, I'll watch it\" [ACC]: decides round 2" in out
    assert "RDL = |I_acc| / |d| = 1/5 = 0.200" in out and "DIFFERS" not in out
    assert main(["score", "--db", str(tmp_path / "none.sqlite3"), "--explain", "d-1"]) == 2
    assert "no database at" in capsys.readouterr().err
