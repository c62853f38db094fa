"""LLM access: one client, several providers (the `ARENA_LLM_*` and `OPENAI_*` variables of
docs/settings.md)."""

from arena.llm.client import (
    LLMClient,
    LLMError,
    LLMRequest,
    LLMResponse,
    LLMStats,
    Message,
    RetryPolicy,
    TransientLLMError,
    build_client,
)
from arena.llm.providers import FakeProvider, LocalProvider, OpenAIProvider, make_provider

__all__ = [
    "FakeProvider",
    "LLMClient",
    "LLMError",
    "LLMRequest",
    "LLMResponse",
    "LLMStats",
    "LocalProvider",
    "Message",
    "OpenAIProvider",
    "RetryPolicy",
    "TransientLLMError",
    "build_client",
    "make_provider",
]
