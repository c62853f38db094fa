"""A real browser plays one battle, reads the leaderboard and downloads the corpus.

Uses Debian's Chromium (/usr/bin/chromium) through Playwright.
"""

import json
import os
from pathlib import Path

import pytest
from battle_support import FakeCatalogCRS, make_services

CHROMIUM = os.environ.get("ARENA_CHROMIUM", "/usr/bin/chromium")
TIMEOUT_MS = 30_000

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture
def browser_page():
    sync_api = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium not found at {CHROMIUM} (apt-get install chromium, or set ARENA_CHROMIUM)")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM, headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-dev-shm-usage"],
        )
        context = browser.new_context(accept_downloads=True, viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        yield page
        context.close()
        browser.close()


def chat(page, side, text):
    s = side.lower()
    box = page.locator(f"#battle-msg-{s} textarea")
    box.fill(text)
    page.locator(f"#battle-send-{s}").click()


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


def test_browser_battle_leaderboard_and_researcher_download(tmp_path, served, browser_page):
    services = make_services(tmp_path, [FakeCatalogCRS("alpha"), FakeCatalogCRS("beta")])
    page = browser_page
    page.goto(served(services))

    consent = page.locator("#battle-consent")
    consent.wait_for()
    assert "CC BY 4.0" in consent.inner_text() and "personal" in consent.inner_text()

    page.locator("#battle-new").click()
    page.locator("#battle-msg-a textarea:enabled").wait_for()
    chat(page, "A", "I would love a space adventure")
    chat(page, "B", "Something with sharks, please")  # both panes at once
    for s in ("a", "b"):
        page.locator(f"#battle-chat-{s}").get_by_text("you might enjoy").first.wait_for()
        page.locator(f"#battle-items-{s} li").first.wait_for()
    for part in ("title", "chat", "items", "status"):  # names stay hidden until the vote
        for s in ("a", "b"):
            text = page.locator(f"#battle-{part}-{s}").inner_text()
            assert "alpha" not in text and "beta" not in text

    page.locator("#battle-satisfied-a").click()
    page.locator("#battle-status-a").get_by_text("satisfied").wait_for()
    page.locator("#battle-frustrated-b").click()
    page.locator("#battle-vote-panel").wait_for(state="visible")
    page.locator("#battle-vote-comment textarea").fill("A understood me better")
    page.locator("#battle-vote-a").click()
    page.locator("#battle-result").get_by_text("System A was").wait_for()

    (vote,) = services.store.list_votes()
    assert vote.comment == "A understood me better" and vote.choice == "A"
    assert vote.crs_a in page.locator("#battle-title-a").inner_text()

    page.get_by_role("tab", name="Leaderboard").click()
    page.locator("#leaderboard-summary").get_by_text("2 conversations and 1 battles").wait_for()
    table_text = page.locator("#leaderboard-table").inner_text()
    assert vote.crs_a in table_text and vote.crs_b in table_text
    assert "1 / 1" in table_text  # each system: one satisfied or frustrated rating out of one

    # The public page has no raw download: that is in the researcher app.
    assert page.get_by_role("tab", name="Download").count() == 0
    page.goto(served(services, admin=True))
    by_id = {r["conversation ID"]: r for r in download_dialogues(page)}
    assert {vote.dialogue_a, vote.dialogue_b} <= set(by_id)
    rec_a = by_id[vote.dialogue_a]
    assert rec_a["metadata"]["vote"]["comment"] == "A understood me better"
    assert rec_a["metadata"]["vote"]["result"] == "win"
    assert rec_a["metadata"]["sentiment"] == "satisfied"
    assert by_id[vote.dialogue_b]["metadata"]["sentiment"] == "frustrated"
    assert rec_a["conversation"][0]["utterance"] == "I would love a space adventure"
