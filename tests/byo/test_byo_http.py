"""An `http` system end to end: a built-in ChatCRS served by the contract server on loopback,
added by a systems file, answering through the runner with its items linked to the catalog."""

from __future__ import annotations

import httpx
import pytest
from byo_support import write_systems

from arena.catalogs.catalog import Catalog
from arena.runtime.config import Settings
from arena.dialogue import Dialogue, Role, UserInfo, UserKind
from arena.llm import FakeProvider, LLMClient, LLMRequest, RetryPolicy
from arena.conversation.runner import DialogueRunner
from crs.chatcrs import ChatCRS
from crs.external.contract import UNLINKED_PREFIX, is_unlinked
from crs.external.http_crs import HttpCRS, RankingHttpCRS
from crs.external.server import ContractServer, build_app
from crs.external.specs import external_specs
from crs.registry import CRSRegistry

UNKNOWN = "Zorblax Returns (2031)"


@pytest.fixture(scope="module")
def served(small_redial: Catalog, small_retriever):
    """ChatCRS (scripted LLM naming its first candidate and an unknown film) behind the contract server."""
    def answer(request: LLMRequest) -> str:
        prompt = request.messages[0][1]
        first = next((line for line in prompt.splitlines() if "(" in line and line.lstrip()[:1].isdigit()), "")
        title = first.split(". ", 1)[-1].split(" - ")[0].split(":")[0].strip() if first else "Alien (1979)"
        return f"You might enjoy {title}."

    llm = LLMClient(FakeProvider(answer), retry=RetryPolicy(base_delay_s=0.01))
    crs = ChatCRS("chatcrs_redial", small_redial, small_retriever, llm)
    with ContractServer(build_app(crs, "chatcrs_redial", "redial")) as server:
        yield server, crs


def _registry(tmp_path, url: str, catalog: Catalog, **extra) -> CRSRegistry:
    path = write_systems(tmp_path / "systems.yaml", {
        "name": "remote_chatcrs", "display_name": "ChatCRS over HTTP", "dataset": "redial",
        "kind": "http", "url": url, **extra})
    return CRSRegistry(external_specs(Settings(systems_file=path, cache_dir=tmp_path), catalog_loader=lambda _: catalog))


def _dialogue(crs_id: str = "remote_chatcrs") -> Dialogue:
    return Dialogue(crs_id=crs_id, user=UserInfo(kind=UserKind.HUMAN, id="tester"))


def test_the_server_speaks_the_documented_contract(served):
    server, _ = served
    health = httpx.get(server.url + "/health").json()
    assert health == {"status": "ok", "system": "chatcrs_redial", "dataset": "redial", "contract": "1",
                      "ranking": True}
    dialogue = _dialogue("chatcrs_redial")
    dialogue.add_user("I want a space adventure with aliens and spaceships")
    answer = httpx.post(server.url + "/respond", json={"dialogue": dialogue.model_dump(mode="json")}).json()
    assert set(answer) == {"text", "items"} and answer["text"]
    assert answer["items"] and all(set(item) == {"id", "title"} for item in answer["items"])
    bad = httpx.post(server.url + "/respond", json={"dialogue": {"no": "crs_id"}})
    assert bad.status_code == 422


def test_an_http_system_answers_through_the_runner_with_catalog_items(served, tmp_path, small_redial):
    server, _ = served
    registry = _registry(tmp_path, server.url, small_redial, ranking=True)
    assert registry.available() == ["remote_chatcrs"]
    crs = registry.get("remote_chatcrs")
    assert isinstance(crs, RankingHttpCRS)
    dialogue = _dialogue()
    reply = DialogueRunner(crs).user_turn(dialogue, "I want a space adventure with aliens and spaceships")
    assert reply.error is None, reply.error
    assert reply.role == Role.AGENT and reply.text.startswith("You might enjoy"), reply.text
    assert reply.items and all(small_redial.get(item.item_id) is not None for item in reply.items)
    ranking = crs.recommend(dialogue, 10)
    assert len(ranking) == 10 and all(small_redial.get(item.item_id) for item in ranking)
    assert "calls, 0 failed" in registry.status_table()[0]["health"]


