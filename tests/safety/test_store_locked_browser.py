"""A new visitor while the database is locked past its busy timeout, in a real browser: the controls that
wait for the participant stay disabled and the line beside them says why; once the lock is gone, a reload
lets the visitor in and they play. The lock is real (another connection holds BEGIN IMMEDIATE), taken before the first
visitor ever came, so identifying them needs a write the store cannot make."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent / "battle"))

from battle_support import FakeCatalogCRS, make_services  # noqa: E402
from test_store_locked import BUSY_S, HeldLock  # noqa: E402

from tests.support.asgi_server import running  # noqa: E402
from tests.support.browser import assert_no_toasts, expect, shoot, send_in_pane  # noqa: E402
from webapp.serve import build_app  # noqa: E402
from webapp.ui.parts.participant import IDENTIFY_BUSY  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_a_new_visitor_on_a_locked_database_is_told_why_new_battle_is_disabled(tmp_path, browser, monkeypatch):
    monkeypatch.setattr("arena.store.engine.BUSY_TIMEOUT_S", BUSY_S)
    services = make_services(tmp_path, [FakeCatalogCRS("alpha"), FakeCatalogCRS("beta")], max_turns=5)
    try:
        with running(build_app(services)) as url:  # the server as `python app.py` builds it
            lock = HeldLock(services.settings.db_path)
            try:
                page = browser.page()
                page.goto(url, wait_until="load")
                expect(page.locator("#battle-notice")).to_contain_text(IDENTIFY_BUSY, timeout=60_000)
                expect(page.locator("#battle-new")).to_be_disabled()
                page.get_by_role("tab", name="Chat").click()
                expect(page.locator("#chat-status")).to_contain_text(IDENTIFY_BUSY)
                assert_no_toasts(page, "on a locked database")
                shoot(page, browser.shots, "locked-database-new-visitor")
            finally:
                lock.release()
            page.reload(wait_until="load")
            expect(page.locator("#battle-new")).to_be_enabled(timeout=60_000)
            expect(page.locator("#battle-notice")).not_to_contain_text(IDENTIFY_BUSY)
            page.get_by_role("tab", name="Battle").click()  # the reload came back on the Chat tab
            page.locator("#battle-new").click()  # and the visitor plays
            send_in_pane(page, "a", "a space movie please")
            assert len(services.store.list_dialogues()) == 2
    finally:
        services.store.close()
