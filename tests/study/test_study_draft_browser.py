"""A study worker's unsent text survives a reload: what is typed in a task's message box and not sent comes
back after a reload (kept in the browser's session storage only), is what goes when sent, and is no longer
kept once sent. At 400 px and 1300 px; the screenshots are checked for sideways overflow.

Uses Debian's Chromium (/usr/bin/chromium) through Playwright (tests/support/browser.py)."""

from __future__ import annotations

import pytest

from battle_support import FakeCatalogCRS, make_services
from study_support import pid, publish
from tests.support.asgi_server import running
from tests.support.browser import PHONE, WIDE, assert_no_toasts, expect, shoot, wait_for_replies
from webapp.serve import build_app

pytestmark = [pytest.mark.browser, pytest.mark.slow]
VIEWPORTS = [pytest.param(PHONE, id="400px"), pytest.param(WIDE, id="1300px")]
KEPT = """([box, text]) => Object.keys(sessionStorage)
    .some((key) => key.endsWith("#" + box) && sessionStorage.getItem(key) === text)"""
NOTHING_KEPT = """(box) => !Object.keys(sessionStorage).some((key) => key.endsWith("#" + box))"""


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_a_workers_unsent_text_survives_a_reload(tmp_path, browser, viewport):
    width = f"{viewport['width']}px"
    services = make_services(tmp_path, [FakeCatalogCRS("alpha"), FakeCatalogCRS("beta")], max_turns=6)
    publish(services, systems=["alpha", "beta"], min_user_turns=1)
    try:
        with running(build_app(services)) as url:
            page = browser.page(viewport)
            ids = f"PROLIFIC_PID={pid('5f1a2b')}&SESSION_ID={pid('se1')}"
            page.goto(f"{url}/?study=pilot&{ids}", wait_until="load")
            page.locator("#study-agree").click()
            page.locator("#study-start").click()
            page.locator("#study-task-head").get_by_text("Task 1 of 2").wait_for()
            page.locator("#study-msg-a textarea").fill("A film about sharks, please")
            page.wait_for_function(KEPT, arg=["study-msg-a", "A film about sharks, please"])

            page.reload(wait_until="load")
            page.locator("#study-task-head").get_by_text("Task 1 of 2").wait_for()
            expect(page.locator("#study-msg-a textarea")).to_have_value("A film about sharks, please")
            shoot(page, browser.shots, f"study-draft-reloaded-{width}")
            assert not [u for d in services.store.list_dialogues() for u in d.utterances]  # still in the browser

            page.locator("#study-send-a").click()
            wait_for_replies(page, "#study-chat-a", 1)
            page.locator("#study-chat-a").get_by_text("A film about sharks, please", exact=True).wait_for()
            page.wait_for_function(NOTHING_KEPT, arg="study-msg-a")
            page.reload(wait_until="load")
            page.locator("#study-chat-a").get_by_text("A film about sharks, please", exact=True).wait_for()
            page.wait_for_timeout(1000)  # time enough for a kept copy to come back, were there one
            expect(page.locator("#study-msg-a textarea")).to_have_value("")
            shoot(page, browser.shots, f"study-draft-sent-{width}")
            assert_no_toasts(page, "the study reloads")
    finally:
        services.store.close()
