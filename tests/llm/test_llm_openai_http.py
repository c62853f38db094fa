"""The openai provider over real HTTP against the stub server on 127.0.0.1."""

import email.utils
import logging
import socket
import threading
import time
import traceback

import pytest

from arena.llm import LLMClient, LLMError, OpenAIProvider, RetryPolicy
from arena.llm.cache import ResponseCache
from tests.support.openai_stub_server import Action, OpenAIStubServer, error, raw, reply, sleep

USER = [{"role": "user", "content": "Recommend a movie."}]


def test_success_sends_request_and_reads_usage(stub_server, make_openai_client, api_key):
    client = make_openai_client()
    stub_server.enqueue(reply("Try Alien (1979).", usage={"prompt_tokens": 11, "completion_tokens": 7}))
    messages = [{"role": "system", "content": "You recommend films."}, *USER]

    response = client.complete(messages, temperature=0.2, max_tokens=40, stop=["\n\n"], seed=3,
                               json_mode=True)

    assert response.text == "Try Alien (1979)."
    assert (response.prompt_tokens, response.completion_tokens) == (11, 7)
    assert response.cached is False and response.latency_s > 0
    (sent,) = stub_server.chat_requests
    assert sent.headers["authorization"] == f"Bearer {api_key}"
    assert sent.json["model"] == "stub-model"
    assert sent.json["messages"] == messages
    assert sent.json["temperature"] == 0.2 and sent.json["max_tokens"] == 40
    assert sent.json["stop"] == ["\n\n"] and sent.json["seed"] == 3
    assert sent.json["response_format"] == {"type": "json_object"}
    stats = client.stats()
    assert stats["calls"] == 1 and stats["provider_attempts"] == 1 and stats["retries"] == 0
    assert (stats["prompt_tokens"], stats["completion_tokens"]) == (11, 7)


def test_token_accounting_sums_usage_over_calls(stub_server, make_openai_client):
    client = make_openai_client()
    stub_server.enqueue(
        reply("a", usage={"prompt_tokens": 5, "completion_tokens": 2}),
        reply("b", usage={"prompt_tokens": 8, "completion_tokens": 3}),
    )
    client.complete(USER)
    client.complete([{"role": "user", "content": "another"}])
    stats = client.stats()
    assert (stats["calls"], stats["prompt_tokens"], stats["completion_tokens"]) == (2, 13, 5)


def test_server_error_then_success_counts_one_retry(stub_server, make_openai_client):
    client = make_openai_client()
    stub_server.enqueue(error(500), reply("recovered"))
    assert client.complete(USER).text == "recovered"
    assert len(stub_server.chat_requests) == 2
    stats = client.stats()
    assert (stats["provider_attempts"], stats["retries"], stats["failures"]) == (2, 1, 0)


def test_rate_limit_waits_for_retry_after(stub_server, make_openai_client):
    client = make_openai_client()
    stub_server.enqueue(error(429, "slow down", retry_after=0.4), reply("ok"))
    assert client.complete(USER).text == "ok"
    first, second = stub_server.chat_requests
    # Without the header the backoff would be ~0.01 s.
    assert second.started - first.started >= 0.35
    assert client.stats()["retries"] == 1


def test_retry_after_ms_header_is_understood(stub_server, make_openai_client):
    client = make_openai_client()
    throttled = Action(status=429, headers={"retry-after-ms": "300"},
                       json_body={"error": {"message": "wait"}})
    stub_server.enqueue(throttled, reply("ok"))
    assert client.complete(USER).text == "ok"
    first, second = stub_server.chat_requests
    assert second.started - first.started >= 0.25


def test_unavailable_with_retry_after_as_http_date_is_honoured(stub_server, api_key):
    provider = OpenAIProvider(stub_server.base_url, default_model="stub-model", api_key=api_key)
    policy = RetryPolicy(max_retries=1, base_delay_s=0.01, max_delay_s=5)  # the date, not the cap, decides
    client = LLMClient(provider, timeout_s=5, retry=policy)
    # An HTTP date has whole seconds: two seconds ahead is at least one second of wait.
    when = email.utils.formatdate(time.time() + 2, usegmt=True)
    busy = Action(status=503, headers={"retry-after": when}, json_body={"error": {"message": "busy"}})
    stub_server.enqueue(busy, reply("ok"))
    assert client.complete(USER).text == "ok"
    first, second = stub_server.chat_requests
    assert second.started - first.started >= 0.9
    assert client.stats()["retries"] == 1


