"""A researcher starts a simulated run in Chromium and watches it: the dialogue under way shows its turns
as they come, and once the run is over the run picker says so ("finished 1/1"), never "running 0/1".

Uses Debian's Chromium (/usr/bin/chromium) through Playwright (tests/support/browser.py).
"""

import re
import sys
from pathlib import Path

import pytest
from sim_fakes import AttributeCRS, SlowCRS, fake_llm, simulator_responder, spec

from arena.runtime.config import Settings
from arena.store import Store
from crs.registry import CRSRegistry
from tests.support.browser import assert_no_toasts, expect, shoot
from webapp.services import Services

sys.path.insert(0, str(Path(__file__).parent.parent / "battle"))

from battle_support import launch  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_a_run_shows_its_dialogue_turn_by_turn_and_its_true_state(tmp_path, view, browser):
    settings = Settings(db_path=tmp_path / "arena.sqlite3", max_turns=6)
    services = Services(settings=settings, store=Store(settings.db_path), llm=fake_llm(simulator_responder()),
                        registry=CRSRegistry([spec("slow", SlowCRS(AttributeCRS(view), 0.8))]))
    demo, url = launch(services, admin=True)
    try:
        page = browser.page()
        page.goto(url)
        page.locator("#evaluate-n input").fill("1")
        page.locator("#evaluate-turns input").fill("5")
        page.locator("#evaluate-start").click()
        progress = page.locator("#evaluate-progress")
        progress.get_by_text("Under way (1)").wait_for()
        progress.get_by_text(re.compile(r"[1-9]\d* turns? so far")).wait_for()  # the row moves on, turn by turn
        shoot(page, browser.shots, "evaluate-under-way")
        progress.get_by_text("finished").wait_for(timeout=60_000)
        page.wait_for_function(
            "() => document.querySelector('#evaluate-run input').value.includes('finished 1/1')")
        expect(progress).not_to_contain_text("Under way", use_inner_text=True)
        assert_no_toasts(page, "the run")
        assert services.store.list_dialogues()[0].num_turns >= 2
    finally:
        demo.close()
        services.close()
