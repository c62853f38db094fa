"""Accept decided in context (context_decision.py) and decisions chosen for the metrics (metric_calibration.py)."""

import json

import numpy as np
import pytest

from arena.dialogue import Dialogue, DialogueAct, Role
from evaluators.acts.context_decision import ABSENT, ACC, AGENT_REC, FEATURES, REJ, ContextDecision, feature_matrix, features
from pathlib import Path

from evaluators.acts.data import ASSETS_DIR, CRSARENA_PARTS, crsarena_part, load_crsarena_acts
from evaluators.acts.metric_calibration import Scored, agreement, fit_context_decision, objective
from evaluators.acts.network import LABELS

U, A = Role.USER, Role.AGENT
# The CRS Arena texts stay outside the project (../shared); the label files are in training_data/acts.
CRSARENA_TEXTS = Path(ASSETS_DIR).parent.parent / "shared" / "data" / "crsarena_dial_texts" / "dialogues.json"


def _probs(roles, rec=(), acc=()):
    """Network-like outputs: everything unlikely, REC high on `rec` indices, ACC on `acc` ones."""
    p = np.full((len(roles), len(LABELS)), 0.05)
    for i in rec:
        p[i, AGENT_REC] = 0.95
    for i, value in acc:
        p[i, ACC] = value
    return p


def test_features_read_the_neighbours_and_mark_absent_ones():
    roles = [U, A, U, A, U]
    p = _probs(roles, rec=[1, 3], acc=[(4, 0.9)])
    row = dict(zip(FEATURES, features(roles, p, 2)))
    assert row["logit REC of the system turn before"] > 2 and row["logit REC of the system turn after"] > 2
    assert row["logit REC of the system turn three before"] == ABSENT  # index -1 does not exist
    assert row["last user utterance"] == 0.0 and row["logit ACC of the next user utterance"] > 2
    last = dict(zip(FEATURES, features(roles, p, 4)))
    assert last["last user utterance"] == 1.0 and last["logit ACC of the next user utterance"] == ABSENT
    users, rows = feature_matrix(roles, p)
    assert users == [0, 2, 4] and rows.shape == (3, len(FEATURES))
    assert feature_matrix([A], _probs([A]))[1].shape == (0, len(FEATURES))


def test_context_decision_round_trips_and_replaces_only_user_accept():
    decision = ContextDecision(coef=np.linspace(-1, 1, len(FEATURES)), intercept=0.5)
    again = ContextDecision.from_meta(json.loads(json.dumps(decision.to_meta())))
    np.testing.assert_allclose(again.coef, decision.coef, atol=1e-6)
    roles = [U, A, U]
    p = _probs(roles, rec=[1])
    out = decision.accept_probabilities(roles, p)
    changed = np.argwhere(out != p)
    assert {tuple(x) for x in changed} <= {(0, ACC), (2, ACC)}
    with pytest.raises(ValueError, match="other features"):
        ContextDecision.from_meta({**decision.to_meta(), "features": ["something else"]})


def _dialogue(turns, accepted):
    """turns: roles; `accepted`: indices of user utterances whose reference act is ACC."""
    d = Dialogue(crs_id="t", dialogue_id=f"d{id(turns)}-{sorted(accepted)}")
    for i, role in enumerate(turns):
        (d.add_user if role == U else d.add_agent)(f"utterance {i}")
        if role == A:
            d.utterances[-1].dialogue_acts = [DialogueAct(intent="REC-S" if i == 1 else "REQ", slot_values=[])]
        else:
            d.utterances[-1].dialogue_acts = [DialogueAct(intent="ACC" if i in accepted else "OTH", slot_values=[])]
    return d


