"""The local model's one-time conversion to CTranslate2: at set-up or in a child process, never in a reply.

CTranslate2 runs its own int8 format, made once from the GGUF file (about 30 s on a quiet machine; 254 to
1,367 s were seen on a busy one). Made inside a reply, that first reply waited for it; made inside the
server's warm-up, it shared the interpreter with the first page, which then took minutes. So:

- `crs-arena prepare` (the README's set-up command runs it) converts in the foreground;
- otherwise the first process that needs the model starts `python -m arena.llm.local_conversion` in a
  child process at low priority (`start_conversion`) and goes on: a reply asked meanwhile gets
  `LocalModelWarming` (one line, nothing waits), and the server's warm-up waits for the child in its
  background thread (`wait_for_conversion`) before it loads the engine;
- a participant's turn asks `provider_converting` before it is sent, with or without the warm-up
  (`webapp.sessions.warming`): while the copy is being made the turn is not sent and nothing is stored.

Two processes converting at once (replicas, or a child and `crs-arena prepare`) take a lock file beside
the copy, so the second finds the first's copy instead of converting again.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Optional

from arena.runtime.config import offline_model_environment
from arena.runtime.imports import heavy_imports
from arena.llm.types import LLMError

PREPARE_HINT = "`crs-arena prepare` does it at set-up"
WARMING_LINE = ("The local model is warming up: its one-time conversion for CTranslate2 is running in the "
                f"background (about 30 s on a quiet machine; {PREPARE_HINT}). Please try again shortly.")


class LocalModelWarming(LLMError):
    """The local model's conversion is still running in the background: try again shortly."""


def load_gguf(path: Path) -> tuple[Any, Any]:
    """The GGUF file de-quantised by transformers: (model, tokenizer)."""
    with heavy_imports():
        from transformers import AutoModelForCausalLM, AutoTokenizer
        from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # the GGUF de-quantisation bar is noise in logs
    tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    return AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name), tokenizer


def load_gguf_as_float(path: Path) -> tuple[Any, Any]:
    """The GGUF file as a plain (float32) transformers model and its tokenizer."""
    with heavy_imports():
        from transformers import AutoModelForCausalLM

    loaded, tokenizer = load_gguf(path)
    # A model loaded from GGUF refuses to be saved; the same weights in a model built from its config do not.
    config = loaded.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    model = AutoModelForCausalLM.from_config(config)
    model.load_state_dict(loaded.state_dict())
    return model, tokenizer


def _places(path: Path, models_dir: Optional[Path]) -> list[Path]:
    from arena.runtime.config import default_cache_dir

    name = f"{path.stem}-ct2-int8"
    places = [path.parent / name] if os.access(path.parent, os.W_OK) else []
    places.append((models_dir or default_cache_dir() / "models") / "local" / name)
    return places


def converted_copy(path: Path, models_dir: Optional[Path] = None) -> Optional[Path]:
    """The CTranslate2 copy of the GGUF file if it has been made, else None (cheap: reads no model)."""
    return next((place for place in _places(path, models_dir) if (place / "model.bin").exists()), None)


