"""A reload returns to the tab in use with unsent text kept: the tab a participant opened, and what they
typed in a message box and did not send (Chat, Battle A and B, the box to both), come back after a reload,
from the browser's own session storage (per page: another tab of the same browser starts clean). Once sent,
the text is no longer kept, and none of it reaches the server before it is sent. At 400 px and 1300 px;
the screenshots are checked for sideways overflow.

Uses Debian's Chromium (/usr/bin/chromium) through Playwright (tests/support/browser.py).
"""

from __future__ import annotations

import pytest

from tests.support.browser import (
    PHONE, WIDE, assert_no_toasts, chat_send, expect, new_battle, send_in_pane, shoot, wait_for_replies,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]
VIEWPORTS = [pytest.param(PHONE, id="400px"), pytest.param(WIDE, id="1300px")]
# Whether the page keeps `text` for the box `box` (it looks a few times a second).
KEPT = """([box, text]) => Object.keys(sessionStorage)
    .some((key) => key.endsWith("#" + box) && sessionStorage.getItem(key) === text)"""
NOTHING_KEPT = """(box) => !Object.keys(sessionStorage).some((key) => key.endsWith("#" + box))"""


@pytest.fixture
def app(two_system_app):
    return two_system_app


def type_unsent(page, box: str, text: str) -> None:
    page.locator(f"#{box} textarea").fill(text)
    page.wait_for_function(KEPT, arg=[box, text])


def selected(page, tab: str) -> None:
    expect(page.get_by_role("tab", name=tab)).to_have_attribute("aria-selected", "true")


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_a_reload_returns_to_the_tab_in_use_with_unsent_text_kept(app, browser, viewport):
    services, address = app
    width = f"{viewport['width']}px"
    page = browser.page(viewport)
    page.on("dialog", lambda dialog: dialog.accept())  # leaving asks first (test_leaving_browser.py)
    page.goto(address)
    new_battle(page)
    send_in_pane(page, "A", "Something with sharks")
    type_unsent(page, "battle-msg-b", "Unsent to B")
    type_unsent(page, "battle-msg-both", "Unsent to both")
    page.get_by_role("tab", name="Chat").click()
    chat_send(page, "A comedy for tonight")
    type_unsent(page, "chat-msg", "Unsent in the chat")

    page.reload()
    selected(page, "Chat")
    page.locator("#chat-chatbot").get_by_text("A comedy for tonight", exact=True).wait_for()
    expect(page.locator("#chat-msg textarea")).to_have_value("Unsent in the chat")
    shoot(page, browser.shots, f"reload-chat-{width}")
    page.get_by_role("tab", name="Battle").click()
    page.locator("#battle-chat-a").get_by_text("Something with sharks", exact=True).wait_for()
    expect(page.locator("#battle-msg-b textarea")).to_have_value("Unsent to B")
    expect(page.locator("#battle-msg-both textarea")).to_have_value("Unsent to both")
    expect(page.locator("#battle-msg-a textarea")).to_have_value("")
    shoot(page, browser.shots, f"reload-battle-{width}")
    said = [u.text for d in services.store.list_dialogues() for u in d.user_turns()]
    assert sorted(said) == ["A comedy for tonight", "Something with sharks"]  # drafts stay in the browser

    # What came back is what is sent (Gradio has it, not only the page); once sent it is not kept.
    page.locator("#battle-send-b").click()
    wait_for_replies(page, "#battle-chat-b", 1)
    page.locator("#battle-chat-b").get_by_text("Unsent to B", exact=True).wait_for()
    page.wait_for_function(NOTHING_KEPT, arg="battle-msg-b")
    page.get_by_role("tab", name="Chat").click()
    page.locator("#chat-send").click()
    page.locator("#chat-chatbot").get_by_text("Unsent in the chat", exact=True).wait_for()
    wait_for_replies(page, "#chat-chatbot", 2)
    page.wait_for_function(NOTHING_KEPT, arg="chat-msg")

    page.get_by_role("tab", name="Leaderboard").click()
    page.reload()
    selected(page, "Leaderboard")
    page.get_by_role("tab", name="Chat").click()
    page.locator("#chat-msg textarea:enabled").wait_for()  # the conversation resumed, its box empty
    page.locator("#chat-chatbot").get_by_text("Unsent in the chat", exact=True).wait_for()
    expect(page.locator("#chat-msg textarea")).to_have_value("")
    page.get_by_role("tab", name="Battle").click()
    page.locator("#battle-msg-b textarea:enabled").wait_for()
    expect(page.locator("#battle-msg-b textarea")).to_have_value("")
    expect(page.locator("#battle-msg-both textarea")).to_have_value("Unsent to both")
    assert_no_toasts(page, "the reloads")

    other = browser.page(viewport, context=page.context)  # another tab of the same browser: its own page
    other.on("dialog", lambda dialog: dialog.accept())
    other.goto(address)
    other.locator("#battle-msg-a textarea:enabled").wait_for()  # the same participant's battle
    selected(other, "Battle")
    other.wait_for_timeout(1000)
    expect(other.locator("#battle-msg-both textarea")).to_have_value("")
