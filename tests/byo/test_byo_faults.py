"""Faults of an external system (timeout, 5xx, malformed JSON, an oversized reply, a dead server)
are one clear error the runner records as a system failure; the key never shows."""

from __future__ import annotations

import json

import pytest
from byo_support import dead_url, wait_until, write_systems

from arena.runtime.config import Settings
from arena.dialogue import Dialogue
from arena.conversation.runner import POLITE_ERROR, DialogueRunner
from crs.external.http_crs import ExternalCRSError, HttpCRS
from crs.external.specs import external_specs
from crs.registry import CRSRegistry

KEY = "sk-byo-secret-0123456789"


@pytest.fixture
def crs_for(small_redial):
    made = []

    def build(url: str, timeout_s: float = 1.0) -> HttpCRS:
        from pydantic import SecretStr

        crs = HttpCRS("remote", url, small_redial, timeout_s=timeout_s, api_key=SecretStr(KEY))
        made.append(crs)
        return crs

    yield build
    for crs in made:
        crs.close()


@pytest.mark.parametrize("mode, fault", [
    ("slow", "timeout"), ("5xx", "http_status"), ("malformed", "malformed"), ("wrong_shape", "malformed"),
    ("oversized", "oversized"), ("long_text", "oversized"),
])
def test_each_fault_is_an_external_crs_error(faulty_server, crs_for, mode, fault):
    faulty_server.mode = mode
    crs = crs_for(faulty_server.url)
    with pytest.raises(ExternalCRSError) as caught:
        crs.respond(Dialogue(crs_id="remote"))
    assert caught.value.fault == fault and caught.value.system == "remote"
    assert KEY not in str(caught.value)
    assert crs.health.state == "failing" and crs.health.failures == 1
    assert faulty_server.seen_headers[-1]["authorization"] == f"Bearer {KEY}"  # sent, never shown


def test_a_dead_server_is_unreachable(crs_for):
    with pytest.raises(ExternalCRSError) as caught:
        crs_for(dead_url()).respond(Dialogue(crs_id="remote"))
    assert caught.value.fault == "unreachable"


def test_the_runner_records_a_fault_as_a_polite_failed_turn_without_the_key(faulty_server, crs_for):
    faulty_server.mode = "5xx"
    dialogue = Dialogue(crs_id="remote")
    reply = DialogueRunner(crs_for(faulty_server.url)).user_turn(dialogue, "a space movie please")
    assert reply.text == POLITE_ERROR
    assert "ExternalCRSError" in reply.error and "http_status" in reply.error and "HTTP 503" in reply.error
    assert KEY not in dialogue.model_dump_json()
    faulty_server.mode = "ok"  # the next turn works again
    reply = DialogueRunner(crs_for(faulty_server.url)).user_turn(dialogue, "something else")
    assert reply.error is None and reply.items[0].title == "Alien (1979)"


def test_a_system_that_goes_down_leaves_the_choices_with_its_health_shown(faulty_server, small_redial, tmp_path, monkeypatch):
    monkeypatch.setenv("BYO_KEY", KEY)
    import crs.external.specs as specs

    monkeypatch.setattr(specs, "PROBE_TTL_S", 0.0)
    path = write_systems(tmp_path / "systems.yaml", {
        "name": "remote", "display_name": "Remote", "dataset": "redial", "kind": "http",
        "url": faulty_server.url, "api_key_env": "BYO_KEY", "timeout_s": 1})
    settings = Settings.from_env({"ARENA_SYSTEMS": str(path), "BYO_KEY": KEY})
    registry = CRSRegistry(external_specs(settings, catalog_loader=lambda _: small_redial))
    assert registry.available() == ["remote"]
    crs = registry.get("remote")
    faulty_server.mode = "malformed"
    dialogue = Dialogue(crs_id="remote")
    DialogueRunner(crs).user_turn(dialogue, "hi")
    health = registry.status_table()[0]["health"]
    assert health.startswith("failing: 1 calls, 1 failed") and KEY not in health
    from types import SimpleNamespace

    from webapp.ui.parts.system_health import health_markdown

    page = health_markdown(SimpleNamespace(registry=registry))  # the researcher app's Evaluate tab
    assert "| remote | Remote | external\\-http | redial | ready |" in page and "failing: 1 calls, 1 failed" in page
    faulty_server.stop()
    assert wait_until(lambda: registry.available() == [])
    assert "down" in registry.status_table()[0]["why"]
    assert KEY not in json.dumps(registry.status_table()) and KEY not in repr(crs)