def converted_ctranslate2(path: Path, models_dir: Optional[Path] = None) -> Path:
    """The CTranslate2 (int8) copy of the GGUF file, made now if it is not there yet, and kept.

    Kept beside the GGUF file when its folder is writable (like Python's byte-code caches: one copy per
    installed file, whatever cache folder a process is given), else in `<models_dir>/local/`. Made in a
    temporary folder and renamed into place, so a process that dies half-way never leaves a half-written
    model that another would load; a lock file keeps two processes from converting at once."""
    found = converted_copy(path, models_dir)
    if found is not None:
        return found
    target = _places(path, models_dir)[0]
    target.parent.mkdir(parents=True, exist_ok=True)
    # The lock file lives in the temporary folder, not beside the copy: nothing is left in the install.
    digest = hashlib.sha256(str(target.resolve()).encode()).hexdigest()[:16]
    with open(Path(tempfile.gettempdir()) / f"arena-ct2-{digest}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, or when the process dies
        found = converted_copy(path, models_dir)  # made by whoever held the lock before us
        if found is not None:
            return found
        with heavy_imports():
            import ctranslate2.converters

        work = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
        try:
            model, tokenizer = load_gguf_as_float(path)
            model.save_pretrained(work / "float")
            tokenizer.save_pretrained(work / "float")
            del model
            ctranslate2.converters.TransformersConverter(str(work / "float")).convert(
                str(work / "ct2"), quantization="int8")
            tokenizer.save_pretrained(work / "ct2")  # the engine tokenises with the model's own tokenizer
            os.rename(work / "ct2", target)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return target


class _Conversion:
    """One child process converting one model file; `done` is set once it has exited."""

    def __init__(self, path: Path, models_dir: Optional[Path]):
        self.path, self.models_dir = path, models_dir
        self.log = tempfile.TemporaryFile(mode="w+")
        command = [sys.executable, "-m", "arena.llm.local_conversion", str(path)]
        if models_dir is not None:
            command.append(str(models_dir))
        offline_model_environment()  # the child inherits it: the conversion reads local files only
        self.process = subprocess.Popen(command, stdout=self.log, stderr=subprocess.STDOUT)
        self.started = time.monotonic()
        self.done = threading.Event()
        self.error = ""
        threading.Thread(target=self._wait, name="local-model-conversion", daemon=True).start()

    def _wait(self) -> None:
        code = self.process.wait()
        if code != 0 and converted_copy(self.path, self.models_dir) is None:
            self.log.seek(0)
            lines = [line for line in self.log.read().splitlines() if line.strip()]
            last = " ".join(lines[-1].split())[:300] if lines else "no output"  # the exception's own line
            self.error = f"the local model's conversion failed (exit {code}): {last}"
        self.log.close()
        self.done.set()


_CONVERSIONS: dict[str, _Conversion] = {}
_CONVERSIONS_LOCK = threading.Lock()


def start_conversion(path: Path, models_dir: Optional[Path] = None, *,
                     retry_failed: bool = False) -> Optional[_Conversion]:
    """The child process converting `path`, started if none has been in this process (or, with
    `retry_failed`, if the last one failed); None when the copy is already there."""
    if converted_copy(path, models_dir) is not None:
        return None
    with _CONVERSIONS_LOCK:
        running = _CONVERSIONS.get(str(path))
        if running is None or (retry_failed and running.done.is_set() and running.error):
            running = _CONVERSIONS[str(path)] = _Conversion(path, models_dir)
        return running


def conversion_problem(path: Path, models_dir: Optional[Path] = None) -> Optional[str]:
    """Why the engine cannot load now without converting: the warming-up line while the child runs (it is
    started if need be), the child's error if it failed, None once the copy is there."""
    conversion = start_conversion(path, models_dir)
    if conversion is None or converted_copy(path, models_dir) is not None:
        return None
    if not conversion.done.is_set():
        return WARMING_LINE
    return conversion.error or "the local model's conversion ended without a copy"


def still_converting(path: Path, models_dir: Optional[Path] = None) -> bool:
    """Whether the copy of `path` is still being made (the child is started if it has not been): a turn that
    needs the model is then told so at once, before it is sent, whether or not the server warms up."""
    return conversion_problem(path, models_dir) == WARMING_LINE


def provider_converting(provider: Any) -> bool:
    """Whether `provider` is the local model on CTranslate2 with its copy still being made (False for any
    other provider, and when the model file cannot be found: the reply then says why)."""
    if getattr(provider, "backend", None) != "ctranslate2" or not hasattr(provider, "models_dir"):
        return False
    try:
        path = provider.path
    except Exception:  # noqa: BLE001 - a missing model file is the reply's to report, with its reason
        return False
    return still_converting(path, provider.models_dir)


def warming_error(error: Optional[str]) -> bool:
    """Whether a failed turn's recorded `error` is `LocalModelWarming` (the copy was still being made when
    the system asked the model: a turn sent as the conversion began)."""
    if not error:
        return False
    return f"{LocalModelWarming.__name__}:" in error or WARMING_LINE in error


def wait_for_conversion(path: Path, models_dir: Optional[Path] = None,
                        timeout_s: Optional[float] = None) -> None:
    """Wait until the copy is there (starting the child if need be, again if the last one failed);
    LLMError if the conversion failed or took longer than `timeout_s`."""
    conversion = start_conversion(path, models_dir, retry_failed=True)
    if conversion is None:
        return
    if not conversion.done.wait(timeout_s):
        raise LLMError(f"the local model's conversion is still running after {timeout_s:g} s")
    if converted_copy(path, models_dir) is None:
        raise LLMError(conversion.error or "the local model's conversion ended without a copy")


def main(argv: Optional[list[str]] = None) -> int:
    """The child: `python -m arena.llm.local_conversion GGUF_FILE [MODELS_DIR]`, at low priority, so that it
    takes the CPU the pages and replies leave (set here, not by the parent: a hook run between fork and
    exec is unsafe in a process with threads)."""
    os.nice(10)
    args = list(sys.argv[1:] if argv is None else argv)
    path, models_dir = Path(args[0]), (Path(args[1]) if len(args) > 1 else None)
    print(converted_ctranslate2(path, models_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
