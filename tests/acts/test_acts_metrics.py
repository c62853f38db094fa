"""Metric values worked out by hand on small dialogues (see acts_helpers.py)."""

import pytest

from arena.target_metrics import coverage_increase
from evaluators import metrics as M
from tests.acts.acts_helpers import make_dialogue, three_rounds


def test_rdl_counts_utterances_by_default():
    d = three_rounds()
    assert M.dialogue_length(d) == 9
    assert M.accepted_count(d) == 1
    assert M.rdl(d) == pytest.approx(1 / 9)


def test_rdl_in_turns():
    d = three_rounds()
    assert M.dialogue_length(d, "turns") == 5
    assert M.rdl(d, length_unit="turns") == pytest.approx(1 / 5)
    with pytest.raises(ValueError):
        M.dialogue_length(d, "words")


def test_rounds_and_srrr():
    rounds = M.recommendation_rounds(three_rounds())
    assert [(r.start, r.end, r.decision) for r in rounds] == [(1, 3, "reject"), (3, 7, "accept"), (7, 9, None)]
    assert M.srrr(three_rounds()) == pytest.approx(1 / 3)
    assert M.success(three_rounds()) == 1.0


def test_no_recommendation_scores_zero():
    d = make_dialogue([("U", "hi", ["OTH"]), ("A", "What do you like?", ["REQ"]), ("U", "horror", ["ANS"])])
    assert M.rdl(d) == 0.0
    assert M.srrr(d) == 0.0
    assert M.success(d) == 0.0
    assert M.recommendation_rounds(d) == []


def test_an_acceptance_anywhere_in_a_round_makes_it_successful():
    d = make_dialogue([
        ("A", "Try Up (2009) or Cars (2006)", ["REC-S"]),
        ("U", "Up yes, Cars no", ["ACC", "REJ"]),  # both in one message: the user took an item
        ("U", "actually no, I don't like Pixar", ["REJ"]),  # a later rejection does not undo it
        ("A", "Then Shrek (2001)?", ["REC-E"]),
        ("U", "nah", ["REJ"]),
        ("U", "ok fine, I'll watch it", ["ACC"]),  # the user came round: RDL counts it, so does SRRR
    ])
    assert [(r.decision, r.decided_at) for r in M.recommendation_rounds(d)] == [("accept", 1), ("accept", 5)]
    assert M.srrr(d) == 1.0
    assert M.rdl(d) == pytest.approx(2 / 6)


def test_a_round_with_only_rejections_is_rejected_at_the_first():
    d = make_dialogue([("A", "Heat (1995)?", ["REC-E"]), ("U", "no", ["REJ"]), ("U", "really no", ["REJ"])])
    assert [(r.decision, r.decided_at) for r in M.recommendation_rounds(d)] == [("reject", 1)]
    assert (M.srrr(d), M.success(d)) == (0.0, 0.0)


def test_acceptance_without_a_recommendation_is_not_success():
    d = make_dialogue([("U", "I'll watch Heat", ["ACC"]), ("A", "Good choice", ["RESP"])])
    assert M.success(d) == 0.0
    assert M.rdl(d) == 0.5  # RDL counts every acceptance


def test_act_metrics_need_acts():
    d = make_dialogue([("U", "hi", None), ("A", "hello", ["OTH"])])
    with pytest.raises(M.MissingActs):
        M.rdl(d)


def _target_dialogue():
    return make_dialogue([
        ("U", "hi", ["OTH"]),
        ("A", "1: A 2: X", ["REC-S"], [("t1", "Alpha (2000)"), ("x", "Xeno (2001)")]),
        ("U", "more", ["CON"]),
        ("A", "1: X 2: Y", ["REC-S"], [("x", "Xeno (2001)"), ("y", "Yolo (2002)")]),
        ("U", "more", ["CON"]),
        ("A", "You might like Movie C (2010)", ["REC-S"], [], ["Movie C (2010)"]),
        ("U", "and?", ["CON"]),
        ("A", "1: A 2: B", ["REC-S"], [("t1", "Alpha (2000)"), ("t2", "Beta (2003)")]),
    ], targets=["t1", "t2", "Movie C"])


def test_recall_per_turn_k2():
    d = _target_dialogue()
    targets = M.targets_of(d)
    assert M.recall_per_turn(d, targets, 2) == pytest.approx([1 / 3, 0.0, 1 / 3, 2 / 3])
    assert M.recall_at_k(d, targets, 2) == pytest.approx(1 / 3)


def test_recall_per_turn_k1_cuts_lists():
    d = _target_dialogue()
    assert M.recall_per_turn(d, M.targets_of(d), 1) == pytest.approx([1 / 3, 0.0, 1 / 3, 1 / 3])
    assert M.recall_at_k(d, M.targets_of(d), 1) == pytest.approx(0.25)


def test_preference_coverage_and_increase():
    d = _target_dialogue()
    pc = M.preference_coverage(d, M.targets_of(d), 2)
    assert pc == pytest.approx([1 / 3, 1 / 3, 2 / 3, 1.0])
    assert coverage_increase(pc) == pytest.approx([1 / 3, 0.0, 1 / 3, 1 / 3])
    assert M.mean(coverage_increase(pc)) == pytest.approx(0.25)


def test_targets_by_title_ignore_year_and_case():
    d = make_dialogue([("A", "x", ["REC-S"], [("99", "the matrix (1999)")])], targets=["The Matrix"])
    assert M.recall_at_k(d, M.targets_of(d), 5) == 1.0
    assert M.targets_of(make_dialogue([("A", "x", ["OTH"])])) is None
    with pytest.raises(ValueError):
        M.recall_at_k(d, [], 5)
