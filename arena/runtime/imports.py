"""One lock for every import of a heavy library done after start-up (`heavy_imports`).

The heavy libraries (transformers, torch, sentence-transformers, CTranslate2, ONNX Runtime, ...) are
imported on first use, so a command or page that does not need them starts fast. First use is often in a
worker thread: a simulated run's dialogues, the warm-up, the scorer, a page's handler. Two threads
importing transformers at once is not safe: while one is still inside transformers' own `__init__`, the
other can be handed the half-built package and fails with `cannot import name 'BertConfig' from
'transformers'` (seen in the README's first simulated run, where CRB-CRS's retrieval model and the offline
act model load in two dialogue threads at the same moment).

So every such import in the project is written inside `with heavy_imports():`, which holds one
process-wide re-entrant lock; tests/architecture/test_heavy_imports.py finds any that is not. Only the
import statements are held, not the loading of model weights that follows them, so a thread that merely
imports an already loaded module waits at most for another thread's first import.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Iterator

# Re-entrant: an import under the lock may run a module whose own first-use imports take it again.
_IMPORT_LOCK = threading.RLock()

# The third-party packages counted as heavy: slow to import and unsafe to import from two threads at once
# (the architecture test reads this tuple).
HEAVY_PACKAGES = (
    "accelerate", "ctranslate2", "datasets", "huggingface_hub", "llama_cpp", "nltk", "onnxruntime",
    "pandas", "peft", "ray", "scipy", "sentence_transformers", "sklearn", "spacy", "tokenizers", "torch",
    "transformers",
)


@contextmanager
def heavy_imports() -> Iterator[None]:
    """Hold the process's import lock for the import statements in the block."""
    with _IMPORT_LOCK:
        yield


__all__ = ["HEAVY_PACKAGES", "heavy_imports"]
