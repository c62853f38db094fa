"""`crs-arena prepare`: the one-time work of a first start, done at set-up (the README's set-up runs it).

Today that is the local model's conversion for CTranslate2 (`arena.llm.local_conversion`): about 30 s on
a quiet machine, minutes on a busy one. Without it the first process that needs the model converts it in
a child process while the app serves; with it, the very first start loads a ready copy. Running it again
finds the copy and returns at once.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any, Optional, Sequence

from arena.runtime.config import Settings, reports_bad_settings
from arena.llm.local import resolve_backend, smollm_path
from arena.llm.local_conversion import converted_copy, converted_ctranslate2
from arena.llm.types import LLMError


def _parser() -> argparse.ArgumentParser:
    return argparse.ArgumentParser(
        prog="crs-arena prepare",
        description="Do the one-time work of a first start now: convert the local model "
                    "(SmolLM2-135M-Instruct) for CTranslate2. Safe to run again.")


def prepare_local_model(settings: Settings, say=lambda line: print(line, file=sys.stderr)) -> str:
    """Convert the local model if its engine needs it (`say` announces a conversion before it starts);
    one line saying what was done."""
    backend = resolve_backend(settings.llm_local_backend)
    if backend != "ctranslate2":
        return f"local model: the {backend} engine reads the model file as it is; nothing to convert"
    models_dir = settings.models_dir or settings.cache_dir / "models"
    path = smollm_path(models_dir)
    found = converted_copy(path, models_dir)
    if found is not None:
        return f"local model: already converted for CTranslate2 ({found})"
    say("local model: converting it once for CTranslate2 (about 30 s on a quiet machine)...")
    started = time.monotonic()
    folder = converted_ctranslate2(path, models_dir)
    return f"local model: converted for CTranslate2 in {time.monotonic() - started:.1f} s ({folder})"


def load_before_replies(provider: Any, say=lambda line: print(line, file=sys.stderr)) -> None:
    """For a command line about to reply (`crs-arena reply`, `serve-crs`): the local model converted and
    loaded first, with a line when that means converting, so no reply waits for it unannounced."""
    if getattr(provider, "backend", None) != "ctranslate2" or not hasattr(provider, "load"):
        return
    if converted_copy(provider.path, provider.models_dir) is None:
        say("local model: converting it once for CTranslate2 before the first reply (about 30 s on a quiet "
            "machine; `crs-arena prepare` does it at set-up)...")
    provider.load()


@reports_bad_settings
def main(argv: Optional[Sequence[str]] = None) -> int:
    _parser().parse_args(argv)
    settings = Settings.from_env()
    try:
        print(prepare_local_model(settings))
    except (LLMError, OSError, ValueError, RuntimeError) as exc:
        why = " ".join(str(exc).split())[:400]
        print(f"error: could not prepare the local model: {why}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
