"""What the LLM client and its providers share: requests, responses, errors and the provider protocol."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Protocol

Message = dict[str, str]  # {"role": "system"|"user"|"assistant", "content": str}


class LLMError(RuntimeError):
    """An LLM call failed for good (after retries, or not retryable)."""


class TransientLLMError(LLMError):
    """A failure worth retrying: rate limit, server error, timeout, broken body."""

    def __init__(self, message: str, retry_after: Optional[float] = None):
        super().__init__(message)
        self.retry_after = retry_after


@dataclass(frozen=True)
class LLMRequest:
    messages: tuple[tuple[str, str], ...]
    model: str
    temperature: float = 0.0
    max_tokens: int = 512
    stop: tuple[str, ...] = ()
    seed: Optional[int] = None
    json_mode: bool = False

    def message_dicts(self) -> list[Message]:
        return [{"role": r, "content": c} for r, c in self.messages]

    def cache_key_parts(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "messages": [list(m) for m in self.messages],
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "stop": list(self.stop),
            "seed": self.seed,
            "json_mode": self.json_mode,
        }


@dataclass
class LLMResponse:
    text: str
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached: bool = False
    latency_s: float = 0.0

    def to_cache(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "model": self.model,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
        }

    @classmethod
    def from_cache(cls, data: dict[str, Any]) -> "LLMResponse":
        return cls(
            text=data["text"],
            model=str(data.get("model") or ""),
            prompt_tokens=int(data.get("prompt_tokens") or 0),
            completion_tokens=int(data.get("completion_tokens") or 0),
            cached=True,
        )


class Provider(Protocol):
    name: str
    default_model: str
    # Optional `cache_namespace: str`: what besides the model tells this provider's
    # answers apart in the cache (e.g. the endpoint); defaults to `name`.

    def complete(self, request: LLMRequest, timeout_s: float) -> LLMResponse:
        """One attempt. Raise TransientLLMError for retryable failures."""
