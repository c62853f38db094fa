"""On a phone-sized page (400 px), every refusal of a battle is a status line by its control, never a toast.

The participant's input survives each refusal: a message too long stays in its
box, the optional aspect form keeps its answers, the battle under way stays
when "New battle" is refused, and the vote's comment stays when the vote is.
Controls that do not apply are disabled. Each step is screenshotted after
checking the page does not overflow sideways.
"""

import pytest
from battle_support import FakeCatalogCRS, make_services

from tests.support.browser import (
    PHONE, assert_no_toasts, expect, new_battle, rate_pane, send_in_pane, shoot,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_refusals_are_status_lines_and_nothing_entered_is_lost(tmp_path, served, browser):
    services = make_services(tmp_path, [FakeCatalogCRS("alpha"), FakeCatalogCRS("beta")], max_message_chars=200,
                             max_battles_per_user=1, max_votes_per_user=0)
    page = browser.page(PHONE)
    page.goto(served(services))
    page.locator("#battle-new").wait_for()
    shots = browser.shots

    # Before a battle nothing but "New battle" can be used.
    for control in ("send-a", "satisfied-a", "frustrated-b"):
        expect(page.locator(f"#battle-{control}")).to_be_disabled()
    expect(page.locator("#battle-msg-a textarea")).to_be_disabled()
    expect(page.locator("#battle-vote-panel")).to_be_hidden()
    shoot(page, shots, "battle-before-400px")

    new_battle(page)
    page.locator("#battle-vote-panel").wait_for()
    hint = page.locator("#battle-vote-hint")
    expect(hint).to_contain_text("opens once you have rated both", use_inner_text=True)
    expect(page.locator("#battle-vote-a")).to_be_disabled()
    expect(page.locator("#battle-satisfied-a")).to_be_disabled()

    page.locator("#battle-send-a").click()  # an empty message
    page.locator("#battle-status-a").get_by_text("Please type a message first.").wait_for()
    assert_no_toasts(page, "an empty Send")
    page.locator("#battle-msg-a textarea").click()  # the box is still usable

    too_long = "a film please " * 20
    page.locator("#battle-msg-b textarea").fill(too_long)
    page.locator("#battle-msg-b textarea").press("Enter")
    page.locator("#battle-status-b").get_by_text("the limit is 200").wait_for()
    expect(page.locator("#battle-msg-b textarea")).to_have_value(too_long)  # kept, to be shortened
    assert_no_toasts(page, "a message too long")
    shoot(page, shots, "battle-refused-message-400px")

    send_in_pane(page, "A", "A space adventure, please")
    rate_pane(page, "A", "satisfied")
    expect(page.locator("#battle-satisfied-a")).to_be_disabled()
    expect(page.locator("#battle-send-a")).to_be_disabled()
    page.locator("#battle-a-aspects").wait_for()
    page.locator("#battle-a-aspect-understanding").get_by_text("2 fully", exact=True).click()
    page.locator("#battle-a-aspect-efficiency").get_by_text("1 yes", exact=True).click()

    # Refusals elsewhere leave the half-filled form alone.
    page.locator("#battle-msg-b textarea").fill("")
    page.locator("#battle-send-b").click()
    page.locator("#battle-status-b").get_by_text("Please type a message first.").wait_for()
    page.once("dialog", lambda dialog: dialog.accept())  # yes, leave this battle (it asks first)...
    page.locator("#battle-new").click()  # ...but the limit of one battle per hour refuses a new one
    page.locator("#battle-notice").get_by_text("limit of 1 battle per").wait_for()
    assert_no_toasts(page, "New battle over the limit")
    expect(page.locator("#battle-a-aspect-understanding input[value='2']")).to_be_checked()
    expect(page.locator("#battle-a-aspect-efficiency input[value='1']")).to_be_checked()
    # the battle stays
    expect(page.locator("#battle-chat-a")).to_contain_text("A space adventure, please", use_inner_text=True)
    shoot(page, shots, "battle-refused-new-battle-400px")
    page.locator("#battle-a-aspects-save").click()
    page.locator("#battle-a-aspects-note").get_by_text("2 of 5 aspects rated and saved").wait_for()

    send_in_pane(page, "B", "Sharks!")
    rate_pane(page, "B", "frustrated")
    page.locator("#battle-vote-a:enabled").wait_for()
    expect(hint).to_contain_text("which system was better", ignore_case=True, use_inner_text=True)
    page.locator("#battle-vote-comment textarea").fill("A was kinder")
    page.locator("#battle-vote-b").click()  # no votes allowed here: refused by the vote
    page.locator("#battle-result").get_by_text("limit of 0 votes").wait_for()
    expect(page.locator("#battle-vote-comment textarea")).to_have_value("A was kinder")
    assert_no_toasts(page, "a vote over the limit")
    shoot(page, shots, "battle-refused-vote-400px")
    assert services.store.list_votes() == []
    stored = {d.metadata["side"]: d for d in services.store.list_dialogues()}
    assert stored["A"].ratings[0].values == {"understanding": 2, "efficiency": 1}
    assert [u.text for u in stored["A"].user_turns()] == ["A space adventure, please"]
