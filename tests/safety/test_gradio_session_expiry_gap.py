"""What Gradio's public session expiry does and does not do, on the real app (gradio 6.31).

These tests pin down why the idle sweep (`webapp.sessions.idle_sessions`) still drops a session's copy of
the page through `Blocks.state_holder` (docs/architecture.md, "Browser sessions and Gradio"):

- the page closing (`Blocks.unload`), the States' time to live and Gradio's own expiry loop leave the
  session's entry in place: only a count of newer sessions (`state_session_capacity`) removes it;
- that count is by recent use, not by whether a page is open: sized to bound memory, it drops a page still
  in use before the pages already closed, and a study worker's page then loses its place.

When one of them fails after a Gradio upgrade, Gradio has closed the gap: read docs/architecture.md and
move the sweep to the public API.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "battle"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "study"))

from battle_support import FakeCatalogCRS, make_services  # noqa: E402
from study_support import publish  # noqa: E402

from tests.support.asgi_server import running  # noqa: E402
from webapp.serve import build_app  # noqa: E402
from webapp.sessions.session_choices import OFFERED  # noqa: E402


def _client(url: str):
    from gradio_client import Client

    return Client(url, verbose=False, httpx_kwargs={"timeout": 60})


def _mounted(app, path: str):
    mounts = (r for r in app.routes if hasattr(getattr(r, "app", None), "get_blocks"))
    return next(r.app for r in mounts if getattr(r, "path", None) == path).get_blocks()


@pytest.fixture
def services(tmp_path):
    # A closed page's grace far beyond the test: the idle sweep leaves every session alone, so what goes
    # is what Gradio itself lets go.
    svc = make_services(tmp_path, [FakeCatalogCRS("alpha"), FakeCatalogCRS("beta")], max_turns=5,
                        closed_session_grace_s=10.0 ** 7, max_study_workers_per_ip=10 ** 6)
    yield svc
    svc.store.close()


def test_a_closed_page_keeps_its_copy_through_gradios_own_expiry(services):
    app = build_app(services)
    public = _mounted(app, "")
    with running(app) as url:
        page = _client(url + "/")
        page.predict("alpha", api_name="/chat_start")
        page.predict("a comedy please", api_name="/chat_send")
        session = page.session_hash
        page.close()  # the tab closes: its heartbeat ends, Gradio runs the `unload` listeners
        holder = public.state_holder
        deadline = time.monotonic() + 30
        while not holder.session_data[session].is_closed and time.monotonic() < deadline:
            time.sleep(0.1)
        assert holder.session_data[session].is_closed  # Gradio saw the page close
        time.sleep(2.5)  # Gradio's expiry loop runs every second
        assert OFFERED.choices(session, None) is None  # the app's own record went with `unload`
        # ... but Gradio's copy of the page is still held, and would be until 10,000 newer sessions came.
        assert session in holder.session_data
        assert holder.capacity == 10_000


def test_the_session_capacity_drops_a_page_in_use_before_the_closed_ones(services):
    """`state_session_capacity` bounds the copies by count, least recently used first: a worker who reads
    a task while other visitors come and go loses the page's place to pages that are already closed."""
    publish(services, quota_per_cell=10 ** 6, tasks_per_participant=1)
    app = build_app(services)
    study = _mounted(app, "/study")
    with running(app) as url:
        holder = study.state_holder
        holder.capacity = 3  # what launch(state_session_capacity=3) would set
        worker = _client(url + "/study/")
        worker.predict("pilot", "a1b2c3d4e5f6a1b2c3d4e5f6", "browser-1", api_name="/study_enter")
        closed = []
        for n in range(3):  # three visitors enter and close their tab while the worker reads
            visitor = _client(url + "/study/")
            visitor.predict("pilot", f"{n:024x}", f"browser-v{n}", api_name="/study_enter")
            closed.append(visitor.session_hash)
            visitor.close()
        deadline = time.monotonic() + 30
        while not all(holder.session_data[s].is_closed for s in closed) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert all(holder.session_data[s].is_closed for s in closed)
        assert worker.session_hash not in holder.session_data  # the open page went, the closed ones stay
        shown = worker.predict(api_name="/study_consent")
        worker.close()
    # One clear line, no traceback; but the worker must open the link again to go on.
    assert any("Please open the study through the link you were given." in str(part) for part in shown)
