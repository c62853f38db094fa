"""The one place every LLM call goes through.

`LLMClient` adds, on top of a provider: a concurrency limit, retries with
exponential backoff for transient failures (tenacity; the wait the server asks
for in `Retry-After` wins over the backoff), an on-disk response cache keyed
by model + messages + parameters, and call/token accounting. Providers only
know how to turn one request into one `LLMResponse`.

The retries live here rather than in the openai SDK (whose own retries are
off) because every provider goes through them, the local model and the test
fakes included, and because each attempt must first ask whether the work it
serves is still this process's (`check_call_wanted`) and be counted.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from dataclasses import dataclass, replace
from typing import Any, Optional, Sequence

import tenacity

from arena.runtime.config import Settings
from arena.llm.redaction import install_log_redaction
from arena.llm.cache import ResponseCache
from arena.llm.call_guard import check_call_wanted
from arena.llm.providers import make_provider
from arena.llm.types import LLMError, LLMRequest, LLMResponse, Message, Provider, TransientLLMError

log = logging.getLogger("arena.llm")


@dataclass
class LLMStats:
    calls: int = 0  # requests made by callers
    cache_hits: int = 0
    provider_attempts: int = 0  # attempts sent to the provider, retries included
    retries: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    wall_s: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class RetryPolicy:
    max_retries: int = 4
    base_delay_s: float = 0.5
    max_delay_s: float = 16.0
    jitter: float = 0.25

    def delay(self, attempt: int, retry_after: Optional[float]) -> float:
        """Seconds to wait before retry number `attempt + 1`: the server's `Retry-After` when it sent one,
        else exponential backoff with +-`jitter` spread; both capped at `max_delay_s`."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_delay_s)
        delay = min(self.base_delay_s * (2**attempt), self.max_delay_s)
        return delay * (1 + random.uniform(-self.jitter, self.jitter))

    def wait(self, state: tenacity.RetryCallState) -> float:
        """tenacity's wait hook: the delay for the attempt that just failed."""
        failure = state.outcome.exception() if state.outcome is not None else None
        return self.delay(state.attempt_number - 1, getattr(failure, "retry_after", None))


