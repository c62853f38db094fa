"""A `chatcrs` system: ChatCRS on an OpenAI-compatible endpoint of its own (the stub server on
loopback), with its own model, key variable, prompt file and temperature."""

from __future__ import annotations

import logging

import pytest
from byo_support import write_systems

from arena.runtime.config import Settings
from arena.dialogue import Dialogue
from arena.conversation.runner import DialogueRunner
from crs.external.specs import external_specs
from crs.registry import CRSRegistry
from tests.support.openai_stub_server import OpenAIStubServer

KEY = "sk-chatcrs-own-key-987654321"


@pytest.fixture
def stub():
    with OpenAIStubServer(default="You might enjoy Alien (1979), a tense classic.") as server:
        yield server


def test_a_chatcrs_entry_uses_its_own_endpoint_model_key_prompt_and_temperature(
        stub, tmp_path, byo_cache, small_redial, small_retriever, caplog):
    prompt = tmp_path / "prompts" / "mine.txt"
    prompt.parent.mkdir()
    prompt.write_text("MY-PROMPT-MARKER: recommend {item_kind} warmly.", encoding="utf-8")
    path = write_systems(tmp_path / "systems.yaml", {
        "name": "chatcrs_stub", "display_name": "ChatCRS on the stub", "dataset": "redial", "kind": "chatcrs",
        "base_url": stub.base_url, "model": "stub-7b", "api_key_env": "STUB_KEY",
        "prompt_file": "prompts/mine.txt", "temperature": 0.7})
    settings = Settings.from_env({"ARENA_SYSTEMS": str(path), "STUB_KEY": KEY, "ARENA_CACHE_DIR": str(byo_cache),
                                  "ARENA_LLM_CACHE": "0", "ARENA_LLM_PROVIDER": "fake"})
    registry = CRSRegistry(external_specs(settings, catalog_loader=lambda _: small_redial))
    assert registry.available() == ["chatcrs_stub"]
    with caplog.at_level(logging.DEBUG):
        crs = registry.get("chatcrs_stub")
        dialogue = Dialogue(crs_id="chatcrs_stub")
        reply = DialogueRunner(crs).user_turn(dialogue, "I want a space adventure with aliens")
    assert reply.error is None, reply.error
    assert reply.text.startswith("You might enjoy Alien (1979)")
    assert [item.title for item in reply.items] == ["Alien (1979)"]
    request = stub.chat_requests[-1]
    assert request.json["model"] == "stub-7b" and request.json["temperature"] == 0.7
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.messages[0]["content"].startswith("MY-PROMPT-MARKER: recommend movies warmly.")
    assert KEY not in dialogue.model_dump_json() and KEY not in caplog.text and KEY not in repr(crs.llm.provider)


def test_a_chatcrs_endpoint_failure_is_a_recorded_failed_turn(stub, tmp_path, byo_cache, small_redial,
                                                             small_retriever):
    from tests.support.openai_stub_server import error

    path = write_systems(tmp_path / "systems.yaml", {
        "name": "chatcrs_stub", "display_name": "ChatCRS on the stub", "dataset": "redial", "kind": "chatcrs",
        "base_url": stub.base_url, "model": "stub-7b", "api_key_env": "STUB_KEY", "timeout_s": 2})
    settings = Settings.from_env({"ARENA_SYSTEMS": str(path), "STUB_KEY": KEY, "ARENA_CACHE_DIR": str(byo_cache),
                                  "ARENA_LLM_CACHE": "0", "ARENA_LLM_RETRIES": "0"})
    registry = CRSRegistry(external_specs(settings, catalog_loader=lambda _: small_redial))
    stub.enqueue(error(500, f"upstream exploded, key {KEY}"))
    dialogue = Dialogue(crs_id="chatcrs_stub")
    reply = DialogueRunner(registry.get("chatcrs_stub")).user_turn(dialogue, "I want a space adventure")
    assert reply.error and "LLMError" in reply.error
    assert KEY not in dialogue.model_dump_json()
