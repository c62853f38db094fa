"""Credentials inside an endpoint URL never reach a log line."""

from __future__ import annotations

import io
import logging

import pytest

from arena.llm.redaction import install_log_redaction, redact_text, redact_url

SECRET_URL = "http://alice:s3cr3t-pass@127.0.0.1:{port}/v1?api_key=k3y-value&mode=x"


def test_redact_url_drops_userinfo_and_key_params():
    url = redact_url(SECRET_URL.format(port=9))
    assert "s3cr3t" not in url and "alice" not in url and "k3y-value" not in url
    assert url.startswith("http://[redacted]@127.0.0.1:9/v1?") and "mode=x" in url
    line = redact_text(f"HTTP Request: POST {SECRET_URL.format(port=9)} 200")
    assert "s3cr3t" not in line and "k3y-value" not in line and "mode=x" in line


def test_provider_never_shows_the_credentials():
    pytest.importorskip("openai")
    from arena.llm.providers import OpenAIProvider

    provider = OpenAIProvider(SECRET_URL.format(port=9))
    shown = repr(provider) + provider.base_url
    assert "s3cr3t" not in shown and "k3y-value" not in shown


def test_http_request_log_lines_are_redacted():
    pytest.importorskip("openai")
    from arena.llm import LLMClient
    from arena.llm.providers import OpenAIProvider
    from tests.support.openai_stub_server import OpenAIStubServer

    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        install_log_redaction([handler])
        with OpenAIStubServer(default="fine") as server:
            port = server.port
            provider = OpenAIProvider(f"http://alice:s3cr3t-pass@127.0.0.1:{port}/v1", default_model="m")
            LLMClient(provider).complete([{"role": "user", "content": "hi"}], use_cache=False)
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)
    logged = stream.getvalue()
    assert "127.0.0.1" in logged  # the request line was logged ...
    assert "s3cr3t" not in logged and "alice" not in logged  # ... without its credentials