class LLMClient:
    def __init__(
        self,
        provider: Provider,
        *,
        model: Optional[str] = None,
        timeout_s: float = 60.0,
        retry: Optional[RetryPolicy] = None,
        concurrency: int = 8,
        cache: Optional[ResponseCache] = None,
    ):
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.provider = provider
        self.model = model or provider.default_model
        self.timeout_s = timeout_s
        self.retry = retry or RetryPolicy()
        self.cache = cache
        self._slots = threading.BoundedSemaphore(concurrency)
        self._stats = LLMStats()
        self._stats_lock = threading.Lock()
        self.concurrency = concurrency

    @property
    def provider_name(self) -> str:
        return self.provider.name

    def describe(self, model: Optional[str] = None) -> str:
        """`provider:model`, the label recorded next to every LLM-made score."""
        return f"{self.provider.name}:{model or self.model}"

    def stats(self) -> dict[str, Any]:
        with self._stats_lock:
            return replace(self._stats).as_dict()

    def reset_stats(self) -> None:
        with self._stats_lock:
            self._stats = LLMStats()

    def _count(self, **deltas: float) -> None:
        with self._stats_lock:
            for key, value in deltas.items():
                setattr(self._stats, key, getattr(self._stats, key) + value)

    def complete(
        self,
        messages: Sequence[Message],
        *,
        model: Optional[str] = None,
        temperature: float = 0.0,
        max_tokens: int = 512,
        stop: Sequence[str] = (),
        seed: Optional[int] = None,
        json_mode: bool = False,
        use_cache: bool = True,
    ) -> LLMResponse:
        if not messages:
            raise ValueError("messages must not be empty")
        request = LLMRequest(
            messages=tuple((str(m["role"]), str(m.get("content") or "")) for m in messages),
            model=model or self.model,
            temperature=float(temperature),
            max_tokens=int(max_tokens),
            stop=(stop,) if isinstance(stop, str) else tuple(stop),
            seed=seed,
            json_mode=json_mode,
        )
        self._count(calls=1)
        key = None
        if self.cache is not None and use_cache:
            namespace = getattr(self.provider, "cache_namespace", None) or self.provider.name
            key = self.cache.key(namespace, request.cache_key_parts())
            hit = self.cache.get(key)
            if hit is not None:
                self._count(cache_hits=1)
                return LLMResponse.from_cache(hit)
        started = time.monotonic()
        with self._slots:
            response = self._complete_with_retries(request)
        response.latency_s = time.monotonic() - started
        self._count(
            prompt_tokens=response.prompt_tokens,
            completion_tokens=response.completion_tokens,
            wall_s=response.latency_s,
        )
        if key is not None and self.cache is not None:  # a key is made only with a cache
            self.cache.put(key, response.to_cache())
        return response

    def _complete_with_retries(self, request: LLMRequest) -> LLMResponse:
        label = self.describe(request.model)

        def note_retry(state: tenacity.RetryCallState) -> None:
            failure = state.outcome.exception() if state.outcome is not None else None
            wait = state.next_action.sleep if state.next_action is not None else 0.0
            log.info("%s: attempt %d failed (%s); retrying in %.2f s", label, state.attempt_number, failure,
                     wait)
            self._count(retries=1)

        retrying = tenacity.Retrying(
            retry=tenacity.retry_if_exception_type(TransientLLMError),
            stop=tenacity.stop_after_attempt(self.retry.max_retries + 1),
            wait=self.retry.wait,
            before_sleep=note_retry,
        )
        try:
            return retrying(self._attempt, request, label)
        except tenacity.RetryError as exc:
            failure = exc.last_attempt.exception()
            attempts = exc.last_attempt.attempt_number
            self._count(failures=1)
            log.warning("%s: giving up after %d attempts: %s", label, attempts, failure)
            raise LLMError(f"{label} call failed after {attempts} attempts: {failure}") from failure

    def _attempt(self, request: LLMRequest, label: str) -> LLMResponse:
        """One call to the provider; a transient failure propagates for the retry loop to judge."""
        check_call_wanted()  # the work this call is for may have gone to another process meanwhile
        self._count(provider_attempts=1)
        try:
            return self.provider.complete(request, self.timeout_s)
        except TransientLLMError:
            raise
        except LLMError as exc:
            self._count(failures=1)
            log.warning("%s: call failed: %s", label, exc)
            raise
        except Exception as exc:  # a provider bug must still reach callers as an LLMError
            self._count(failures=1)
            log.exception("%s: unexpected provider error", label)
            raise LLMError(f"{label} call failed: {type(exc).__name__}: {exc}") from exc


def build_client(settings: Settings, provider: Optional[Provider] = None) -> LLMClient:
    """The client the settings describe (`provider` overrides, e.g. a fake in tests)."""
    # Whatever command builds a client also logs through it: every record is scrubbed of credentials.
    install_log_redaction()
    if provider is None:
        provider = make_provider(settings)
    cache = ResponseCache(settings.cache_dir / "llm") if settings.llm_cache else None
    # The local provider runs one fixed model whatever ARENA_LLM_MODEL says; label it truthfully.
    model = settings.llm_model or provider.default_model
    if provider.name == "local":
        model = provider.default_model
    return LLMClient(
        provider,
        model=model,
        timeout_s=settings.llm_timeout_s,
        retry=RetryPolicy(max_retries=settings.llm_max_retries),
        concurrency=settings.llm_concurrency,
        cache=cache,
    )


__all__ = [
    "LLMClient",
    "LLMError",
    "LLMRequest",
    "LLMResponse",
    "LLMStats",
    "Message",
    "Provider",
    "RetryPolicy",
    "TransientLLMError",
    "build_client",
]
