"""`kind: ievalm`: an iEvaLM-CRS model server added by the systems file, spoken to as iEvaLM's
own client does, its reply's titles linked to the catalog; and `serve-crs` answering
iEvaLM-style clients."""

from __future__ import annotations

import httpx
import pytest
from byo_support import write_systems

from arena.catalogs.catalog import Catalog
from arena.runtime.config import Settings
from arena.dialogue import Dialogue, Role, UserInfo, UserKind
from arena.conversation.runner import DialogueRunner
from crs.external.http_crs import ExternalCRSError
from crs.external.ievalm_crs import IEvaLMCRS, ievalm_context
from crs.external.server import ContractServer, build_app
from crs.external.specs import external_specs
from crs.registry import CRSRegistry
from tests.support.ievalm_server import IEvaLMStyleServer


def _list_reply(context: list[str], message: str, turn: int) -> str:
    return f"Turn {turn}. Here are two for you: 1: Alien (1979)\n2: Titanic (1997)"


def _registry(tmp_path, url: str, catalog: Catalog) -> CRSRegistry:
    path = write_systems(tmp_path / "systems.yaml", {
        "name": "kbrd_ievalm", "display_name": "KBRD over iEvaLM", "dataset": "redial",
        "kind": "ievalm", "url": url, "timeout_s": 5})
    settings = Settings(systems_file=path, cache_dir=tmp_path)
    return CRSRegistry(external_specs(settings, catalog_loader=lambda _: catalog))


def _dialogue() -> Dialogue:
    return Dialogue(crs_id="kbrd_ievalm", user=UserInfo(kind=UserKind.HUMAN, id="tester"))


def test_an_ievalm_server_joins_by_config_and_its_titles_show(tmp_path, small_redial):
    with IEvaLMStyleServer(_list_reply) as server:
        registry = _registry(tmp_path, server.url, small_redial)
        assert registry.available() == ["kbrd_ievalm"]
        assert registry.status_table()[0]["family"] == "external-ievalm"
        crs = registry.get("kbrd_ievalm")
        assert isinstance(crs, IEvaLMCRS)
        runner = DialogueRunner(crs)
        dialogue = _dialogue()
        dialogue.add_agent("Hi! What are you in the mood for?", [])  # a greeting before the user speaks
        first = runner.user_turn(dialogue, "Something scary set in space")
        assert first.error is None, first.error
        # The reply check kept the listed titles, and the panel has them as catalog items.
        assert "Alien (1979)" in first.text and "Titanic (1997)" in first.text, first.text
        assert [small_redial.get(i.item_id).title for i in first.items] == ["Alien", "Titanic"]
        second = runner.user_turn(dialogue, "Seen Alien already")
        assert second.error is None and second.text.startswith("Turn 2."), second.text
    # As iEvaLM's client sends it: earlier utterances as strings from the user's first one on.
    assert server.seen[0]["context"] == [] and server.seen[0]["message"] == "Something scary set in space"
    assert server.seen[1]["context"] == ["Something scary set in space", first.text]
    assert server.seen[1]["message"] == "Seen Alien already"


def test_each_conversation_carries_its_own_server_state(small_redial):
    with IEvaLMStyleServer(_list_reply) as server:
        crs = IEvaLMCRS("kbrd_ievalm", server.url, small_redial, timeout_s=5)
        a, b = _dialogue(), _dialogue()
        replies = []
        for dialogue, text in ((a, "hi"), (a, "more"), (b, "hello"), (a, "again"), (b, "more")):
            dialogue.add_user(text)
            reply, items = crs.respond(dialogue)
            dialogue.add_agent(reply, items)
            replies.append(reply.split(".")[0])
        crs.close()
    assert replies == ["Turn 1", "Turn 2", "Turn 1", "Turn 3", "Turn 2"]
    assert server.seen[0]["cookie"] is None and server.seen[2]["cookie"] is None


def test_a_server_whose_health_check_fails_is_unavailable(tmp_path, small_redial):
    # Something else on the port (the HTTP contract's server answers GET / with 404): not ready.
    with ContractServer(build_app(_NoReply(), "other", "redial")) as other:
        assert httpx.get(other.url + "/health").status_code == 200
        registry = _registry(tmp_path, other.url + "/nothing-here", small_redial)
        assert registry.available() == []
        row = registry.status_table()[0]
        assert row["status"] == "unavailable" and "HTTP 404" in row["why"], row
    with IEvaLMStyleServer(_list_reply, health_status=503) as sick:
        registry = _registry(tmp_path, sick.url, small_redial)
        assert registry.available() == [] and "HTTP 503" in registry.status_table()[0]["why"]
    registry = _registry(tmp_path, "http://127.0.0.1:9", small_redial)
    assert registry.available() == [] and "cannot reach" in registry.status_table()[0]["why"]


