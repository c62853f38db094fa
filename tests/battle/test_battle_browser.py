"""A real browser plays one battle, reads the leaderboard and downloads the corpus.

Uses Debian's Chromium (/usr/bin/chromium) through Playwright (tests/support/browser.py).
"""

import json
from pathlib import Path

import pytest
from battle_support import FakeCatalogCRS, make_services

from tests.support.browser import (
    PHONE, assert_no_toasts, expect, new_battle, rate_pane, send_in_pane, shoot, wait_for_replies,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def download_text(page, name="dialogues.jsonl"):
    """Prepare the Download tab's files and fetch one of them through the browser; its text."""
    page.get_by_role("tab", name="Download").click()
    page.locator("#download-prepare").click()
    link = page.locator(f'#download-files a[download="{name}"]')
    link.wait_for()
    with page.expect_download() as info:
        link.click()
    return Path(info.value.path()).read_text(encoding="utf-8")


def download_dialogues(page):
    return [json.loads(line) for line in download_text(page).splitlines()]


def test_browser_battle_leaderboard_and_researcher_download(tmp_path, served, browser):
    # A second per reply, so the page can be seen between sending and the answer.
    services = make_services(tmp_path, [FakeCatalogCRS("alpha", delay_s=1.0), FakeCatalogCRS("beta", delay_s=1.0)])
    page = browser.page()
    page.goto(served(services))

    consent = page.locator("#battle-consent")
    consent.wait_for()
    expect(consent).to_contain_text("CC BY 4.0", use_inner_text=True)
    expect(consent).to_contain_text("personal", use_inner_text=True)

    new_battle(page)
    # The message shows at once, with a typing indicator, and the pane cannot send again meanwhile.
    page.locator("#battle-msg-a textarea").fill("I would love a space adventure")
    page.locator("#battle-send-a").click()
    chat_a = page.locator("#battle-chat-a")
    chat_a.get_by_text("I would love a space adventure").wait_for()
    chat_a.locator(".typing-indicator").wait_for()
    expect(page.locator("#battle-send-a")).to_be_disabled()
    expect(page.locator("#battle-msg-a textarea")).to_be_disabled()
    expect(page.locator("#battle-satisfied-a")).to_be_disabled()
    send_in_pane(page, "B", "Something with sharks, please", wait=False)  # both panes at once
    for s in ("a", "b"):
        wait_for_replies(page, f"#battle-chat-{s}", 1)
        page.locator(f"#battle-items-{s} li").first.wait_for()
    expect(page.locator("#battle-send-a")).to_be_enabled()
    for part in ("title", "chat", "items", "status"):  # names stay hidden until the vote
        for s in ("a", "b"):
            for name in ("alpha", "beta"):
                expect(page.locator(f"#battle-{part}-{s}")).not_to_contain_text(name, use_inner_text=True)

    expect(page.locator("#battle-vote-a")).to_be_disabled()  # the vote waits for both ratings
    rate_pane(page, "A", "satisfied")
    expect(page.locator("#battle-satisfied-a")).to_be_disabled()
    expect(page.locator("#battle-frustrated-a")).to_be_disabled()
    expect(page.locator("#battle-vote-a")).to_be_disabled()
    rate_pane(page, "B", "frustrated")
    page.locator("#battle-vote-a:enabled").wait_for()
    page.locator("#battle-vote-comment textarea").fill("A understood me better")
    page.locator("#battle-vote-a").click()
    page.locator("#battle-result").get_by_text("System A was").wait_for()
    assert_no_toasts(page, "the battle")

    (vote,) = services.store.list_votes()
    assert vote.comment == "A understood me better" and vote.choice == "A"
    # The reveal sits at the top of each pane: display name, then one line about the system.
    for side, crs in (("a", vote.crs_a), ("b", vote.crs_b)):
        expect(page.locator(f"#battle-title-{side}")).to_contain_text(f"{crs} (ReDial)", use_inner_text=True)
        reveal = page.locator(f"#battle-reveal-{side}")
        expect(reveal).to_contain_text(f"A test system called {crs}", use_inner_text=True)
        title_box, reveal_box = page.locator(f"#battle-title-{side}").bounding_box(), reveal.bounding_box()
        chat_box = page.locator(f"#battle-chat-{side}").bounding_box()
        assert title_box["y"] < reveal_box["y"] < chat_box["y"]
    for control in ("send-a", "satisfied-b", "vote-b"):
        expect(page.locator(f"#battle-{control}")).to_be_disabled()
    page.set_viewport_size(PHONE)
    shoot(page, browser.shots, "battle-revealed-400px")

    page.set_viewport_size({"width": 1400, "height": 1000})
    page.get_by_role("tab", name="Leaderboard").click()
    page.locator("#leaderboard-summary").get_by_text("2 conversations and 1 battle.").wait_for()
    table = page.locator("#leaderboard-table")
    expect(table).to_contain_text(f"{vote.crs_a} (ReDial)", use_inner_text=True)
    expect(table).to_contain_text(f"{vote.crs_b} (ReDial)", use_inner_text=True)
    # each system: one satisfied or frustrated rating out of one
    expect(table).to_contain_text("1 / 1", use_inner_text=True)

    # The public page has no raw download: that is in the researcher app.
    expect(page.get_by_role("tab", name="Download")).to_have_count(0)
    page.goto(served(services, admin=True))
    by_id = {r["conversation ID"]: r for r in download_dialogues(page)}
    assert {vote.dialogue_a, vote.dialogue_b} <= set(by_id)
    rec_a = by_id[vote.dialogue_a]
    assert rec_a["metadata"]["vote"]["comment"] == "A understood me better"
    assert rec_a["metadata"]["vote"]["result"] == "win"
    assert rec_a["metadata"]["sentiment"] == "satisfied"
    assert by_id[vote.dialogue_b]["metadata"]["sentiment"] == "frustrated"
    assert rec_a["conversation"][0]["utterance"] == "I would love a space adventure"
