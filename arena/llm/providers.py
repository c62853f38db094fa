"""LLM providers: `openai` (any OpenAI-compatible endpoint), `local`, `fake`.

A provider makes exactly one attempt per call; retries, caching, concurrency
and accounting belong to `LLMClient`.
"""

from __future__ import annotations

import email.utils
import threading
import time
from typing import Any, Callable, Iterable, Optional, Sequence, Union

from arena.runtime.config import Settings
from arena.llm.types import LLMError, LLMRequest, LLMResponse, Provider, TransientLLMError
from arena.llm.local import LOCAL_BACKENDS, LocalProvider, smollm_path  # noqa: F401 (re-exported)
from arena.llm.redaction import redact_text, redact_url

# Statuses worth another try: request timeout, conflict/lock, rate limit, server side.
RETRYABLE_STATUS = frozenset({408, 409, 429})


class OpenAIProvider:
    """Chat completions over the `openai` package against any compatible server.

    The key comes from `api_key` (settings: OPENAI_API_KEY) and stays inside the SDK
    client. Messages built from server answers are scrubbed of it, and errors
    are raised without chaining the SDK exception (whose text may quote the
    server), so it cannot reach logs or tracebacks through us.
    """

    name = "openai"

    def __init__(self, base_url: Optional[str] = None, default_model: str = "gpt-4o-mini",
                 *, api_key: Optional[str] = None):
        import openai  # imported here so that offline use never needs it loaded

        self._openai = openai
        self.default_model = default_model
        base_url = base_url or None
        if not api_key:
            if not base_url:
                raise LLMError(
                    "the openai provider needs OPENAI_API_KEY (or OPENAI_BASE_URL for a local server)"
                )
            api_key = "not-needed"  # local servers (vLLM, Ollama, llama.cpp) accept any key
        self._secrets = tuple(s for s in {api_key, api_key.strip()} if len(s) >= 6 and s != "not-needed")
        self._client = openai.OpenAI(base_url=base_url, api_key=api_key, max_retries=0)
        raw_url = str(self._client.base_url).rstrip("/")
        # What may be shown or logged: no user:password@ and no key in the query.
        self.base_url = redact_url(raw_url)
        # Same model name on two servers may be two different models.
        self.cache_namespace = f"openai@{raw_url}"

    def __repr__(self) -> str:
        return f"OpenAIProvider(base_url={self.base_url!r}, default_model={self.default_model!r})"

    def _clean(self, text: Any, limit: int = 300) -> str:
        text = " ".join(str(text).split())
        for secret in self._secrets:
            text = text.replace(secret, "[redacted]")
        text = redact_text(text)
        return text if len(text) <= limit else text[: limit - 3] + "..."

    def complete(self, request: LLMRequest, timeout_s: float) -> LLMResponse:
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
        completion = self._call(kwargs, timeout_s)
        text = self._extract_text(completion)
        usage = getattr(completion, "usage", None)
        return LLMResponse(
            text=text,
            model=getattr(completion, "model", None) or request.model,
            prompt_tokens=_int(getattr(usage, "prompt_tokens", 0)),
            completion_tokens=_int(getattr(usage, "completion_tokens", 0)),
        )

    def _call(self, kwargs: dict[str, Any], timeout_s: float) -> Any:
        openai = self._openai
        error: Optional[LLMError] = None
        try:
            return self._client.chat.completions.create(**kwargs)
        except openai.APITimeoutError:
            error = TransientLLMError(f"timed out after {timeout_s:g} s")
        except openai.APIStatusError as exc:
            detail = self._clean(_error_message(exc))
            status = exc.status_code
            if status in RETRYABLE_STATUS or status >= 500:
                error = TransientLLMError(f"HTTP {status} from the endpoint: {detail}", _retry_after(exc))
            else:
                error = LLMError(f"request rejected (HTTP {status}): {detail}")
        except openai.APIConnectionError as exc:
            error = TransientLLMError(f"cannot reach the endpoint: {self._clean(exc)}")
        except (openai.APIResponseValidationError, ValueError, TypeError, AttributeError) as exc:
            # A body the SDK cannot decode (not JSON, wrong shape).
            detail = f"{type(exc).__name__}: {self._clean(exc, 120)}"
            error = TransientLLMError(f"malformed response body: {detail}")
        except openai.OpenAIError as exc:
            error = LLMError(f"openai client error: {self._clean(exc)}")
        raise error

    def _extract_text(self, completion: Any) -> str:
        if isinstance(completion, (str, bytes)):
            raise TransientLLMError(f"malformed response body (not JSON): {self._clean(completion, 120)!r}")
        try:
            message = completion.choices[0].message
        except (AttributeError, IndexError, KeyError, TypeError):
            raise TransientLLMError("malformed response body: no choices[0].message") from None
        content = getattr(message, "content", None)
        if isinstance(content, str):
            return content
        refusal = getattr(message, "refusal", None)
        if refusal:
            raise LLMError(f"the model refused: {self._clean(refusal)}")
        raise TransientLLMError("malformed response body: message content is not text")


def _int(value: Any) -> int:
    try:
        return max(0, int(value or 0))
    except (TypeError, ValueError):
        return 0


def _error_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
    return str(getattr(exc, "message", "") or exc)


def _retry_after(exc: Any) -> Optional[float]:
    """Seconds the server asked us to wait (`retry-after-ms`, `retry-after` in seconds or as a date)."""
    headers = getattr(getattr(exc, "response", None), "headers", None)
    if headers is None:
        return None
    try:
        if headers.get("retry-after-ms") is not None:
            return float(headers["retry-after-ms"]) / 1000.0
        value = headers.get("retry-after")
        if value is None:
            return None
        try:
            return float(value)
        except ValueError:
            when = email.utils.parsedate_to_datetime(value)
            return max(0.0, when.timestamp() - time.time())
    except (TypeError, ValueError, OverflowError):
        return None


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
        self.cache_namespace = "fake"
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
            if self._responder is None and self._queue:
                item: Script = self._queue.pop(0)
            elif self._responder is None and self._default is not None:
                item = self._default
            elif self._responder is None:
                raise LLMError("fake provider: script exhausted")
        if self._responder is not None:  # outside the lock: a responder may block or sleep
            item = self._responder(request)
        if isinstance(item, Exception):
            raise item
        prompt_chars = sum(len(c) for _, c in request.messages)
        return LLMResponse(
            text=item,
            model=request.model,
            prompt_tokens=max(1, prompt_chars // 4),
            completion_tokens=max(1, len(item) // 4),
        )


def make_provider(settings: Settings) -> Provider:
    if settings.llm_provider == "openai":
        key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else None
        return OpenAIProvider(settings.llm_base_url, default_model=settings.llm_model_name, api_key=key)
    if settings.llm_provider == "local":
        return LocalProvider(backend=settings.llm_local_backend, n_threads=settings.llm_threads,
                             models_dir=settings.models_dir or settings.cache_dir / "models")
    if settings.llm_provider == "fake":
        return FakeProvider(default=settings.fake_reply)
    raise LLMError(f"unknown LLM provider {settings.llm_provider!r}")


__all__ = [
    "FakeProvider",
    "LocalProvider",
    "OpenAIProvider",
    "RETRYABLE_STATUS",
    "make_provider",
    "smollm_path",
]
