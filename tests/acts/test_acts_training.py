"""Weak labels from ReDial's questionnaires, the training pipeline and the artifact's loading rules."""

import json
import shutil

import numpy as np
import pytest

from arena.dialogue import Role
from evaluators.acts.offline import DEFAULT_ARTIFACT, ActModel, ArtifactError
from tests.acts.acts_helpers import make_dialogue
from evaluators.acts.redial_weak import redial_part, weak_labels
from evaluators.acts.training import choose_threshold

RECORD = {
    "conversationId": "1",
    "respondentWorkerId": 7,
    "initiatorWorkerId": 8,
    "movieMentions": {"11": "Heat (1995)", "12": "Ronin  (1998)", "13": "Alien (1979)", "14": "Up (2009)"},
    "initiatorQuestions": {
        "11": {"suggested": 1, "seen": 0, "liked": 1},
        "12": {"suggested": 1, "seen": 1, "liked": 0},
        "13": {"suggested": 0, "seen": 1, "liked": 1},
        "14": {"suggested": 1, "seen": 2, "liked": 2},
    },
    "respondentQuestions": {"14": {"suggested": 1, "seen": 1, "liked": 1}},
    "messages": [
        {"senderWorkerId": 7, "text": "hi what do you like?"},
        {"senderWorkerId": 8, "text": "I loved @13"},
        {"senderWorkerId": 8, "text": "something like that"},
        {"senderWorkerId": 7, "text": "try @11"},
        {"senderWorkerId": 8, "text": "oh I'll watch it"},
        {"senderWorkerId": 7, "text": "or @12"},
        {"senderWorkerId": 8, "text": "saw it, hated it"},
        {"senderWorkerId": 7, "text": "@11 is really good"},
        {"senderWorkerId": 8, "text": "ok"},
        {"senderWorkerId": 7, "text": "and @14"},
        {"senderWorkerId": 8, "text": "cool"},
    ],
}


def test_weak_labels_follow_the_seekers_answers():
    w = weak_labels(RECORD)
    texts = [u.text for u in w.dialogue.utterances]
    assert texts[1] == "I loved Alien (1979)...something like that"  # one turn, as IARD joins them
    assert [u.role for u in w.dialogue.utterances][:3] == [Role.AGENT, Role.USER, Role.AGENT]
    assert texts[4] == "or Ronin (1998)"
    assert w.labels == [
        {"REC": False},  # no movie
        {"ACC": False, "REJ": False},  # the seeker's own movie, nothing suggested yet
        {"REC": True},  # first suggestion of Heat
        {"ACC": True, "REJ": False},  # Heat: not seen, liked
        {"REC": True},
        {"ACC": False, "REJ": True},  # Ronin: disliked
        {"REC": None},  # Heat again: not a new suggestion, not known either way
        {"ACC": False, "REJ": False},
        {"REC": True},
        # Up: the seeker did not say; the recommender's answer (seen, liked) stands in: the guide's SEE
        {"ACC": False, "REJ": False},
    ]


def test_redial_split_is_fixed():
    assert redial_part("15266") in ("train", "val", "test")
    parts = [redial_part(str(i)) for i in range(2000)]
    assert 0.17 < parts.count("test") / 2000 < 0.23 and 0.07 < parts.count("val") / 2000 < 0.13


def test_thresholds_reach_the_precision_target_when_they_can():
    y = np.array([True] * 20 + [False] * 20)
    s = np.concatenate([np.linspace(0.5, 0.99, 20), np.linspace(0.01, 0.6, 20)])
    t = choose_threshold(y, s, decided=True)
    hit = s >= t
    assert (hit & y).sum() / hit.sum() >= 0.95
    assert choose_threshold(y, s, decided=False) <= t  # best F1 alone accepts more errors


def test_a_tampered_artifact_refuses_to_load(tmp_path):
    shutil.copy(DEFAULT_ARTIFACT, tmp_path / "a.safetensors")
    meta = json.loads(DEFAULT_ARTIFACT.with_suffix(".json").read_text())
    (tmp_path / "a.json").write_text(json.dumps({**meta, "weights_sha256": "0" * 64}))
    with pytest.raises(ArtifactError, match="checksum"):
        ActModel.load(tmp_path / "a.safetensors")


@pytest.mark.slow
def test_training_twice_gives_the_same_bytes(tmp_path):
    """The training script's stages on a small subset: the same seed gives byte-identical weights,
    another seed other weights, and the calibrated artifact loads and annotates."""
    from evaluators.acts.data import iard_path
    from evaluators.acts.offline import OfflineActAnnotator
    from scripts.train_act_classifier import main

    redial = tmp_path / "redial.jsonl"
    redial.write_text("\n".join(json.dumps({**RECORD, "conversationId": str(k)}) for k in range(6)) + "\n")
    bundle = tmp_path / "bundle"
    assert main(["prepare", "--bundle", str(bundle), "--max-dialogues", "3", "--iard", str(iard_path()),
                 "--redial", str(redial)]) == 0
    tiny = ["--set", "layers=2", "--set", "top_layers=1", "--set", "epochs=1", "--set", "length_pool=2"]
    for name, seed in (("one", "0"), ("two", "0"), ("three", "1")):
        assert main(["fit", "--bundle", str(bundle), "--weights", str(tmp_path / f"{name}.safetensors"),
                     "--seed", seed, *tiny]) == 0
    one = (tmp_path / "one.safetensors").read_bytes()
    assert one == (tmp_path / "two.safetensors").read_bytes()
    assert one != (tmp_path / "three.safetensors").read_bytes()
    out = tmp_path / "model" / "act_model.safetensors"
    assert main(["calibrate", "--bundle", str(bundle), "--weights", str(tmp_path / "one.safetensors"),
                 "--out", str(out), "--version", "test"]) == 0
    model = ActModel.load(out)
    assert model.meta["data"]["max_dialogues"] == 3 and model.meta["fit"]["seed"] == 0
    assert model.meta["fit"]["hyperparameters"]["top_layers"] == 1
    assert model.meta["layers"] == 2 and model.network.config.num_hidden_layers == 2  # the base's lowest two
    rows = OfflineActAnnotator(out, use_catalog=False).annotate_intents(make_dialogue([("U", "hi", None)]))
    assert len(rows) == 1 and rows[0][0]


def test_length_pooled_batches_cover_every_row_once():
    import torch

    from evaluators.acts.fine_tuning import epoch_batches

    lengths = [int(x) for x in np.random.default_rng(0).integers(5, 120, size=1000)]
    for pool in (0, 4):
        batches = epoch_batches(lengths, 32, pool, torch.Generator().manual_seed(0))
        assert sorted(i for b in batches for i in b) == list(range(1000))
        assert len(batches) == (1000 + 31) // 32
    pooled = epoch_batches(lengths, 32, 4, torch.Generator().manual_seed(0))
    assert pooled == epoch_batches(lengths, 32, 4, torch.Generator().manual_seed(0))  # seeded
    spread = np.mean([max(lengths[i] for i in b) - min(lengths[i] for i in b) for b in pooled])
    plain = epoch_batches(lengths, 32, 0, torch.Generator().manual_seed(0))
    assert spread < 0.5 * np.mean([max(lengths[i] for i in b) - min(lengths[i] for i in b) for b in plain])