def test_an_answer_outside_the_protocol_is_a_fault(small_redial, faulty_server):
    crs = IEvaLMCRS("kbrd_ievalm", faulty_server.url, small_redial, timeout_s=5)
    dialogue = _dialogue()
    dialogue.add_user("hi")
    # The faulty server answers POST / with the HTTP contract's {"text", "items"}, not {"response"}.
    with pytest.raises(ExternalCRSError, match=r"malformed.*response"):
        crs.respond(dialogue)
    assert crs.health.failures == 1
    crs.close()


def test_the_context_skips_failed_turns_and_needs_a_user_message():
    dialogue = _dialogue()
    dialogue.add_user("one")
    dialogue.add_agent("Sorry, the system could not answer.", [], error="timeout")
    dialogue.add_user("two")
    assert ievalm_context(dialogue) == (["one"], "two")
    dialogue.add_agent("a reply", [])
    with pytest.raises(ValueError, match="user utterance"):
        ievalm_context(dialogue)


class _NoReply:
    name = "other"

    def respond(self, dialogue):  # pragma: no cover - never asked
        raise AssertionError("not asked")


# -- serve-crs answering iEvaLM-style clients ----------------------------------------------------

class ReferenceWrapperClient:
    """A client that behaves as UserSimCRS's iEvaLM agent does: its dialogue history already holds
    the user's new utterance when it asks, and the context starts at the user's first utterance
    (a greeting said before is left out); the message is sent as well. The reply is the body's
    `response` (iEvaLM's servers answer JSON)."""

    def __init__(self, url: str):
        self.url = url.rstrip("/") + "/"
        self.history: list[tuple[str, str]] = [("AGENT", "Hello! How can I help you?")]

    def say(self, text: str) -> str:
        self.history.append(("USER", text))
        context, skipping = [], True
        for speaker, said in self.history:
            if skipping and speaker == "AGENT":
                continue
            skipping = False
            context.append(said)
        answer = httpx.post(self.url, json={"context": context, "message": text}, timeout=30)
        answer.raise_for_status()
        reply = answer.json()["response"]
        self.history.append(("AGENT", reply))
        return reply


class _EchoCRS:
    """A system that reports the conversation it was given (roles and texts)."""

    name = "echo"

    def __init__(self):
        self.seen: list[list[tuple[str, str]]] = []

    def respond(self, dialogue):
        self.seen.append([(u.role.value, u.text) for u in dialogue.utterances])
        return f"I heard {len(dialogue.utterances)} utterances; try Alien.", []


def test_serve_crs_answers_the_ievalm_protocol():
    crs = _EchoCRS()
    with ContractServer(build_app(crs, "echo", "redial")) as server:
        health = httpx.get(server.url + "/")
        assert health.status_code == 200 and health.text == "Model is running."
        client = ReferenceWrapperClient(server.url)
        assert client.say("I like space films") == "I heard 1 utterances; try Alien."
        assert client.say("Something older?") == "I heard 3 utterances; try Alien."
        bad = httpx.post(server.url + "/", json={"message": "no context"})
        assert bad.status_code == 422
    assert crs.seen[1] == [(Role.USER.value, "I like space films"),
                           (Role.AGENT.value, "I heard 1 utterances; try Alien."),
                           (Role.USER.value, "Something older?")]


def test_an_ievalm_system_can_be_an_arena_system_served_by_serve_crs(small_redial):
    # Both directions at once: the arena's iEvaLM client against the arena's iEvaLM server.
    crs = _EchoCRS()
    with ContractServer(build_app(crs, "echo", "redial")) as server:
        client = IEvaLMCRS("echo_via_ievalm", server.url, small_redial, timeout_s=5)
        assert client.probe() is None
        dialogue = _dialogue()
        for text in ("I like space films", "More like that"):
            dialogue.add_user(text)
            reply, items = client.respond(dialogue)
            dialogue.add_agent(reply, items)
        client.close()
    assert [u.text for u in dialogue.utterances if u.role == Role.AGENT] == [
        "I heard 1 utterances; try Alien.", "I heard 3 utterances; try Alien."]
    assert [small_redial.get(i.item_id).title for i in dialogue.utterances[-1].items] == ["Alien"]