def test_timeout_is_retried_then_raises(stub_server, make_openai_client):
    client = make_openai_client(timeout_s=0.3, max_retries=1)
    stub_server.enqueue(sleep(3), sleep(3))
    started = time.monotonic()
    with pytest.raises(LLMError, match=r"after 2 attempts: timed out after 0.3 s"):
        client.complete(USER)
    assert time.monotonic() - started < 2.5  # the client did not wait for the slow server
    assert len(stub_server.chat_requests) == 2
    stats = client.stats()
    assert (stats["retries"], stats["failures"]) == (1, 1)


def test_timeout_then_success(stub_server, make_openai_client):
    client = make_openai_client(timeout_s=0.3, max_retries=2)
    stub_server.enqueue(sleep(3), reply("in time"))
    assert client.complete(USER).text == "in time"


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param(lambda: raw("<html>gateway hiccup</html>", content_type="text/html"), id="not-json"),
        pytest.param(lambda: raw("{broken json"), id="broken-json"),
        pytest.param(lambda: raw('{"id": "x", "object": "chat.completion"}'), id="missing-choices"),
        pytest.param(lambda: raw('{"id": "x", "choices": []}'), id="empty-choices"),
        pytest.param(lambda: raw('{"choices": [{"index": 0, "message": {"role": "assistant"}}]}'),
                     id="no-content"),
    ],
)
def test_malformed_body_retried_then_clear_error(stub_server, make_openai_client, bad):
    client = make_openai_client(max_retries=2)
    stub_server.enqueue(bad(), bad(), bad())
    with pytest.raises(LLMError) as info:
        client.complete(USER)
    message = str(info.value)
    assert "malformed response body" in message and "after 3 attempts" in message
    assert len(stub_server.chat_requests) == 3


def test_malformed_body_then_good_answer(stub_server, make_openai_client):
    client = make_openai_client()
    stub_server.enqueue(raw("nonsense", content_type="text/plain"), reply("fine"))
    assert client.complete(USER).text == "fine"
    assert client.stats()["retries"] == 1


@pytest.mark.parametrize("status", [400, 401, 404, 422])
def test_client_errors_are_not_retried(stub_server, make_openai_client, status):
    client = make_openai_client(max_retries=3)
    stub_server.enqueue(error(status, "unknown parameter: foo"))
    with pytest.raises(LLMError, match=rf"HTTP {status}.*unknown parameter: foo"):
        client.complete(USER)
    assert len(stub_server.chat_requests) == 1
    stats = client.stats()
    assert (stats["retries"], stats["failures"]) == (0, 1)


def test_unreachable_endpoint_is_retried_then_raises(api_key):
    with socket.socket() as sock:  # a port that nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    provider = OpenAIProvider(f"http://127.0.0.1:{port}/v1", default_model="m", api_key=api_key)
    client = LLMClient(provider, timeout_s=2, retry=RetryPolicy(max_retries=1, base_delay_s=0.01))
    with pytest.raises(LLMError, match="cannot reach the endpoint"):
        client.complete(USER)
    assert client.stats()["provider_attempts"] == 2


def test_cache_hit_sends_no_second_request(stub_server, make_openai_client):
    client = make_openai_client(cache=True)
    first = client.complete(USER)
    second = client.complete(USER)
    assert second.cached and not first.cached
    assert second.text == first.text
    assert len(stub_server.chat_requests) == 1
    assert client.stats()["cache_hits"] == 1


def test_cache_is_on_disk_and_shared_between_clients(stub_server, make_openai_client):
    make_openai_client(cache=True).complete(USER)
    again = make_openai_client(cache=True).complete(USER)
    assert again.cached
    assert len(stub_server.chat_requests) == 1


@pytest.mark.parametrize(
    "change",
    [
        {"temperature": 0.7},
        {"model": "other-model"},
        {"max_tokens": 99},
        {"stop": ["END"]},
        {"seed": 7},
        {"json_mode": True},
    ],
)
def test_cache_misses_when_parameters_differ(stub_server, make_openai_client, change):
    client = make_openai_client(cache=True)
    client.complete(USER)
    response = client.complete(USER, **change)
    assert not response.cached
    assert len(stub_server.chat_requests) == 2


