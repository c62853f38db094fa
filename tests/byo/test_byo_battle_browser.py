"""Chromium plays a battle between an external system (over HTTP, from a systems file) and a
built-in-like one; the external server then fails, the pane says the battle will not count, and
the leaderboard leaves the battle out. Debian's Chromium through Playwright, as the battle tests."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from byo_support import write_systems

sys.path.insert(0, str(Path(__file__).parent.parent / "battle"))

from battle_support import FakeCatalogCRS, fake_spec, launch  # noqa: E402

from arena.runtime.config import Settings  # noqa: E402
from arena.llm import FakeProvider, LLMClient  # noqa: E402
from arena.store import Store  # noqa: E402
from crs.external.specs import external_specs  # noqa: E402
from crs.registry import CRSRegistry  # noqa: E402
from tests.support.browser import expect  # noqa: E402
from webapp.services import Services  # noqa: E402

CHROMIUM = os.environ.get("ARENA_CHROMIUM", "/usr/bin/chromium")
pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture
def page():
    sync_api = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium not found at {CHROMIUM} (apt-get install chromium, or set ARENA_CHROMIUM)")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True,
                                    args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        page.set_default_timeout(30_000)
        yield page
        context.close()
        browser.close()


def test_a_browser_battle_between_an_external_and_a_built_in_system(tmp_path, faulty_server, small_redial, page):
    path = write_systems(tmp_path / "systems.yaml", {
        "name": "remote", "display_name": "Remote", "dataset": "redial", "kind": "http",
        "url": faulty_server.url, "timeout_s": 2})
    settings = Settings(db_path=tmp_path / "arena.sqlite3", cache_dir=tmp_path / "cache", llm_provider="fake",
                        systems_file=path, min_battle_s=0.0, burst_votes=10_000)
    specs = [fake_spec(FakeCatalogCRS("builtin"))] + external_specs(settings, catalog_loader=lambda _: small_redial)
    services = Services(settings=settings, store=Store(settings.db_path), llm=LLMClient(FakeProvider(default="ok")),
                        registry=CRSRegistry(specs))
    demo, url = launch(services)
    try:
        page.goto(url)
        page.locator("#battle-new").click()
        page.locator("#battle-msg-a textarea:enabled").wait_for()
        for side in ("a", "b"):
            page.locator(f"#battle-msg-{side} textarea").fill("a scary space film please")
            page.locator(f"#battle-send-{side}").click()
        for side in ("a", "b"):
            page.locator(f"#battle-items-{side} li").first.wait_for()
        answered = page.locator("#battle-chat-a, #battle-chat-b").filter(has_text="Try Alien")
        expect(answered).to_have_count(1)  # the external system's reply, in one pane
        external = "a" if page.locator("#battle-chat-a").filter(has_text="Try Alien").count() else "b"
        expect(page.locator(f"#battle-items-{external}")).to_contain_text("Alien (1979)", use_inner_text=True)

        faulty_server.mode = "5xx"
        page.locator(f"#battle-msg-{external} textarea").fill("anything else?")
        page.locator(f"#battle-send-{external}").click()
        page.locator(f"#battle-status-{external}").get_by_text("this battle will not count").wait_for()
        # the detail stays in the record
        expect(page.locator(f"#battle-chat-{external}")).not_to_contain_text("HTTP 503", use_inner_text=True)

        page.locator("#battle-frustrated-a").click()
        page.locator("#battle-status-a").get_by_text("frustrated").wait_for()
        page.locator("#battle-satisfied-b").click()
        page.locator("#battle-vote-panel").wait_for(state="visible")
        page.locator("#battle-vote-b").click()
        page.locator("#battle-result").get_by_text("System A was").wait_for()

        (vote,) = services.store.list_votes()
        assert {vote.crs_a, vote.crs_b} == {"remote", "builtin"}
        page.get_by_role("tab", name="Leaderboard").click()
        page.locator("#leaderboard-summary").get_by_text("0 battles").wait_for()
    finally:
        demo.close()
        services.store.close()
