"""A page behind the store, in a browser: the participant's data deleted from another tab while a Chat
conversation or a battle is shown. The next message says "changed elsewhere", the page shows what is
stored (nothing), and the message stays in its box. The Chat page names every message it sends (the id
its first message claims the conversation's start with, `webapp.sessions.first_message`).

Uses Debian's Chromium (/usr/bin/chromium) through Playwright (tests/support/browser.py).
"""

from __future__ import annotations

import pytest

from tests.support.browser import assert_no_toasts, chat_send, expect, new_battle, send_in_pane
from webapp.sessions.idempotent_sends import CLIENT_MESSAGE_IDS
from webapp.sessions.turn_step import CHANGED_ELSEWHERE

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture
def app(two_system_app):
    return two_system_app


def delete_from_another_tab(browser, page, address: str) -> None:
    """The same participant (same browser) deletes their data in a second tab."""
    other = browser.page(context=page.context)
    other.goto(address)
    other.get_by_role("tab", name="Your data").click()
    other.locator("#yourdata-delete").click()
    other.locator("#yourdata-confirm-yes").click()
    other.locator("#yourdata-status").get_by_text("Deleted").wait_for()


def test_chat_names_its_messages_and_keeps_the_message_of_a_page_behind(app, browser):
    services, address = app
    page = browser.page()
    page.goto(address)
    page.get_by_role("tab", name="Chat").click()
    chat_send(page, "A comedy for tonight")
    chat_send(page, "Something older")
    (stored,) = services.store.list_dialogues()
    ids = stored.metadata[CLIENT_MESSAGE_IDS]
    assert len(ids) == len(set(ids)) == 2 and all(i.startswith("page-") for i in ids)

    delete_from_another_tab(browser, page, address)
    page.locator("#chat-msg textarea").fill("And one more")
    page.locator("#chat-send").click()
    page.locator("#chat-status").get_by_text(CHANGED_ELSEWHERE).wait_for()
    expect(page.locator("#chat-msg textarea")).to_have_value("And one more")
    expect(page.locator("#chat-chatbot")).not_to_contain_text("A comedy for tonight", use_inner_text=True)
    assert services.store.list_dialogues() == []
    assert_no_toasts(page, "a message on a deleted conversation")


def test_a_battle_page_behind_the_store_is_told_so_and_drawn_as_stored(app, browser):
    services, address = app
    page = browser.page()
    page.goto(address)
    page.get_by_role("tab", name="Battle").click()
    new_battle(page)
    send_in_pane(page, "A", "Something with sharks")

    delete_from_another_tab(browser, page, address)
    page.locator("#battle-msg-a textarea").fill("One more, please")
    page.locator("#battle-send-a").click()
    # Not "Press New battle first": the line of a page behind, and both panes as stored (no battle).
    page.locator("#battle-notice").get_by_text(CHANGED_ELSEWHERE).wait_for()
    expect(page.locator("#battle-chat-a")).not_to_contain_text("Something with sharks", use_inner_text=True)
    expect(page.locator("#battle-msg-a textarea")).to_have_value("One more, please")
    expect(page.locator("#battle-new")).to_be_enabled()
    assert services.store.list_dialogues() == []
    assert_no_toasts(page, "a message on a deleted battle")
