import pytest

from arena.llm import LLMClient, OpenAIProvider, RetryPolicy
from arena.llm.cache import ResponseCache
from tests.support.openai_stub_server import OpenAIStubServer

SECRET_KEY = "sk-test-DO-NOT-LEAK-5f2c9a71e3"


@pytest.fixture
def api_key():
    return SECRET_KEY


@pytest.fixture
def stub_server():
    with OpenAIStubServer() as server:
        yield server


@pytest.fixture
def make_openai_client(stub_server, tmp_path):
    """Build an LLMClient that talks to the stub server over real HTTP."""

    def make(*, cache: bool = False, timeout_s: float = 5.0, max_retries: int = 2, concurrency: int = 4,
             model: str = "stub-model") -> LLMClient:
        provider = OpenAIProvider(stub_server.base_url, default_model=model, api_key=SECRET_KEY)
        return LLMClient(
            provider,
            timeout_s=timeout_s,
            retry=RetryPolicy(max_retries=max_retries, base_delay_s=0.01, max_delay_s=0.5),
            concurrency=concurrency,
            cache=ResponseCache(tmp_path / "llm-cache") if cache else None,
        )

    return make