def test_cache_bypass_and_different_messages(stub_server, make_openai_client):
    client = make_openai_client(cache=True)
    client.complete(USER)
    assert not client.complete(USER, use_cache=False).cached
    assert not client.complete([{"role": "user", "content": "Something else."}]).cached
    assert len(stub_server.chat_requests) == 3


def test_cache_is_per_endpoint(tmp_path, api_key):
    cache = ResponseCache(tmp_path / "c")
    with OpenAIStubServer(default="from A") as a, OpenAIStubServer(default="from B") as b:
        client_a = LLMClient(OpenAIProvider(a.base_url, "m", api_key=api_key), cache=cache)
        client_b = LLMClient(OpenAIProvider(b.base_url, "m", api_key=api_key), cache=cache)
        assert client_a.complete(USER).text == "from A"
        assert client_b.complete(USER).text == "from B"


def test_failed_calls_are_not_cached(stub_server, make_openai_client):
    client = make_openai_client(cache=True, max_retries=0)
    stub_server.enqueue(error(503))
    with pytest.raises(LLMError):
        client.complete(USER)
    assert client.complete(USER).cached is False
    assert len(stub_server.chat_requests) == 2


def test_concurrency_limit_is_respected(stub_server, make_openai_client):
    stub_server.latency_s = 0.1
    client = make_openai_client(concurrency=3)
    results: dict[int, str] = {}
    errors: list[BaseException] = []

    def ask(i: int) -> None:
        try:
            results[i] = client.complete([{"role": "user", "content": f"question {i}"}]).text
        except BaseException as exc:  # surfaced by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert not errors
    assert results == {i: f"echo: question {i}" for i in range(16)}
    assert stub_server.max_in_flight == 3


def test_api_key_never_leaks(stub_server, make_openai_client, tmp_path, caplog, api_key):
    SECRET_KEY = api_key
    caplog.set_level(logging.DEBUG)
    for name in ("openai", "httpx", "httpx2", "httpcore", "httpcore2", "arena.llm"):
        caplog.set_level(logging.DEBUG, logger=name)
    client = make_openai_client(cache=True, timeout_s=0.3, max_retries=1)
    errors: list[BaseException] = []

    def expect_failure(*behaviours) -> None:
        stub_server.enqueue(*behaviours)
        try:
            client.complete([{"role": "user", "content": f"case {len(errors)}"}])
        except LLMError as exc:
            errors.append(exc)
        else:
            raise AssertionError("expected an LLMError")

    client.complete(USER)  # success, cached
    client.complete(USER)  # cache hit
    stub_server.enqueue(error(500), reply("after retry"))
    client.complete([{"role": "user", "content": "retry case"}])
    # A misbehaving server that quotes the credentials back in its error body.
    expect_failure(lambda req: error(400, f"bad header {req.headers['authorization']}"))
    expect_failure(lambda req: error(503, f"overloaded, key={SECRET_KEY}"), error(503, SECRET_KEY))
    expect_failure(sleep(3), sleep(3))
    expect_failure(raw(f"not json {SECRET_KEY}", content_type="text/plain"), raw("{"))

    assert all(r.headers["authorization"] == f"Bearer {SECRET_KEY}" for r in stub_server.chat_requests)
    for exc in errors:
        rendered = "".join(traceback.format_exception(exc))
        assert SECRET_KEY not in rendered and SECRET_KEY not in repr(exc)
    assert "[redacted]" in str(errors[0])
    cache_files = [p for p in (tmp_path / "llm-cache").rglob("*") if p.is_file()]
    assert cache_files
    for path in cache_files:
        assert SECRET_KEY not in path.read_text(encoding="utf-8")
    assert any(r.name.startswith("openai") and r.levelno == logging.DEBUG for r in caplog.records)
    assert any(r.name.startswith("httpcore") for r in caplog.records)
    for record in caplog.records:
        assert SECRET_KEY not in record.getMessage(), record.name
    assert SECRET_KEY not in caplog.text
    assert SECRET_KEY not in repr(client.provider)