def _synthetic_part(n, seed):
    """Dialogues U A U A: the system recommends at 1; the user accepts at 2 exactly when the system's next
    turn does not recommend again. The network's own ACC output is noise: only the context tells."""
    rng = np.random.default_rng(seed)
    roles = [U, A, U, A]
    out = []
    for k in range(n):
        accepted = bool(rng.random() < 0.5)
        p = _probs(roles, rec=[1] + ([] if accepted else [3]), acc=[(2, float(rng.uniform(0.02, 0.98)))])
        p[:, REJ] = 0.01
        d = _dialogue(roles, {2} if accepted else set())
        d.dialogue_id = f"syn{seed}-{k}"
        out.append(Scored(d, roles, p))
    return out


def test_the_context_decision_learns_what_the_utterance_alone_cannot_tell():
    parts = {"a": _synthetic_part(60, 0), "b": _synthetic_part(60, 1)}
    base = np.full(len(LABELS), 0.5)
    result = fit_context_decision(parts, base)
    for name, items in parts.items():
        plain = agreement([s.dialogue for s in items],
                          [_predict(s, s.probs, base) for s in items])
        assert objective(result["validation"][name]) > objective(plain) + 0.3, name
        assert result["validation"][name]["acts"]["Accept"].f1 > 0.9
    decision = result["decision"]
    next_rec = FEATURES.index("logit REC of the system turn after")
    assert decision.coef[next_rec] < 0  # a new recommendation right after means the user did not take one


def _predict(item, probs, threshold):
    from evaluators.acts.metric_calibration import with_predicted_acts

    return with_predicted_acts(item, probs, threshold)


def test_objective_rewards_agreement_and_punishes_the_success_gap():
    roles = [U, A, U, A]
    gold = [_dialogue(roles, {2}), _dialogue(roles, set()), _dialogue(roles, {2}), _dialogue(roles, set())]
    perfect = agreement(gold, gold)
    assert perfect["sr"]["tau"] == pytest.approx(1.0) and objective(perfect) == pytest.approx(2.0)
    never = [_dialogue(roles, set()) for _ in gold]
    assert objective(agreement(gold, never)) == pytest.approx(-0.5)  # no tau (constant), SR gap 0.5


def test_shipped_artifact_decides_accept_in_context():
    from evaluators.acts.offline import ActModel, DEFAULT_ARTIFACT

    meta = json.loads(DEFAULT_ARTIFACT.with_suffix(".json").read_text(encoding="utf-8"))
    assert int(meta["version"]) >= 14 and meta["context_decision"]["features"] == list(FEATURES)
    assert set(meta["context_decision"]["fitted_on"]) == {"iard-val", "crsarena-calibration"}
    model = ActModel.load(runtime="torch")
    roles = [U, A, U]
    p = _probs(roles, rec=[1], acc=[(2, 0.3)])
    from evaluators.acts.offline import decide

    in_context = model.context.accept_probabilities(roles, p)
    assert in_context[2, ACC] != p[2, ACC]
    assert model.intents(roles, p) == decide(roles, in_context, model.threshold)
    assert model.intents(roles, p, whole_dialogue=False) == decide(roles, p, model.threshold)


def test_crsarena_label_files_follow_the_split_and_cover_whole_dialogues():
    for part, path in CRSARENA_PARTS.items():
        by_dialogue: dict[str, list[int]] = {}
        for line in path.read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            cid, index = rec["id"].rsplit(":", 1)
            assert crsarena_part(cid) == part
            assert set(rec) == ({"id", "role", "rec"} if rec["role"] == "AGENT" else {"id", "role", "acc", "rej"})
            by_dialogue.setdefault(cid, []).append(int(index))
        assert all(sorted(ix) == list(range(len(ix))) for ix in by_dialogue.values())
        assert len(by_dialogue) == {"test": 102, "calibration": 140}[part]


@pytest.mark.skipif(not CRSARENA_TEXTS.exists(), reason="needs ../shared/data/crsarena_dial_texts")
def test_crsarena_parts_load_with_their_labels_as_acts():
    calibration = load_crsarena_acts("calibration", CRSARENA_TEXTS)
    assert len(calibration) == 140
    roles = {u.role for d in calibration for u in d.utterances}
    assert roles == {U, A}
    assert all(u.dialogue_acts for d in calibration for u in d.utterances)
