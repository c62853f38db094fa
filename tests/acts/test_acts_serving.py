"""The act model served by ONNX Runtime gives PyTorch's outputs, and settings choose the runtime."""

import numpy as np
import pytest

from arena.runtime.config import Settings
from arena.dialogue import Role
from evaluators.acts.data import ARENA_TEST10, load_arena_style
from evaluators.acts.features import dialogue_pairs
from evaluators.acts.offline import DEFAULT_ARTIFACT, ActModel, OfflineActAnnotator, decide, shared_model
from evaluators.scoring import default_annotator


@pytest.fixture(scope="module")
def served():
    return shared_model(DEFAULT_ARTIFACT, "onnxruntime", 1)


def test_onnx_runtime_matches_pytorch(served):
    as_torch = ActModel(served.network, served.tokenizer, served.meta, runtime="torch")
    roles, pairs = [], []
    for row in load_arena_style(ARENA_TEST10)[:40]:
        views, texts = dialogue_pairs(row.dialogue)
        roles += [v.role for v in views]
        pairs += texts
    # a long pair, truncated to the network's 128 tokens, and one batch of mixed lengths
    pairs.append(("recommendation pending | system: " + "a very long offer " * 60, "user: sure " * 40))
    roles.append(Role.USER)
    onnx_out, torch_out = served.probabilities(pairs), as_torch.probabilities(pairs)
    assert onnx_out.shape == torch_out.shape == (len(pairs), served.threshold.shape[0])
    assert np.abs(onnx_out - torch_out).max() < 1e-4
    assert decide(roles, onnx_out, served.threshold) == decide(roles, torch_out, served.threshold)
    # one at a time (how a new utterance is read) gives the batch's outputs
    assert np.abs(served.probabilities(pairs[:1]) - onnx_out[:1]).max() < 1e-5


def test_runtime_from_settings(monkeypatch):
    monkeypatch.setenv("ARENA_ACTS_RUNTIME", "Torch")
    monkeypatch.setenv("ARENA_ACTS_THREADS", "2")
    annotator = OfflineActAnnotator(use_catalog=False)
    assert (annotator._runtime, annotator._threads) == ("torch", 2)
    chosen = default_annotator(Settings.from_env({"ARENA_ACTS_THREADS": "0"}))
    assert (chosen._runtime, chosen._threads) == ("onnxruntime", None)
    with pytest.raises(ValueError, match="unknown act model runtime"):
        ActModel(None, None, {"thresholds": {}}, runtime="tensorflow")
