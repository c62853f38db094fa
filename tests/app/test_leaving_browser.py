"""Leaving a conversation under way asks first: "New battle" in the middle of a battle, another system in
Chat's dropdown while a conversation is under way, and closing or reloading the page ask for confirmation;
cancelling keeps everything as it was. Nothing asks when nothing is under way (no message sent yet, or the
conversation rated, the battle voted). At 400 px and 1300 px; the screenshots are checked for sideways
overflow.

Uses Debian's Chromium (/usr/bin/chromium) through Playwright (tests/support/browser.py).
"""

from __future__ import annotations

import pytest

from tests.support.browser import (
    PHONE, WIDE, assert_no_toasts, chat_send, expect, new_battle, rate_pane, send_in_pane, shoot,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]
VIEWPORTS = [pytest.param(PHONE, id="400px"), pytest.param(WIDE, id="1300px")]
SETTLE_MS = 1500  # long enough for a click that was let through to have changed the page


class Questions:
    """The page's questions (confirm, beforeunload), answered as `leave` says, and counted."""

    def __init__(self, page):
        self.asked: list[str] = []
        self.leave = False
        page.on("dialog", self.answer)

    def answer(self, dialog) -> None:
        self.asked.append(dialog.type)
        if self.leave:
            dialog.accept()
        else:
            dialog.dismiss()


@pytest.fixture
def app(two_system_app):
    return two_system_app


def pick_system(page, label: str) -> None:
    page.locator("#chat-system input").click()
    page.get_by_role("option", name=label).click()


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_new_battle_and_leaving_the_page_ask_while_a_battle_is_under_way(app, browser, viewport):
    services, address = app
    width = f"{viewport['width']}px"
    page = browser.page(viewport)
    questions = Questions(page)
    page.goto(address)
    new_battle(page)
    page.locator("#battle-msg-a textarea").fill("typed, not sent")
    page.locator("#battle-new").click()  # no message sent yet: nothing to lose, nothing asked
    expect(page.locator("#battle-msg-a textarea")).to_have_value("")  # the new battle's panes are in
    assert questions.asked == []

    send_in_pane(page, "A", "Something with sharks")
    page.locator("#battle-msg-b textarea").fill("typed for B")
    page.locator("#battle-new").click()  # asked, and cancelled: the battle stays as it was
    page.wait_for_timeout(SETTLE_MS)
    assert questions.asked == ["confirm"]
    expect(page.locator("#battle-chat-a")).to_contain_text("Something with sharks", use_inner_text=True)
    expect(page.locator("#battle-msg-b textarea")).to_have_value("typed for B")
    shoot(page, browser.shots, f"leave-battle-cancelled-{width}")

    def battle_of(text: str) -> str:
        (said,) = [d for d in services.store.list_dialogues() if text in [u.text for u in d.user_turns()]]
        return said.metadata["battle_id"]

    with pytest.raises(Exception, match="Timeout"):  # the reload asks too; cancelled, the page stays
        page.reload(timeout=3000)
    assert questions.asked == ["confirm", "beforeunload"]
    expect(page.locator("#battle-msg-b textarea")).to_have_value("typed for B")
    send_in_pane(page, "B", "And for my kids?")  # the same battle goes on
    assert battle_of("And for my kids?") == battle_of("Something with sharks")

    questions.leave = True
    page.locator("#battle-new").click()  # asked, and agreed: a new battle
    expect(page.locator("#battle-chat-a")).not_to_contain_text("Something with sharks", use_inner_text=True)
    assert questions.asked == ["confirm", "beforeunload", "confirm"]

    send_in_pane(page, "A", "A western")
    send_in_pane(page, "B", "A musical")
    rate_pane(page, "A", "satisfied")
    rate_pane(page, "B", "frustrated")
    page.locator("#battle-vote-a:enabled").click()
    page.locator("#battle-result").get_by_text("System A was").wait_for()
    new_battle(page)  # voted: nothing asked
    page.reload()  # nothing under way: the page goes without a question
    page.locator("#battle-new:enabled").wait_for()
    assert questions.asked == ["confirm", "beforeunload", "confirm"]
    assert_no_toasts(page, "leaving battles")


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_another_system_in_chat_asks_while_a_conversation_is_under_way(app, browser, viewport):
    services, address = app
    width = f"{viewport['width']}px"
    page = browser.page(viewport)
    questions = Questions(page)
    page.goto(address)
    page.get_by_role("tab", name="Chat").click()
    page.locator("#chat-system input:enabled").wait_for()
    pick_system(page, "beta (ReDial)")  # no message sent yet: nothing asked
    page.locator("#chat-status").get_by_text("New conversation with beta").wait_for()
    assert questions.asked == []

    chat_send(page, "A comedy for tonight")
    pick_system(page, "alpha (ReDial)")  # asked, and cancelled: the conversation and its system stay
    expect(page.locator("#chat-system input")).to_have_value("beta (ReDial)")
    page.wait_for_timeout(SETTLE_MS)
    assert questions.asked == ["confirm"]
    expect(page.locator("#chat-chatbot")).to_contain_text("A comedy for tonight", use_inner_text=True)
    shoot(page, browser.shots, f"leave-chat-cancelled-{width}")
    chat_send(page, "Something newer?")  # the same conversation goes on
    (chat,) = services.store.list_dialogues()
    assert chat.crs_id == "beta" and chat.num_turns == 2

    page.locator("#chat-new").click()  # "New conversation" asks as well
    page.wait_for_timeout(SETTLE_MS)
    assert questions.asked == ["confirm", "confirm"]
    expect(page.locator("#chat-chatbot")).to_contain_text("Something newer?", use_inner_text=True)

    questions.leave = True
    pick_system(page, "alpha (ReDial)")  # agreed: a new conversation with the system picked
    page.locator("#chat-status").get_by_text("New conversation with alpha").wait_for()
    expect(page.locator("#chat-chatbot")).not_to_contain_text("A comedy for tonight", use_inner_text=True)
    assert questions.asked == ["confirm", "confirm", "confirm"]
    chat_send(page, "A thriller")
    page.locator("#chat-satisfied:enabled").click()
    page.locator("#chat-status").get_by_text("Your feedback (satisfied) was saved").wait_for()
    pick_system(page, "beta (ReDial)")  # rated: nothing asked
    page.locator("#chat-status").get_by_text("New conversation with beta").wait_for()
    expect(page.locator("#chat-chatbot")).not_to_contain_text("A thriller", use_inner_text=True)
    assert questions.asked == ["confirm", "confirm", "confirm"]
    assert [d.crs_id for d in sorted(services.store.list_dialogues(), key=lambda d: d.created_at)] == [
        "beta", "alpha"]
    shoot(page, browser.shots, f"leave-chat-rated-{width}")
    assert_no_toasts(page, "leaving chats")
