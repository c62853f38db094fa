"""LLMClient behaviour that does not depend on the transport (scripted provider)."""

import json
import threading
import time

import pytest

from arena.llm import FakeProvider, LLMClient, LLMError, RetryPolicy, TransientLLMError
from arena.llm.cache import ResponseCache

USER = [{"role": "user", "content": "hi"}]
FAST = RetryPolicy(max_retries=2, base_delay_s=0.01)


def test_retry_policy_backs_off_exponentially_and_caps():
    policy = RetryPolicy(base_delay_s=0.5, max_delay_s=4.0, jitter=0.0)
    assert [policy.delay(a, None) for a in range(5)] == [0.5, 1.0, 2.0, 4.0, 4.0]
    assert policy.delay(0, 2.5) == 2.5  # the server's retry-after wins
    assert policy.delay(0, 600) == 4.0  # but is capped
    jittery = RetryPolicy(base_delay_s=1.0, jitter=0.25)
    assert all(0.75 <= jittery.delay(0, None) <= 1.25 for _ in range(50))


def test_transient_errors_are_retried_until_success():
    provider = FakeProvider([TransientLLMError("flaky"), TransientLLMError("flaky"), "done"])
    client = LLMClient(provider, retry=FAST)
    assert client.complete(USER).text == "done"
    stats = client.stats()
    assert (stats["provider_attempts"], stats["retries"], stats["failures"]) == (3, 2, 0)


def test_transient_errors_exhaust_retries():
    provider = FakeProvider([TransientLLMError("busy")] * 3)
    client = LLMClient(provider, retry=FAST)
    with pytest.raises(LLMError, match=r"fake:fake call failed after 3 attempts: busy") as info:
        client.complete(USER)
    assert not isinstance(info.value, TransientLLMError)
    assert client.stats()["failures"] == 1


def test_permanent_error_is_not_retried():
    provider = FakeProvider([LLMError("bad request"), "never"])
    client = LLMClient(provider, retry=FAST)
    with pytest.raises(LLMError, match="bad request"):
        client.complete(USER)
    assert len(provider.requests) == 1


def test_unexpected_provider_exception_becomes_llm_error():
    provider = FakeProvider([KeyError("choices")])
    client = LLMClient(provider, retry=FAST)
    with pytest.raises(LLMError, match="KeyError"):
        client.complete(USER)
    assert len(provider.requests) == 1


def test_validation():
    with pytest.raises(ValueError):
        LLMClient(FakeProvider(default="x"), concurrency=0)
    with pytest.raises(ValueError):
        LLMClient(FakeProvider(default="x")).complete([])


def test_request_fields_reach_the_provider():
    provider = FakeProvider(default="ok")
    client = LLMClient(provider, model="judge-model")
    client.complete([{"role": "system", "content": "s"}, {"role": "user", "content": None}],
                    temperature=0.3, max_tokens=12, stop=["x"], seed=5, json_mode=True)
    (request,) = provider.requests
    assert request.model == "judge-model"
    assert request.messages == (("system", "s"), ("user", ""))
    assert (request.temperature, request.max_tokens, request.stop, request.seed, request.json_mode) == (
        0.3, 12, ("x",), 5, True)
    assert client.describe() == "fake:judge-model"
    assert client.describe("other") == "fake:other"


def test_cache_round_trip_and_stats(tmp_path):
    provider = FakeProvider(["first", "second"])
    client = LLMClient(provider, cache=ResponseCache(tmp_path))
    assert client.complete(USER).text == "first"
    hit = client.complete(USER)
    assert (hit.text, hit.cached) == ("first", True)
    assert len(provider.requests) == 1
    stats = client.stats()
    assert (stats["calls"], stats["cache_hits"], stats["provider_attempts"]) == (2, 1, 1)
    client.reset_stats()
    assert client.stats()["calls"] == 0


def test_corrupt_cache_entry_is_ignored(tmp_path):
    cache = ResponseCache(tmp_path)
    client = LLMClient(FakeProvider(["one", "two"]), cache=cache)
    client.complete(USER)
    (path,) = list(tmp_path.glob("*/*.json"))
    path.write_text("{not json", encoding="utf-8")
    response = client.complete(USER)
    assert (response.text, response.cached) == ("two", False)
    assert json.loads(path.read_text(encoding="utf-8"))["text"] == "two"  # rewritten


def test_cache_files_hold_only_the_answer(tmp_path):
    client = LLMClient(FakeProvider(["answer"]), cache=ResponseCache(tmp_path))
    client.complete(USER)
    (path,) = list(tmp_path.glob("*/*.json"))
    assert set(json.loads(path.read_text(encoding="utf-8"))) == {
        "text", "model", "prompt_tokens", "completion_tokens"}
    ResponseCache(tmp_path).clear()
    assert not list(tmp_path.glob("*/*.json"))


def test_cache_key_depends_on_every_parameter():
    base = {"model": "m", "messages": [["user", "hi"]], "temperature": 0.0, "max_tokens": 5,
            "stop": [], "seed": None, "json_mode": False}
    key = ResponseCache.key("p", base)
    assert key == ResponseCache.key("p", dict(base))
    assert key != ResponseCache.key("q", base)
    for name, value in [("model", "n"), ("messages", [["user", "ho"]]), ("temperature", 0.1),
                        ("max_tokens", 6), ("stop", ["."]), ("seed", 1), ("json_mode", True)]:
        assert key != ResponseCache.key("p", {**base, name: value}), name


def test_concurrency_limit_with_blocking_provider():
    lock = threading.Lock()
    state = {"now": 0, "max": 0}

    def slow(request):
        with lock:
            state["now"] += 1
            state["max"] = max(state["max"], state["now"])
        time.sleep(0.05)
        with lock:
            state["now"] -= 1
        return "ok"

    client = LLMClient(FakeProvider(slow), concurrency=2)
    threads = [threading.Thread(target=client.complete, args=([{"role": "user", "content": str(i)}],))
               for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert state["max"] == 2
    assert client.stats()["calls"] == 8


def test_fake_provider_script_exhausted_and_default():
    with pytest.raises(LLMError, match="exhausted"):
        LLMClient(FakeProvider([])).complete(USER)
    provider = FakeProvider(["a"], default="b")
    client = LLMClient(provider)
    assert [client.complete(USER, use_cache=False).text for _ in range(3)] == ["a", "b", "b"]
