"""LLM access: one client, several providers (see README, "LLM configuration")."""

from arena.llm.client import (
    LLMClient,
    LLMError,
    LLMRequest,
    LLMResponse,
    Message,
    RetryPolicy,
    TransientLLMError,
    build_client,
)
from arena.llm.providers import FakeProvider, LocalProvider, OpenAIProvider

__all__ = [
    "FakeProvider",
    "LLMClient",
    "LLMError",
    "LLMRequest",
    "LLMResponse",
    "LocalProvider",
    "Message",
    "OpenAIProvider",
    "RetryPolicy",
    "TransientLLMError",
    "build_client",
]
