"""A battle study's known-answer task in Chromium, as a recruited worker meets it: a battle like any other
(two panes, the vote), where one side answers the request with fitting films and the other talks of
something else; the worker who votes for the fitting side is right, and only the study's own battle casts
a vote. Uses Debian's Chromium through Playwright."""

from __future__ import annotations

import pytest

from arena.crowd.known_answers import known_answer_accuracy
from study_support import pid, publish
from tests.support.asgi_server import running
from tests.support.browser import assert_no_toasts, wait_for_replies
from webapp.serve import build_app
from webapp.sessions import study as flow

pytestmark = [pytest.mark.browser, pytest.mark.slow]
GOOD_OPENING = "Since you asked for"  # how the clearly good scripted system begins a reply with films


def battle_both(page, text: str) -> dict[str, str]:
    """Chat in both panes and call both satisfied; each side's reply as the page shows it."""
    shown = {}
    for side in ("a", "b"):
        page.locator(f"#study-msg-{side} textarea").fill(text)
        page.locator(f"#study-send-{side}").click()
        wait_for_replies(page, f"#study-chat-{side}", 1)
        shown[side] = page.locator(f"#study-chat-{side}").inner_text()
        page.locator(f"#study-satisfied-{side}").click()
        page.locator(f"#study-verdict-{side}").get_by_text("satisfied").wait_for()
    return shown


def test_a_known_answer_battle_in_the_browser(services, browser):
    publish(services, mode="battle", systems=["alpha", "beta"], tasks_per_participant=1,
            known_answers={"count": 1, "positions": [1], "min_accuracy": 1.0})
    with running(build_app(services)) as url:
        page = browser.page()
        page.goto(f"{url}/study/?study=pilot&PROLIFIC_PID={pid('w-known')}", wait_until="load")
        page.locator("#study-agree").click()
        page.locator("#study-start").click()
        page.locator("#study-task-head").get_by_text("Task 1 of 2").wait_for()
        shown = battle_both(page, "a scary horror film please")
        (good,) = [side for side, text in shown.items() if GOOD_OPENING in text]
        (other,) = {"a", "b"} - {good}
        assert "Anyway, you could watch" in shown[other]  # the off-topic side, on the other pane
        page.locator("#study-choice").get_by_label(f"System {good.upper()} was better").check()
        page.locator("#study-submit").click()
        page.locator("#study-task-head").get_by_text("Task 2 of 2").wait_for()
        battle_both(page, "a funny comedy please")
        page.locator("#study-choice").get_by_label("A tie").check()
        page.locator("#study-submit").click()
        page.locator("#study-done").get_by_text("CODE-7731").wait_for()
        assert_no_toasts(page, "a known-answer battle")
    (worker,) = services.store.list_participants("pilot")
    assert flow.completed(worker) and known_answer_accuracy(worker) == 1.0 and not worker.flags
    (vote,) = services.store.list_votes()  # the study's own battle only
    assert {vote.crs_a, vote.crs_b} == {"alpha", "beta"} and vote.choice == "tie"
