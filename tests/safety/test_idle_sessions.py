"""Idle browser sessions are forgotten: Gradio's per-session state goes (the server-issued
identity is derived, not kept), the store keeps what was stored, and the same browser carries on afterwards."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "battle"))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from battle_support import FakeCatalogCRS, make_services  # noqa: E402
from soak_sessions import call  # noqa: E402

from tests.support.asgi_server import running  # noqa: E402
from webapp.serve import build_app  # noqa: E402
from webapp.sessions.idle_sessions import IdleSessionReaper  # noqa: E402


@pytest.fixture
def services(tmp_path):
    svc = make_services(tmp_path, [FakeCatalogCRS("alpha"), FakeCatalogCRS("beta")], max_turns=5)
    yield svc
    svc.store.close()


def idle_connections(store, tries: int = 50):
    """The engine's pool and the connection records idle in it. A background job (boards, scoring) may hold
    the pool's only connection at the moment of asking, so use one and ask again until one is idle."""
    for _ in range(tries):
        with store.read() as conn:
            conn.exec_driver_sql("SELECT 1")
        pool = store.sql_engine().pool
        idle = list(pool._pool.queue)  # QueuePool's idle connection records
        if idle:
            return pool, idle
        time.sleep(0.05)
    return pool, []


def test_idle_sessions_are_forgotten_and_nothing_stored_is_lost(services):
    import httpx

    app = build_app(services)
    public = next(r.app for r in app.routes if getattr(r, "path", None) == "").get_blocks()
    with running(app) as url, httpx.Client(base_url=url, timeout=60) as client:
        config = client.get("/config").json()
        for session in ("s-one", "s-two", "s-three"):
            call(client, config, "chat_start", ["alpha"], session)
            call(client, config, "chat_send", ["a comedy please"], session)
        holder = public.state_holder
        assert {"s-one", "s-two", "s-three"} <= set(holder.session_data)
        time.sleep(2.0)
        # Used just now: kept. The margin (1.5 s idle limit) is for a loaded machine, where this call and
        # the sweep below can be a second apart.
        call(client, config, "chat_start", ["beta"], "s-fresh")
        guarded = len(services.turn_guard._entries)
        assert guarded >= 3  # open conversations are remembered by the turn guard
        seen = {}

        def release():  # what is idle right before the store lets its connections go
            seen["pool"], seen["idle"] = idle_connections(services.store)
            services.store.release_idle_connections()

        reaper = IdleSessionReaper([public], idle_s=1.5, sweeps=[services.turn_guard.forget_idle],
                                   releases=[release])
        assert reaper.sweep() == 3
        idle_pool, idle = seen["pool"], seen["idle"]
        assert idle  # SQLite connections, each with a page cache
        # Closed once the sessions were forgotten. The app's background jobs may hold or open a connection
        # at any moment (in the engine's new pool): the ones idle at the sweep are what must be gone.
        assert services.store.sql_engine().pool is not idle_pool
        assert all(record.dbapi_connection is None for record in idle)
        assert len(services.turn_guard._entries) <= guarded - 3
        assert set(holder.session_data) == {"s-fresh"}
        assert len(services.store.list_dialogues()) == 3  # stored conversations stay
        # The forgotten browser carries on: a new session state, a conversation started afresh.
        call(client, config, "chat_start", ["alpha"], "s-one")
        call(client, config, "chat_send", ["and a thriller"], "s-one")
        assert len(services.store.list_dialogues()) == 4


def test_the_idle_limit_is_never_shorter_than_a_slow_turn(tmp_path):
    svc = make_services(tmp_path, [FakeCatalogCRS("alpha")], session_idle_s=60, turn_timeout_s=120)
    try:
        reaper = build_app(svc).state.idle_sessions
        assert reaper.idle_s == 240
        assert reaper.releases == [svc.store.release_idle_connections]  # the app's sweep lets SQLite's caches go
    finally:
        svc.store.close()


def test_a_closed_pages_session_is_forgotten_after_the_grace_and_an_open_one_is_kept(tmp_path):
    """Two visitors through gradio_client, which keeps a page's heartbeat open as a browser does: the one
    whose page closed (its heartbeat ended) is forgotten once the grace has passed, long before the idle
    hour; the one still open is kept."""
    from gradio_client import Client

    svc = make_services(tmp_path, [FakeCatalogCRS("alpha")], max_turns=5, turn_timeout_s=5,
                        closed_session_grace_s=10)
    try:
        app = build_app(svc)
        reaper = app.state.idle_sessions
        assert reaper.idle_s == 3600 and reaper.closed_grace_s == 10
        public = next(r.app for r in app.routes if getattr(r, "path", None) == "").get_blocks()
        with running(app) as url:
            closing = Client(url + "/", verbose=False, httpx_kwargs={"timeout": 60})
            staying = Client(url + "/", verbose=False, httpx_kwargs={"timeout": 60})
            for client in (closing, staying):
                client.predict("alpha", api_name="/chat_start")
                client.predict("a comedy please", api_name="/chat_send")
            sessions = set(public.state_holder.session_data)
            assert {closing.session_hash, staying.session_hash} <= sessions
            closing.close()  # the tab is closed: its heartbeat stream ends
            deadline = time.monotonic() + 60
            while closing.session_hash in public.state_holder.session_data and time.monotonic() < deadline:
                time.sleep(0.5)
            assert closing.session_hash not in public.state_holder.session_data
            assert staying.session_hash in public.state_holder.session_data
            assert reaper.pages.closed_for(0) == set()  # nothing is kept about it either
            chat = staying.predict("and a thriller", api_name="/chat_send")[0]  # the open page goes on
            assert "thriller" in str(chat)
            staying.close()
        assert len(svc.store.list_dialogues()) == 2
    finally:
        svc.store.close()


