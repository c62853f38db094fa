"""Battle's one message box for both systems, in Chromium at 400 px and 1300 px: the message shows in both
panes at once and each system answers in its own pane, both at the same time; a side that cannot take it
(still answering, rated) is named in one line under the box while the other side gets it; the two
separate boxes go on working beside it. The screenshots are checked for sideways overflow.

Uses Debian's Chromium (/usr/bin/chromium) through Playwright (tests/support/browser.py).
"""

import pytest
from battle_support import FakeCatalogCRS, make_services

from tests.support.browser import (
    PHONE, WIDE, assert_no_toasts, expect, new_battle, rate_pane, send_in_pane, shoot, wait_for_replies,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]
VIEWPORTS = [pytest.param(PHONE, id="400px"), pytest.param(WIDE, id="1300px")]


def said(services, side: str) -> list[str]:
    (dialogue,) = [d for d in services.store.list_dialogues() if d.metadata["side"] == side]
    return [u.text for u in dialogue.user_turns()]


def send_to_both(page, text: str) -> None:
    page.locator("#battle-msg-both textarea").fill(text)
    page.locator("#battle-send-both").click()


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_one_box_sends_to_both_systems_beside_the_two_boxes(tmp_path, served, browser, viewport):
    width = f"{viewport['width']}px"
    # A second and a half per reply, so the page can be seen while both systems write.
    services = make_services(tmp_path, [FakeCatalogCRS(name, delay_s=1.5) for name in ("alpha", "beta")])
    page = browser.page(viewport)
    page.on("dialog", lambda dialog: dialog.accept())
    page.goto(served(services))
    expect(page.locator("#battle-msg-both textarea")).to_be_disabled()  # no battle yet
    new_battle(page)

    send_to_both(page, "A space adventure, please")
    for s in ("a", "b"):  # the message in both panes at once, both systems writing at the same time
        page.locator(f"#battle-chat-{s}").get_by_text("A space adventure, please", exact=True).wait_for()
    page.locator("#battle-chat-a .typing-indicator").wait_for()
    expect(page.locator("#battle-chat-b .typing-indicator")).to_be_visible()
    expect(page.locator("#battle-send-both")).to_be_disabled()
    shoot(page, browser.shots, f"battle-both-writing-{width}")
    for s in ("a", "b"):
        wait_for_replies(page, f"#battle-chat-{s}", 1)
    expect(page.locator("#battle-send-both")).to_be_enabled()
    expect(page.locator("#battle-msg-both textarea")).to_have_value("")
    expect(page.locator("#battle-both-status")).to_have_text("")

    send_in_pane(page, "A", "Something older?", wait=False)  # System A writing its reply...
    page.locator("#battle-chat-a .typing-indicator").wait_for()
    send_to_both(page, "And for my kids?")  # ...so only System B gets this one
    status = page.locator("#battle-both-status")
    status.get_by_text("System A did not get this message").wait_for()
    expect(status).to_contain_text("System A is still answering", use_inner_text=True)
    page.locator("#battle-chat-b").get_by_text("And for my kids?", exact=True).wait_for()
    wait_for_replies(page, "#battle-chat-a", 2)
    wait_for_replies(page, "#battle-chat-b", 2)
    shoot(page, browser.shots, f"battle-both-one-side-{width}")
    assert said(services, "A") == ["A space adventure, please", "Something older?"]
    assert said(services, "B") == ["A space adventure, please", "And for my kids?"]

    rate_pane(page, "B", "frustrated")
    send_to_both(page, "Anything funny?")
    status.get_by_text("System B did not get this message").wait_for()
    expect(status).to_contain_text("System B has ended", use_inner_text=True)
    wait_for_replies(page, "#battle-chat-a", 3)
    assert said(services, "A")[-1] == "Anything funny?" and len(said(services, "B")) == 2
    rate_pane(page, "A", "satisfied")  # neither side can take a message now: the box closes
    expect(page.locator("#battle-msg-both textarea")).to_be_disabled()
    expect(page.locator("#battle-send-both")).to_be_disabled()
    page.locator("#battle-vote-a:enabled").click()
    page.locator("#battle-result").get_by_text("System A was").wait_for()
    expect(page.locator("#battle-send-both")).to_be_disabled()
    shoot(page, browser.shots, f"battle-both-voted-{width}")
    assert_no_toasts(page, "messages to both systems")
