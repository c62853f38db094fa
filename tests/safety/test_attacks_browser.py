"""Attacks seen in a real browser (Debian's Chromium through Playwright, tests/support/browser.py), against a
running app on loopback: markup stored as a system id, a label flag and a vote comment renders as text on the
researcher pages, never as an element; the public Leaderboard's category picker re-renders the board."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent / "battle"))

from battle_support import FakeCatalogCRS, make_services, serving_apps  # noqa: E402
from test_attacks_app import store_injected  # noqa: E402

from tests.support.browser import assert_no_toasts, expect, shoot  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture
def running():
    with serving_apps() as serve:
        yield serve


def test_stored_markup_shows_as_text_on_the_researcher_pages(tmp_path, running, browser):
    services = make_services(tmp_path, [FakeCatalogCRS("beta")])
    store_injected(services)
    page = browser.page()
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    requests = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(running(services, admin=True), wait_until="load")
    page.get_by_role("tab", name="Moderation").click()
    page.get_by_role("button", name="Flagged votes").click()
    page.get_by_role("button", name="Flagged satisfaction labels").click()
    page.locator("#moderation-refresh").click()
    flags = page.locator("#moderation-flags")
    # (Gradio's table keeps hidden copies of its cells for measuring; attached is enough to read them)
    flags.get_by_text("attacker.example", exact=False).first.wait_for(state="attached")
    page.locator("#moderation-label-flags").get_by_text("attacker.example", exact=False).first.wait_for(
        state="attached")
    expect(page.locator('img[src*="attacker.example"]')).to_have_count(0)  # text, not an element
    expect(flags).to_contain_text("<img")  # shown literally, for the researcher to see
    assert not dialogs and not [u for u in requests if "attacker.example" in u]
    assert_no_toasts(page, "after refreshing the moderation tables")
    shoot(page, browser.shots, "researcher-escaped-markup")


def test_the_category_picker_redraws_the_board(tmp_path, running, browser):
    from test_leaderboard_categories_app import SYSTEMS, store_battle

    services = make_services(tmp_path, [FakeCatalogCRS(n) for n in SYSTEMS], leaderboard_min_votes=2)
    for choice in ("A", "B"):
        store_battle(services.store, "kbrd_redial", "unicrs_redial", choice)
    store_battle(services.store, "kbrd_redial", "barcor_opendialkg", "A", turns=5)
    page = browser.page()
    page.goto(running(services), wait_until="load")
    page.get_by_role("tab", name="Leaderboard").click()
    summary = page.locator("#leaderboard-summary")
    summary.get_by_text("3 battles").wait_for()
    table = page.locator("#leaderboard-table")
    table.get_by_text(services.registry.title("barcor_opendialkg")).first.wait_for(state="attached")
    page.locator("#leaderboard-category input").click()
    page.get_by_role("option", name="Dialogue length: Conversations of more than 3 user turns").click()
    summary.get_by_text("1 battle.").wait_for()
    # one long battle: below the minimum of 2 on this board, so no rating shows
    summary.get_by_text("fewer than 2 battles in this category").wait_for()
    table.get_by_text("needs 2 votes").first.wait_for(state="attached")
    expect(table).not_to_contain_text(services.registry.title("unicrs_redial"))
    assert_no_toasts(page, "after picking a category")
    shoot(page, browser.shots, "leaderboard-category")