def test_the_reaper_sweeps_as_a_job_of_the_scheduler_until_stopped():
    swept = []
    reaper = IdleSessionReaper([], idle_s=60, every_s=0.05, sweeps=[swept.append])
    reaper.start()
    try:
        deadline = time.monotonic() + 20
        while len(swept) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(swept) >= 3 and set(swept) == {60.0}
        assert reaper._job is not None and reaper._job.active
    finally:
        reaper.stop()
    time.sleep(0.2)  # a sweep already handed to its thread may still land
    count = len(swept)
    time.sleep(0.3)
    assert len(swept) == count and not reaper._job.active


def _open_heartbeat(client, session: str):
    """A page's heartbeat stream, open until the returned stream is closed (the tab closing)."""
    stream = client.stream("GET", f"/gradio_api/heartbeat/{session}")
    response = stream.__enter__()
    next(response.iter_lines())  # the first ALIVE: the server counts the page as open
    return stream


def test_a_closed_page_is_forgotten_at_the_next_sweep_unless_its_turn_is_still_being_answered(tmp_path):
    """Two pages close; one of them has a reply still being written. The quiet one goes at the next sweep
    (no wait of twice the turn timeout); the busy one stays until its turn ends, then goes too."""
    import threading

    import httpx

    svc = make_services(tmp_path, [FakeCatalogCRS("alpha", delay_s=2.0)], max_turns=5, turn_timeout_s=60,
                        closed_session_grace_s=10)
    try:
        app = build_app(svc)
        reaper = app.state.idle_sessions
        assert reaper.closed_grace_s == 10  # the setting itself, not raised to twice the turn timeout
        reaper.closed_grace_s = 0.0  # the sweep is called by hand below, right after the pages closed
        public = next(r.app for r in app.routes if getattr(r, "path", None) == "").get_blocks()
        with running(app) as url, httpx.Client(base_url=url, timeout=60) as client, \
                httpx.Client(base_url=url, timeout=60) as pages:
            config = client.get("/config").json()
            for session in ("s-quiet", "s-busy"):
                call(client, config, "chat_start", ["alpha"], session)
            beats = {s: _open_heartbeat(pages, s) for s in ("s-quiet", "s-busy")}
            answered = {}
            turn = threading.Thread(target=lambda: answered.update(
                call(httpx.Client(base_url=url, timeout=60), config, "chat_send", ["a comedy please"], "s-busy")))
            turn.start()
            deadline = time.monotonic() + 30
            while not svc.turns_in_flight.busy("s-busy") and time.monotonic() < deadline:
                time.sleep(0.02)
            assert svc.turns_in_flight.busy("s-busy") and not svc.turns_in_flight.busy("s-quiet")
            for stream in beats.values():  # both tabs close
                stream.__exit__(None, None, None)
            while reaper.pages.closed_for(0) != {"s-quiet", "s-busy"} and time.monotonic() < deadline:
                time.sleep(0.02)
            assert reaper.pages.closed_for(0) == {"s-quiet", "s-busy"}
            assert svc.turns_in_flight.busy("s-busy")  # the reply is still being written
            assert reaper.sweep() == 1
            sessions = set(public.state_holder.session_data)
            assert "s-quiet" not in sessions and "s-busy" in sessions
            turn.join(30)
            assert answered and not svc.turns_in_flight.busy("s-busy")
            assert reaper.sweep() == 1  # its turn over, the closed page goes at the next sweep
            assert "s-busy" not in public.state_holder.session_data
        stored = svc.store.list_dialogues()
        assert len(stored) == 1 and "comedy" in str(stored[0].utterances)  # the turn was stored whole
    finally:
        svc.store.close()


def test_a_turn_that_never_returned_stops_keeping_its_session_after_twice_the_turn_timeout():
    from webapp.sessions.turns_in_flight import TurnsInFlight

    turns = TurnsInFlight(stale_s=0.2)
    with turns.turn("s-stuck"), turns.turn(None):
        assert turns.busy("s-stuck")
        time.sleep(0.3)
        assert not turns.busy("s-stuck")
    assert not turns.busy("s-stuck") and turns._started == {}
