"""Reject decided in context and decisions chosen for F1 (context_decision.py, f1_calibration.py)."""

import json

import numpy as np
import pytest

from arena.dialogue import Dialogue, DialogueAct, Role
from arena.titles.linking import Mention
from evaluators.acts import f1_calibration as F
from evaluators.acts.context_decision import (
    ABSENT, ACC, ACCEPT_WORD_FEATURES, CRI_F, FEATURES, REJ, REJECT_FEATURES, ContextDecision, feature_matrix,
    utterance_facts,
)
from evaluators.acts.features import UtteranceView
from evaluators.acts.metric_calibration import Scored
from evaluators.acts.network import LABELS

U, A = Role.USER, Role.AGENT


def _view(role, title=None, text="text"):
    d = Dialogue(crs_id="t")
    (d.add_user if role == U else d.add_agent)(text)
    mentions = [Mention(title=title, start=0, end=4, source="year")] if title else []
    return UtteranceView(utterance=d.utterances[0], mentions=mentions, masked=text)


def test_facts_say_whether_the_user_names_a_title_the_system_offered_and_takes_something():
    views = [_view(U, "Heat"), _view(A, "Ronin", "I'll watch it"), _view(U, "Ronin", "I'll try it out!"),
             _view(U, "Alien", "Not Alien, I'll pass"), _view(A), _view(U, text="perfect!")]
    facts = utterance_facts(views)
    # Heat: a title, not offered (the user's own); Ronin: offered before, taken by the words; Alien: named,
    # never offered, turned down; "perfect!" takes what was shown; a system turn's words count for nothing.
    assert facts.tolist() == [[1, 0, 0], [0, 0, 0], [1, 1, 1], [1, 0, 0], [0, 0, 0], [0, 0, 1]]


def test_accept_with_the_words_reads_the_offered_title_and_the_take():
    roles = [U, A, U]
    p = np.full((3, len(LABELS)), 0.05)
    facts = np.array([[0, 0, 0], [0, 0, 0], [1, 1, 1]], dtype=float)
    users, rows = feature_matrix(roles, p, facts, ACC, words=True)
    assert users == [0, 2] and rows.shape == (2, len(ACCEPT_WORD_FEATURES))
    row = dict(zip(ACCEPT_WORD_FEATURES, rows[1]))
    assert row["names a title the system offered"] == 1 and row["its words take something"] == 1
    assert np.allclose(rows[:, :len(FEATURES)], feature_matrix(roles, p, facts, ACC)[1])  # the same network inputs
    decision = ContextDecision(np.linspace(-1, 1, len(ACCEPT_WORD_FEATURES)), 0.1, ACC, words=True)
    again = ContextDecision.from_meta(json.loads(json.dumps(decision.to_meta())))
    assert again.words and np.allclose(again.coef, decision.coef, atol=1e-6) and again.needs_facts
    with pytest.raises(ValueError, match="facts"):
        decision.decided(roles, p)


def test_reject_features_add_the_next_turns_and_the_facts():
    roles = [U, A, U, A, U]
    p = np.full((5, len(LABELS)), 0.05)
    p[4, CRI_F] = 0.9
    facts = np.zeros((5, 3))
    facts[2] = (1, 1, 0)
    users, rows = feature_matrix(roles, p, facts, REJ)
    assert users == [0, 2, 4] and rows.shape == (3, len(REJECT_FEATURES))
    row = dict(zip(REJECT_FEATURES, rows[1]))
    assert row["logit CRI-F of the next user utterance"] > 2 and row["names a title the system offered"] == 1
    assert dict(zip(REJECT_FEATURES, rows[2]))["logit CRI-F of the next user utterance"] == ABSENT
    with pytest.raises(ValueError, match="facts"):
        feature_matrix(roles, p, None, REJ)


def test_reject_decision_round_trips_and_replaces_only_user_reject():
    decision = ContextDecision(np.linspace(-1, 1, len(REJECT_FEATURES)), 0.3, REJ)
    again = ContextDecision.from_meta(json.loads(json.dumps(decision.to_meta())), REJ)
    assert again.output == REJ and np.allclose(again.coef, decision.coef, atol=1e-6)
    with pytest.raises(ValueError, match="other features"):
        ContextDecision.from_meta(decision.to_meta(), ACC)  # Reject's inputs are not Accept's
    roles = [U, A, U]
    p = np.full((3, len(LABELS)), 0.05)
    out = decision.decided(roles, p, np.zeros((3, 2)))
    assert {tuple(x) for x in np.argwhere(out != p)} <= {(0, REJ), (2, REJ)}


def _dialogue(k, rejected):
    d = Dialogue(crs_id="t", dialogue_id=f"syn-{k}")
    for i, role in enumerate([U, A, U, A]):
        (d.add_user if role == U else d.add_agent)(f"utterance {i}")
        intent = {0: "OTH", 1: "REC-S", 2: "REJ" if rejected else "CRI-F", 3: "REC-S"}[i]
        d.utterances[-1].dialogue_acts = [DialogueAct(intent=intent, slot_values=[])]
    return d


