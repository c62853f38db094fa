"""An external system goes where a built-in goes: simulated runs, `recall` for one that ranks, and
the exports (unknown items flagged in the record)."""

from __future__ import annotations

import sys
from pathlib import Path

import httpx
import pytest
from byo_support import write_systems

sys.path.insert(0, str(Path(__file__).parent.parent / "sim"))

from sim_fakes import AttributeCRS, fake_llm, question_nlu, simulator_responder  # noqa: E402

from arena.runtime.config import Settings  # noqa: E402
from arena.corpus.dialoguekit import from_record, to_dialoguekit  # noqa: E402
from arena.dialogue import Dialogue, UserKind  # noqa: E402
from arena.store import Store  # noqa: E402
from crs.external.http_crs import HttpCRS, RankingHttpCRS  # noqa: E402
from crs.external.server import ContractServer, build_app  # noqa: E402
from crs.external.specs import external_specs  # noqa: E402
from crs.registry import CRSRegistry  # noqa: E402
from simulators import build_simulator, catalog_view  # noqa: E402
from webapp.runs.evaluation import RunConfig, RunManager  # noqa: E402


@pytest.fixture(scope="module")
def attribute_server():
    with ContractServer(build_app(AttributeCRS(catalog_view("redial")), "attribute", "redial")) as server:
        yield server


def test_a_simulated_run_includes_an_external_system(attribute_server, tmp_path):
    path = write_systems(tmp_path / "systems.yaml", {
        "name": "remote_attribute", "display_name": "Attribute CRS over HTTP", "dataset": "redial",
        "kind": "http", "url": attribute_server.url})
    settings = Settings(db_path=tmp_path / "arena.sqlite3", turn_timeout_s=10, systems_file=path)
    manager = RunManager(store=Store(settings.db_path), registry=CRSRegistry(external_specs(settings)),
                         llm=fake_llm(simulator_responder()), settings=settings, scorer=None,
                         simulator_factory=lambda kind, **kw: build_simulator(kind, nlu=question_nlu, **kw))
    run_id = manager.start(RunConfig(systems=["remote_attribute"], simulator="llm_us", n_dialogues=2, max_turns=4,
                                     seed=3, concurrency=2))
    assert manager.wait(run_id, timeout=120)
    state = manager.status(run_id)
    assert state["status"] == "finished" and state["done"] == 2 and state["failed"] == 0
    stored = manager.store.list_dialogues()
    assert {d.crs_id for d in stored} == {"remote_attribute"}
    assert all(d.user.kind == UserKind.SIMULATOR and not d.errors() for d in stored)
    assert any(u.items for d in stored for u in d.agent_turns())


def test_recall_loads_an_external_system_that_ranks_and_refuses_one_that_does_not(
        attribute_server, tmp_path, monkeypatch):
    from evaluators.recall import load_system

    path = write_systems(tmp_path / "systems.yaml",
                         {"name": "ranks", "display_name": "Ranks", "dataset": "redial", "kind": "http",
                          "url": "http://127.0.0.1:1", "ranking": True},
                         {"name": "talks", "display_name": "Talks", "dataset": "redial", "kind": "http",
                          "url": attribute_server.url})
    monkeypatch.setenv("ARENA_SYSTEMS", str(path))
    monkeypatch.setenv("ARENA_LLM_PROVIDER", "fake")
    monkeypatch.setenv("ARENA_CACHE_DIR", str(tmp_path / "cache"))
    system, problem, dataset = load_system("talks")
    assert system is None and "does not expose an item ranking" in problem and dataset == "redial"
    system, problem, _ = load_system("ranks")  # its server is down: unavailable, said in one line
    assert system is None and "ranks is unavailable" in problem


def test_an_external_ranking_answers_recall_requests(small_redial):
    alien = small_redial.find_title("Alien (1979)")
    seen = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"items": [alien.item_id, "The Matrix (1999)", "Nothing Like It"]})

    crs = RankingHttpCRS("ranks", "http://127.0.0.1:1", small_redial, transport=httpx.MockTransport(answer))
    ranking = crs.recommend(Dialogue(crs_id="ranks"), 3)
    assert seen[0].url.path == "/recommend" and b'"k":3' in seen[0].content.replace(b" ", b"")
    assert [i.title for i in ranking] == ["Alien (1979)", "The Matrix (1999)", "Nothing Like It"]
    assert ranking[2].item_id.startswith("unlinked:")


def test_unlinked_items_are_flagged_in_exports(small_redial):
    crs = HttpCRS("remote", "http://127.0.0.1:1", small_redial, transport=httpx.MockTransport(
        lambda _: httpx.Response(200, json={"text": "Try Zorblax.", "items": ["Zorblax"]})))
    dialogue = Dialogue(crs_id="remote")
    dialogue.add_user("surprise me")
    text, items = crs.respond(dialogue)
    dialogue.add_agent(text, items=items)
    record = to_dialoguekit(dialogue)
    exported = [u for u in record["conversation"] if u.get("recommended_items")][0]["recommended_items"]
    assert exported[0]["title"] == "Zorblax" and exported[0]["id"].startswith("unlinked:")
    assert from_record(record).utterances[1].items == items  # and it reads back
