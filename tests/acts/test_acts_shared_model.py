"""The offline annotator's sentence encoder and catalog retrieval use one embedding model per process."""

import numpy as np

import arena.retrieval as retrieval
from evaluators.acts.embedding import DIM, SentenceEncoder


class CountingModel:
    def __init__(self):
        self.calls = 0

    def encode(self, texts, **_):
        self.calls += 1
        return np.ones((len(texts), DIM), dtype=np.float32) / np.sqrt(DIM)


def test_the_encoder_uses_the_process_wide_model(monkeypatch):
    model = CountingModel()
    monkeypatch.setattr(retrieval, "_MODEL", model)
    encoder = SentenceEncoder()
    vectors = encoder.encode(["I loved it", "", "I loved it"])
    assert model.calls == 1  # the same text is encoded once
    assert vectors.shape == (3, DIM) and not vectors[1].any()
    assert retrieval.embedding_model() is model
