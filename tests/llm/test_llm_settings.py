"""Choosing the provider from the environment, and building the client from settings."""

import pytest

from arena.runtime.config import Settings, SettingsError
from arena.llm import FakeProvider, LLMError, LocalProvider, OpenAIProvider, build_client, make_provider
from arena.llm.types import LLMRequest


def test_no_endpoint_means_local():
    settings = Settings.from_env({})
    assert settings.llm_provider == "local"
    assert settings.llm_base_url is None


def test_base_url_means_openai():
    settings = Settings.from_env({"OPENAI_BASE_URL": "http://127.0.0.1:8000/v1"})
    assert settings.llm_provider == "openai"
    assert settings.llm_base_url == "http://127.0.0.1:8000/v1"


def test_api_key_alone_means_openai_default_endpoint():
    settings = Settings.from_env({"OPENAI_API_KEY": "sk-x"})
    assert (settings.llm_provider, settings.llm_base_url) == ("openai", None)
    assert settings.llm_model_name == "gpt-4o-mini"


def test_explicit_provider_wins_and_is_case_insensitive():
    env = {"OPENAI_BASE_URL": "http://127.0.0.1:8000/v1", "ARENA_LLM_PROVIDER": " Fake "}
    assert Settings.from_env(env).llm_provider == "fake"
    assert Settings.from_env({"ARENA_LLM_PROVIDER": "LOCAL", "OPENAI_API_KEY": "k"}).llm_provider == "local"


def test_invalid_provider_is_a_clear_error():
    with pytest.raises(ValueError, match=r"ARENA_LLM_PROVIDER must be one of 'openai', 'local' or 'fake', got 'gpt4'"):
        Settings.from_env({"ARENA_LLM_PROVIDER": "gpt4"})


def test_llm_knobs_from_env():
    settings = Settings.from_env({
        "ARENA_LLM_MODEL": "qwen2.5-7b", "ARENA_LLM_TIMEOUT": "7.5", "ARENA_LLM_RETRIES": "2",
        "ARENA_LLM_CONCURRENCY": "3", "ARENA_LLM_CACHE": "0", "ARENA_LLM_PROVIDER": "openai",
    })
    assert settings.llm_model_name == "qwen2.5-7b"
    assert (settings.llm_timeout_s, settings.llm_max_retries) == (7.5, 2)
    assert (settings.llm_concurrency, settings.llm_cache) == (3, False)
    with pytest.raises(ValueError, match="ARENA_LLM_RETRIES must be an integer"):
        Settings.from_env({"ARENA_LLM_RETRIES": "many"})


def test_build_client_for_openai_talks_to_the_endpoint(stub_server, tmp_path, api_key):
    settings = Settings.from_env({
        "OPENAI_API_KEY": api_key, "OPENAI_BASE_URL": stub_server.base_url, "ARENA_CACHE_DIR": str(tmp_path), "ARENA_LLM_MODEL": "judge",
        "ARENA_LLM_RETRIES": "1", "ARENA_LLM_CONCURRENCY": "2", "ARENA_LLM_TIMEOUT": "9",
    })
    client = build_client(settings)
    assert isinstance(client.provider, OpenAIProvider)
    assert client.describe() == "openai:judge"
    assert (client.timeout_s, client.retry.max_retries, client.concurrency) == (9.0, 1, 2)
    assert client.complete([{"role": "user", "content": "ping"}]).text == "echo: ping"
    assert client.complete([{"role": "user", "content": "ping"}]).cached
    assert list((tmp_path / "llm").rglob("*.json"))
    (request,) = stub_server.chat_requests
    assert request.json["model"] == "judge"
    assert request.headers["authorization"] == f"Bearer {api_key}"


def test_openai_without_key_or_endpoint_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    settings = Settings.from_env({"ARENA_LLM_PROVIDER": "openai"})
    with pytest.raises(LLMError, match="needs OPENAI_API_KEY"):
        build_client(settings)


def test_local_endpoint_needs_no_key(stub_server, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    provider = make_provider(Settings.from_env({"OPENAI_BASE_URL": stub_server.base_url}))
    assert isinstance(provider, OpenAIProvider)
    assert provider.base_url == stub_server.base_url


def test_local_and_fake_providers_from_settings(monkeypatch):
    local = make_provider(Settings.from_env({}))
    assert isinstance(local, LocalProvider)  # built lazily: nothing is loaded yet
    assert local.path.is_file() and local.default_model.startswith("SmolLM2-135M-Instruct")
    assert make_provider(Settings.from_env({"ARENA_LLM_LOCAL_BACKEND": "transformers"})).backend == "transformers"
    with pytest.raises(SettingsError, match="ARENA_LLM_LOCAL_BACKEND must be one of"):
        Settings.from_env({"ARENA_LLM_LOCAL_BACKEND": "tensorrt"})
    fake = make_provider(Settings.from_env({"ARENA_LLM_PROVIDER": "fake", "ARENA_FAKE_REPLY": "scripted"}))
    assert fake.complete(LLMRequest(messages=(("user", "x"),), model="fake"), 5).text == "scripted"
    fake = make_provider(Settings.from_env({"ARENA_LLM_PROVIDER": "fake"}))
    assert isinstance(fake, FakeProvider)


def test_isolated_env_fixture_builds_a_fake_client(isolated_env):
    client = build_client(Settings.from_env())
    assert client.describe() == "fake:fake"
    assert client.complete([{"role": "user", "content": "x"}]).text


def test_llama_cpp_thread_count():
    import os

    assert LocalProvider().n_threads == max(1, (os.cpu_count() or 2) // 2)
    assert LocalProvider(n_threads=3).n_threads == 3
    assert make_provider(Settings.from_env({"ARENA_LLM_THREADS": "5"})).n_threads == 5
    with pytest.raises(SettingsError, match="ARENA_LLM_THREADS must be an integer, got 'all'"):
        Settings.from_env({"ARENA_LLM_THREADS": "all"})
