"""Up in seconds: the first page answers while the models still load, readiness says so, and a turn for a
system still loading shows a "warming up" line and then its reply (Chat, Battle and Study alike).

The systems' loads block on an Event the test opens, so "still loading" lasts exactly as long as the test
needs; the server, the warm-up thread, the sessions and the store are the app's own.
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "battle"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "study"))

from battle_support import FakeCatalogCRS, fake_spec, make_services  # noqa: E402
from study_support import pid, publish  # noqa: E402

from arena.conversation.crs_interface import CRSSpec  # noqa: E402
from arena.dialogue import Dialogue, UserInfo, UserKind, Vote  # noqa: E402
from crs.registry import CRSRegistry  # noqa: E402
from tests.support.asgi_server import running  # noqa: E402
from webapp.serve import build_app  # noqa: E402
from webapp.sessions import chat  # noqa: E402
from webapp.sessions.refusal import Refusal  # noqa: E402
from webapp.sessions.warming import warming_line  # noqa: E402
from webapp.warm_start import ACT_MODEL, WarmUp, plan, readiness  # noqa: E402

NAMES = ("alpha", "beta", "gamma")


class Gate:
    """Loads that wait for the test: `open()` lets every waiting load finish."""

    def __init__(self):
        self.event = threading.Event()
        self.loaded: list[str] = []

    def spec(self, crs: FakeCatalogCRS, family: str = "fake") -> CRSSpec:
        def load():
            assert self.event.wait(60), "the test never opened the gate"
            self.loaded.append(crs.name)
            return crs

        return CRSSpec(name=crs.name, family=family, dataset="redial", description="test system", load=load,
                       check=lambda: None, display_name=f"{crs.name} (ReDial)", summary=f"The {crs.name} system.")

    def open(self) -> None:
        self.event.set()


def gated_services(tmp_path, gate: Gate, **settings):
    services = make_services(tmp_path, [], max_turns=6, **settings)
    services.registry = CRSRegistry([gate.spec(FakeCatalogCRS(name)) for name in NAMES])
    services.warming = WarmUp.for_services(services)
    return services


@pytest.fixture
def gate():
    gate = Gate()
    yield gate
    gate.open()  # never leave a warm-up thread waiting


def wait_until(condition, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


# -- readiness --------------------------------------------------------------------------------------


def test_readiness_goes_from_waiting_to_loading_to_ready(tmp_path, gate):
    services = gated_services(tmp_path, gate)
    before = readiness(services)
    assert before["ready"] is False and before["warm_start"] is True
    assert before["waiting"] == ["system alpha", "system beta", "system gamma"] and before["loading"] == []
    services.warming.start()
    wait_until(lambda: readiness(services)["loading"] == ["system alpha"])
    during = readiness(services)
    assert during["ready"] is False and during["waiting"] == ["system beta", "system gamma"]
    gate.open()
    assert services.warming.finished.wait(30)
    after = readiness(services)
    assert after["ready"] is True and after["loaded"] == ["system alpha", "system beta", "system gamma"]
    assert after["loading"] == after["waiting"] == after["failed"] == []
    services.warming = None  # warm-up off: ready as soon as it serves, models load on first use
    assert readiness(services) == {"ready": True, "warm_start": False}


def test_a_model_that_fails_to_load_is_reported_and_does_not_hold_readiness(tmp_path):
    def broken():
        raise RuntimeError("checkpoint truncated")

    services = make_services(tmp_path, [])
    services.registry = CRSRegistry([fake_spec(FakeCatalogCRS("alpha")),
                                     CRSSpec(name="broken", family="fake", dataset="redial", description="",
                                             load=broken, check=lambda: None)])
    services.warming = WarmUp.for_services(services)
    services.warming.run()
    state = readiness(services)
    assert state["ready"] is True and state["loaded"] == ["system alpha"] and state["failed"] == ["system broken"]


def test_the_first_page_answers_while_the_models_load_and_ready_says_when_they_have(tmp_path, gate):
    services = gated_services(tmp_path, gate)
    with running(build_app(services)) as url:
        services.warming.start()
        wait_until(lambda: services.warming.status()["loading"])
        assert httpx.get(url + "/", timeout=30).status_code == 200  # every load is still blocked
        health = httpx.get(url + "/health", timeout=30)
        assert health.status_code == 200 and health.json()["status"] == "ok" and health.json()["ready"] is False
        ready = httpx.get(url + "/ready", timeout=30)
        assert ready.status_code == 503 and ready.json()["loading"] == ["system alpha"]
        gate.open()
        assert services.warming.finished.wait(30)
        ready = httpx.get(url + "/ready", timeout=30)
        assert ready.status_code == 200 and ready.json()["ready"] is True
        assert httpx.get(url + "/health", timeout=30).json()["ready"] is True
    services.store.close()


@pytest.mark.browser
@pytest.mark.slow
def test_the_loading_starts_once_the_first_page_is_drawn_or_after_a_grace_without_one(tmp_path, gate):
    """The models load once a first page has been drawn for its visitor (its load event answered), not when
    its HTML is served: the loading holds the interpreter a good part of the time, and on a first start New
    battle became usable seconds later while the page's scripts and events waited for it. Probes and the
    HTML alone start nothing; with no visitor the loading starts after the grace."""
    from tests.support.browser import expect, open_browser, screenshots_dir

    services = gated_services(tmp_path, gate)
    with running(build_app(services)) as url:
        assert httpx.get(url + "/health", timeout=30).status_code == 200
        assert httpx.get(url + "/ready", timeout=30).status_code == 503
        assert httpx.get(url + "/", timeout=30).status_code == 200
        time.sleep(0.5)
        assert services.warming.status()["loading"] == []  # the HTML alone: nothing started
        with open_browser(screenshots_dir(tmp_path)) as browser:
            page = browser.page()
            page.goto(url + "/")
            expect(page.locator("#battle-new")).to_be_enabled()
            wait_until(lambda: services.warming.status()["loading"] == ["system alpha"])
        gate.open()
        assert services.warming.finished.wait(30)
    services.store.close()
    unvisited = gated_services(tmp_path / "unvisited", gate)
    unvisited.warming.start_soon(0.2)
    assert unvisited.warming.finished.wait(30)  # the gate is open: the loading ran without any page
    unvisited.store.close()


# -- the order a battle needs --------------------------------------------------------------------


def _battle(a: str, b: str, n: int) -> tuple[Dialogue, Dialogue, Vote]:
    sides = [Dialogue(crs_id=name, user=UserInfo(kind=UserKind.HUMAN, id=f"user-{n}")) for name in (a, b)]
    for side in sides:
        side.add_user("a space movie")
        side.add_agent("How about Alien (1979)?")
    return (*sides, Vote(battle_id=f"battle-{n}", dialogue_a=sides[0].dialogue_id,
                         dialogue_b=sides[1].dialogue_id, crs_a=a, crs_b=b, choice="A", user_id=f"user-{n}"))


def test_the_systems_likeliest_in_the_next_battle_load_first_then_what_their_turns_use(tmp_path, gate):
    services = make_services(tmp_path, [])
    services.registry = CRSRegistry([gate.spec(FakeCatalogCRS("alpha"), family="chatcrs"),
                                     gate.spec(FakeCatalogCRS("beta")), gate.spec(FakeCatalogCRS("gamma"))])
    for n in range(4):  # alpha and beta have met often: gamma is in both under-played pairs
        services.store.save_battle(*_battle("alpha", "beta", n))
    # gamma first; alpha and beta have equal chances and keep the registry's order; alpha (a ChatCRS)
    # reads the user's acts, so the act model loads right after the first pair, before beta
    labels = [step.label for step in plan(services)]
    assert labels == ["system gamma", "system alpha", ACT_MODEL, "system beta"]
    steps = {step.label: step for step in plan(services)}
    assert steps["system alpha"].needs == (ACT_MODEL,) and steps["system beta"].needs == ()


def test_a_waiting_turn_moves_its_system_to_the_front(tmp_path, gate):
    services = gated_services(tmp_path, gate)
    services.warming.hurry("gamma")
    assert services.warming.status()["waiting"] == ["system gamma", "system alpha", "system beta"]
    services.warming.start()
    gate.open()
    assert services.warming.finished.wait(30)
    assert gate.loaded == ["gamma", "alpha", "beta"]


# -- a turn before readiness: the warming line, then the reply --------------------------------------


def _client(url: str):
    from gradio_client import Client

    return Client(url, verbose=False, httpx_kwargs={"timeout": 120})


def _chat(c) -> object:
    c.predict("beta", api_name="/chat_start")
    return c.submit("a space movie please", api_name="/chat_send")


def _battle_page(c) -> object:
    c.predict(api_name="/battle_start")
    return c.submit("a space movie please", api_name="/battle_send_a")


def _study(c) -> object:
    c.predict("pilot", pid("W1"), "browser-of-W1", api_name="/study_enter")
    c.predict(api_name="/study_consent")
    c.predict(api_name="/study_start")
    return c.submit("a space movie please", api_name="/study_send_a")


@pytest.mark.parametrize("page, path", [(_chat, "/"), (_battle_page, "/"), (_study, "/study/")],
                         ids=["chat", "battle", "study"])
def test_a_turn_sent_before_its_model_is_ready_shows_warming_up_then_gets_its_reply(tmp_path, gate, page, path):
    services = gated_services(tmp_path, gate)
    if page is _study:
        publish(services, tasks_per_participant=1)
    with running(build_app(services)) as url:
        services.warming.start()
        job = page(_client(url + path))
        wait_until(lambda: any("warming up" in str(update) for update in job.outputs()))
        assert not job.done()  # the reply waits for the model
        gate.open()
        final = " ".join(str(part) for part in job.result(timeout=60))
    assert "you might enjoy" in final and "warming up" not in final and "problem" not in final
    (stored,) = [d for d in services.store.list_dialogues() if d.num_turns]  # a battle's pane B has none yet
    assert stored.num_turns == 1 and not any(u.error for u in stored.utterances)  # no failed turn recorded
    assert services.store.list_votes() == []  # nothing voided or voted
    services.store.close()


def test_a_turn_that_waits_too_long_is_refused_in_one_line_and_nothing_is_kept(tmp_path, gate):
    services = gated_services(tmp_path, gate, warm_wait_s=0.3)
    services.warming.start()
    dialogue, _ = chat.start_conversation(services, "alpha", "user-1")
    # the status lines are Markdown: the system's title is escaped there
    assert warming_line(services, "alpha") == r"alpha \(ReDial\) is warming up (its model is still loading); " \
                                              "the reply will follow as soon as it is ready."
    with pytest.raises(Refusal) as refused:
        chat.send_message(services, dialogue, "a space movie please", session_key="user-1")
    assert refused.value.text == (r"alpha \(ReDial\) is still warming up after 0.3 s, so your message was not sent. "
                                  "Please send it again in a minute.")
    assert dialogue.num_turns == 0 and services.store.list_dialogues() == []
    gate.open()
    assert services.warming.finished.wait(30)
    assert warming_line(services, "alpha") is None
    dialogue, status = chat.send_message(services, dialogue, "a space movie please", session_key="user-1")
    assert dialogue.num_turns == 1 and services.store.list_dialogues()[0].num_turns == 1
    services.store.close()