def _synthetic_part(n, seed):
    """The user turns the recommendation down exactly when it names the offered title; otherwise it
    critiques it. The network's own Reject output is noise: only the fact tells them apart."""
    rng = np.random.default_rng(seed)
    roles = [U, A, U, A]
    out = []
    for k in range(n):
        rejected = bool(rng.random() < 0.5)
        p = np.full((4, len(LABELS)), 0.02)
        p[[1, 3], LABELS.index("AGENT:REC")] = 0.95
        p[2, REJ] = rng.uniform(0.02, 0.98)
        facts = np.zeros((4, 2))
        facts[2] = (1.0, 1.0) if rejected else (rng.integers(0, 2), 0.0)
        out.append(Scored(_dialogue(f"{seed}-{k}", rejected), roles, p, facts))
    return out


def test_the_reject_decision_learns_what_the_thresholds_cannot():
    parts = {F.IARD_VAL: _synthetic_part(60, 0), F.CRSARENA: _synthetic_part(40, 1)}
    base = np.full(len(LABELS), 0.5)
    thresholds_only = F.evaluate(F.Candidate("A", (), ()), parts, base)
    in_context = F.evaluate(F.Candidate("B", (), (F.IARD_VAL,)), parts, base)
    assert F.f1_pair(in_context)[1] > 0.95 and F.f1_pair(in_context)[1] > F.f1_pair(thresholds_only)[1] + 0.2
    assert len(in_context["thresholds"]) == F.FOLDS
    # Accept F1 is 0 in both (no acceptances), so B does not pass a rule that asks both to improve.
    assert not F.passes(in_context, thresholds_only)
    decisions, threshold = F.fit(F.Candidate("B", (), (F.IARD_VAL,)), parts, base)
    assert [d.output for d in decisions] == [REJ]
    assert decisions[0].coef[REJECT_FEATURES.index("names a title the system offered")] > 0
    assert threshold[REJ] in F.GRID and threshold[ACC] in F.GRID


def test_the_rule_asks_both_f1_up_by_003_and_the_objective_within_002():
    def result(acc, rej, objective):
        from evaluators.acts.quality import PRF

        def prf(f1):  # tp, fp, fn giving this F1 with 100 positives
            tp = round(100 * f1 / (2 - f1)) if f1 < 1 else 100
            return PRF(tp=tp, fp=100 - tp, fn=100 - tp)

        return {"objective": objective, "parts": {F.IARD_VAL: {"acts": {"Accept": prf(acc), "Reject": prf(rej)}}}}

    reference = result(0.70, 0.70, 0.90)
    assert F.passes(result(0.76, 0.76, 0.89), reference)
    assert not F.passes(result(0.76, 0.71, 0.95), reference)  # Reject up by too little
    assert not F.passes(result(0.76, 0.76, 0.85), reference)  # the objective falls by more than 0.02


def test_the_model_decides_reject_in_context_only_over_a_whole_dialogue():
    from evaluators.acts.offline import ActModel, decide

    model = ActModel.load(runtime="torch")
    roles = [U, A, U]
    p = np.full((3, len(LABELS)), 0.05)
    p[1, LABELS.index("AGENT:REC")] = 0.9
    facts = np.array([[0, 0], [0, 0], [1, 1]], dtype=float)
    model.reject_context = ContextDecision(np.zeros(len(REJECT_FEATURES)), 5.0, REJ)  # always Reject
    try:
        in_context = model.in_context(roles, p, facts)
        assert in_context[2, REJ] > 0.99 and "REJ" in model.intents(roles, p, facts=facts)[2]
        assert model.intents(roles, p, whole_dialogue=False) == decide(roles, p, model.threshold)
    finally:
        model.reject_context = None


def _result(accept_f1_counts, reject_f1_counts, objective):
    from evaluators.acts.quality import PRF

    acts = {"Accept": PRF(*accept_f1_counts), "Reject": PRF(*reject_f1_counts)}
    return {"parts": {F.IARD_VAL: {"acts": acts}}, "objective": objective}


def test_round_17_reads_the_words_and_asks_accept_to_gain_without_losing_reject():
    assert [c.name.split(":")[0] for c in F.ROUNDS["17"]] == ["L", "L-A"]
    assert all(c.accept_words and not c.keeps_decisions and c.decided_first for c in F.ROUNDS["17"])
    reference_16 = F.REFERENCES["17"]
    assert reference_16.keeps_decisions and reference_16.decided_first and reference_16.mixed is not None
    reference = _result((8, 2, 2), (8, 2, 2), 1.0)  # F1 0.80 / 0.80
    accept_up = _result((9, 1, 1), (8, 2, 2), 1.0)  # Accept 0.90, Reject the same
    reject_down = _result((9, 1, 1), (7, 3, 3), 1.0)  # Reject 0.70: more than 0.01 lost
    assert F.passes(accept_up, reference, "17") and not F.passes(reject_down, reference, "17")
    assert not F.passes(accept_up, reference, "16")  # round 16 wanted both up by 0.03
    assert not F.passes(_result((9, 1, 1), (8, 2, 2), 0.97), reference, "17")  # the objective fell 0.03
