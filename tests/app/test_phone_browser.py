"""The public pages on a 400 px wide phone: nothing overflows sideways, the leaderboard reads (headers on
one line, a legible plot, plurals, no table before there is data), and the conversation limit is announced
before the last message and never silently starts a new conversation. No step shows an error toast.

Uses Debian's Chromium (/usr/bin/chromium) through Playwright (tests/support/browser.py); the screenshots
land in ARENA_SCREENSHOTS when it is set.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "battle"))

from battle_support import FakeCatalogCRS, launch, make_services  # noqa: E402

from tests.support.browser import (  # noqa: E402
    PHONE, assert_no_toasts, chat_send, expect, new_battle, rate_pane, send_in_pane, shoot,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# For each header's text: how many lines it takes (2 or more: the header wraps).
HEADER_LINES = """(table) => [...document.querySelectorAll(table + " th .header")]
    .filter((text) => text.innerText.trim())
    .map((text) => {
        const range = document.createRange();
        range.selectNodeContents(text);
        return [text.innerText.trim(), new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size];
    })"""
PLOT_SCALE = """(plot) => { const img = document.querySelector(plot + " img");
    return img ? img.clientWidth / img.naturalWidth : null; }"""


@pytest.fixture
def url(tmp_path):
    services = make_services(tmp_path, [FakeCatalogCRS("alpha"), FakeCatalogCRS("beta")], max_turns=3)
    demo, address = launch(services)
    yield address
    demo.close()
    services.store.close()


def open_tab(page, name):
    page.get_by_role("tab", name=name).click()


def test_every_public_page_fits_a_phone_and_reads_there(url, browser):
    page = browser.page(PHONE)
    page.goto(url)
    page.locator("#battle-new:enabled").wait_for()
    for tab in ("Battle", "Chat", "Your data"):
        open_tab(page, tab)
        page.wait_for_timeout(300)
        shoot(page, browser.shots, f"{tab.lower().replace(' ', '-')}-empty-400px")
        assert_no_toasts(page, f"opening {tab}")

    open_tab(page, "Leaderboard")
    summary = page.locator("#leaderboard-summary")
    summary.get_by_text("No conversations yet").wait_for()
    expect(summary).to_contain_text("count 0 votes.", use_inner_text=True)
    expect(page.locator("#leaderboard-board")).to_be_hidden()  # no placeholder "1 2 3" headers, no empty plot
    expect(page.locator("#leaderboard-table th")).to_have_count(0)
    shoot(page, browser.shots, "leaderboard-empty-400px")

    open_tab(page, "Battle")
    new_battle(page)
    send_in_pane(page, "A", "A space adventure")
    send_in_pane(page, "B", "Sharks")
    rate_pane(page, "A", "satisfied")
    rate_pane(page, "B", "frustrated")
    page.locator("#battle-vote-b:enabled").click()
    page.locator("#battle-result").get_by_text("System A was").wait_for()
    shoot(page, browser.shots, "battle-voted-400px")

    open_tab(page, "Leaderboard")
    page.locator("#leaderboard-refresh").click()
    summary.get_by_text("2 conversations and 1 battle.").wait_for()
    expect(summary).to_contain_text("count 1 vote.", use_inner_text=True)
    page.locator("#leaderboard-plot img").wait_for()
    headers = page.evaluate(HEADER_LINES, "#leaderboard-table")
    assert len(headers) >= 10 and all(lines == 1 for _, lines in headers), headers
    assert page.evaluate(PLOT_SCALE, "#leaderboard-plot") >= 0.75  # its 10 pt labels stay legible
    shoot(page, browser.shots, "leaderboard-400px")
    assert_no_toasts(page, "the leaderboard")

    open_tab(page, "Chat")
    status = page.locator("#chat-status")
    page.locator("#chat-send").click()  # nothing typed: a line under the box, which stays usable
    status.get_by_text("Please type a message first.").wait_for()
    assert_no_toasts(page, "an empty Send")
    chat_send(page, "A comedy please")
    expect(status).to_contain_text("up to 3 messages", use_inner_text=True)
    chat_send(page, "Something newer?")
    expect(status).to_contain_text("one more message", use_inner_text=True)  # announced before the last one
    chat_send(page, "Thanks")
    status.get_by_text("reached its limit of 3 messages").wait_for()
    expect(page.locator("#chat-msg textarea")).to_be_disabled()
    expect(page.locator("#chat-send")).to_be_disabled()
    expect(page.locator("#chat-chatbot [data-testid='user']")).to_have_count(3)  # no new conversation began
    shoot(page, browser.shots, "chat-limit-400px")
    page.locator("#chat-frustrated").click()
    status.get_by_text("Your feedback (frustrated) was saved").wait_for()
    page.locator("#chat-aspects").wait_for()
    shoot(page, browser.shots, "chat-rated-400px")
    assert_no_toasts(page, "the chat")