def test_items_are_linked_by_id_or_title_and_unknown_ones_kept_as_flagged_text(faulty_server, small_redial):
    alien, matrix = small_redial.find_title("Alien (1979)"), small_redial.find_title("The Matrix (1999)")
    replies = iter([
        {"text": f"Try {alien.label}, The Matrix or {UNKNOWN}. Also Star Wars (1977).",
         "items": [alien.item_id, {"title": "the matrix"}, {"id": "nope", "title": UNKNOWN}]},
    ])
    transport = httpx.MockTransport(lambda request: httpx.Response(200, json=next(replies)))
    crs = HttpCRS("remote", "http://127.0.0.1:1", small_redial, transport=transport)
    text, items = crs.respond(_dialogue())
    assert [i.item_id for i in items[:2]] == [alien.item_id, matrix.item_id]
    assert items[2].title == UNKNOWN and items[2].item_id.startswith(UNLINKED_PREFIX) and is_unlinked(items[2])
    # The title check: the unknown item is shown (as text), so naming it stays; Star Wars is not shown.
    assert UNKNOWN.split(" (")[0] in text and "Star Wars" not in text


def test_an_http_system_is_offered_everywhere_a_built_in_is(served, tmp_path, monkeypatch):
    """Through the one registry the app, the simulators and `python -m crs` build."""
    from webapp.services import build_services

    server, _ = served
    path = write_systems(tmp_path / "systems.yaml", {
        "name": "remote_chatcrs", "display_name": "ChatCRS over HTTP", "dataset": "redial", "kind": "http",
        "url": server.url})
    settings = Settings.from_env({"ARENA_SYSTEMS": str(path), "ARENA_DB": str(tmp_path / "a.sqlite3"),
                                  "ARENA_CACHE_DIR": str(tmp_path / "cache"), "ARENA_LLM_PROVIDER": "fake"})
    services = build_services(settings, run_scorer=False)
    try:
        assert "remote_chatcrs" in services.registry.names
        assert "chatcrs_redial" in services.registry.names  # beside the built-ins
        assert "remote_chatcrs" in services.registry.available()
        assert services.registry.spec("remote_chatcrs").display_name == "ChatCRS over HTTP"
    finally:
        services.close()


def test_only_the_conversation_is_sent_never_who_the_user_is_or_their_goal(small_redial):
    import json

    sent = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        return httpx.Response(200, json={"text": "Hello!", "items": []})

    crs = HttpCRS("remote", "http://127.0.0.1:1", small_redial, transport=httpx.MockTransport(answer))
    dialogue = Dialogue(crs_id="remote", user=UserInfo(kind=UserKind.SIMULATOR, id="sim-7", simulator="llm_us",
                                                       details={"goal": {"target_items": ["79062"]}}),
                        metadata={"battle_id": "b1", "run_id": "r1"})
    dialogue.add_user("hi")
    crs.respond(dialogue)
    body = sent[0]
    assert body["contract"] == "1" and body["system"] == "remote"
    assert body["dialogue"]["user"] == {"kind": "simulator", "id": "anonymous", "simulator": None, "details": {}}
    assert body["dialogue"]["metadata"] == {} and body["dialogue"]["utterances"][0]["text"] == "hi"
    assert "79062" not in json.dumps(body)
    Dialogue.model_validate(body["dialogue"])  # still the arena's Dialogue JSON


def test_a_streamed_answer_is_joined_before_it_is_shown(small_redial):
    alien = small_redial.find_title("Alien (1979)")
    ndjson = (b'{"text": "You might "}\n{"text": "enjoy Alien."}\n'
              + f'{{"items": ["{alien.item_id}"]}}\n'.encode())
    sse = b'event: piece\ndata: {"text": "Try "}\n\ndata: {"text": "Alien.", "items": ["Alien"]}\n\ndata: [DONE]\n\n'
    for body, kind in ((ndjson, "application/x-ndjson"), (sse, "text/event-stream; charset=utf-8")):
        transport = httpx.MockTransport(lambda _, b=body, k=kind: httpx.Response(200, content=b,
                                                                                  headers={"content-type": k}))
        text, items = HttpCRS("remote", "http://127.0.0.1:1", small_redial, transport=transport).respond(_dialogue())
        assert text in ("You might enjoy Alien.", "Try Alien.") and [i.item_id for i in items] == [alien.item_id]
    broken = httpx.MockTransport(lambda _: httpx.Response(200, content=b'{"text": "a"}\n[1, 2]\n',
                                                          headers={"content-type": "application/x-ndjson"}))
    from crs.external.http_crs import ExternalCRSError

    with pytest.raises(ExternalCRSError, match="malformed"):
        HttpCRS("remote", "http://127.0.0.1:1", small_redial, transport=broken).respond(_dialogue())
