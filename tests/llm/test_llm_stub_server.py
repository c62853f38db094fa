"""The reusable OpenAI-compatible stub server itself, driven with the real `openai` SDK and raw HTTP."""

import json
import time
import urllib.error
import urllib.request

import openai
import pytest

from tests.support.openai_stub_server import Action, error, openai_stub, reply  # noqa: F401 (fixture)


def sdk(server, **kwargs):
    return openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0, **kwargs)


def ask(client, text="hi", **kwargs):
    return client.chat.completions.create(model="m", messages=[{"role": "user", "content": text}], **kwargs)


def test_scripted_queue_then_default_echo(openai_stub):
    openai_stub.enqueue("first", reply("second", usage={"prompt_tokens": 3, "completion_tokens": 1}))
    client = sdk(openai_stub)
    assert ask(client).choices[0].message.content == "first"
    second = ask(client)
    assert second.choices[0].message.content == "second"
    assert (second.usage.prompt_tokens, second.usage.completion_tokens, second.usage.total_tokens) == (3, 1, 4)
    assert ask(client, "ping").choices[0].message.content == "echo: ping"
    assert openai_stub.pending == 0
    assert [r.last_user_message for r in openai_stub.chat_requests] == ["hi", "hi", "ping"]


def test_callable_behaviour_sees_the_request(openai_stub):
    openai_stub.enqueue(lambda req: f"{req.json['model']} t={req.json['temperature']}")
    openai_stub.default = lambda req: Action(content=req.messages[0]["content"].upper())
    client = sdk(openai_stub)
    assert ask(client, temperature=0.5).choices[0].message.content == "m t=0.5"
    assert ask(client, "shout").choices[0].message.content == "SHOUT"


def test_status_codes_reach_the_sdk(openai_stub):
    openai_stub.enqueue(error(503, "down for maintenance"), error(429, retry_after=2))
    client = sdk(openai_stub)
    with pytest.raises(openai.InternalServerError, match="down for maintenance"):
        ask(client)
    with pytest.raises(openai.RateLimitError) as info:
        ask(client)
    assert info.value.response.headers["retry-after"] == "2"


def test_fixed_latency_and_request_timing(openai_stub):
    openai_stub.latency_s = 0.2
    started = time.monotonic()
    ask(sdk(openai_stub))
    assert time.monotonic() - started >= 0.2
    (request,) = openai_stub.requests
    assert request.finished - request.started >= 0.2
    assert openai_stub.in_flight == 0 and openai_stub.max_in_flight == 1


def test_models_listing_unknown_paths_and_reset(openai_stub):
    with urllib.request.urlopen(f"{openai_stub.base_url}/models") as response:
        assert json.load(response)["data"][0]["id"] == "stub-model"
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(urllib.request.Request(f"{openai_stub.base_url}/embeddings", data=b"{}"))
    assert info.value.code == 404
    openai_stub.enqueue("unused")
    openai_stub.reset()
    assert (openai_stub.pending, openai_stub.requests, openai_stub.max_in_flight) == (0, [], 0)


def test_binds_loopback_only(openai_stub):
    assert openai_stub.base_url.startswith("http://127.0.0.1:")
    assert openai_stub._httpd.server_address[0] == "127.0.0.1"
