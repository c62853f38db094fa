"""A real browser fills the optional aspect form (and a reply's relevance) in a battle, then finds the
ratings, pseudonymised, in the downloaded corpus.

Uses Debian's Chromium (/usr/bin/chromium) through Playwright, like test_battle_browser.py.
"""

import json

import pytest
from battle_support import FakeCatalogCRS, make_services
from test_battle_browser import download_text

from tests.support.browser import assert_no_toasts, expect, new_battle, rate_pane, send_in_pane

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def pick(page, side, aspect, label):
    page.locator(f"#battle-{side}-aspect-{aspect}").get_by_text(label, exact=True).click()


def test_browser_battle_aspect_ratings_reach_the_download(tmp_path, served, browser):
    services = make_services(tmp_path, [FakeCatalogCRS("alpha"), FakeCatalogCRS("beta")])
    page = browser.page()
    page.goto(served(services))
    new_battle(page)
    send_in_pane(page, "A", "I would love a space adventure")
    send_in_pane(page, "B", "Something with sharks, please")

    # Relevance of System A's reply, from the feedback menu on the message itself.
    page.locator("#battle-chat-a button[aria-label='Feedback']").first.click()
    page.locator("#battle-chat-a .extra-feedback-option", has_text="Relevance 3").click()
    page.locator("#battle-status-a").get_by_text("Saved: Relevance 3").wait_for()

    expect(page.locator("#battle-a-aspects")).to_be_hidden()  # the form comes only after the verdict
    rate_pane(page, "A", "satisfied")
    page.locator("#battle-a-aspects").wait_for(state="visible")
    pick(page, "a", "understanding", "2 fully")
    pick(page, "a", "efficiency", "1 yes")
    pick(page, "a", "overall_impression", "3 good")  # the other two aspects are left open
    page.locator("#battle-a-aspects-save").click()
    page.locator("#battle-a-aspects-note").get_by_text("3 of 5 aspects rated and saved").wait_for()
    page.locator("#battle-a-aspects").wait_for(state="hidden")

    rate_pane(page, "B", "frustrated")
    page.locator("#battle-b-aspects").wait_for(state="visible")
    page.locator("#battle-b-aspects-skip").click()  # never required
    page.locator("#battle-b-aspects").wait_for(state="hidden")
    page.locator("#battle-vote-a:enabled").click()
    page.locator("#battle-result").get_by_text("System A was").wait_for()
    assert_no_toasts(page, "the aspect form")
    (vote,) = services.store.list_votes()

    page.goto(served(services, admin=True))  # the raw download is in the researcher app
    text = download_text(page)
    by_id = {r["conversation ID"]: r for r in map(json.loads, text.splitlines())}
    rec_a, rec_b = by_id[vote.dialogue_a], by_id[vote.dialogue_b]
    (rating,) = rec_a["metadata"]["ratings"]
    assert rating["values"] == {"understanding": 2, "efficiency": 1, "overall_impression": 3}
    assert rating["rater_kind"] == "human" and rating["form_version"] == "aspects_v1"
    assert rating["rater_id"] == rec_a["user"]["id"]  # the pseudonym, never the session id
    assert "session-" not in text
    (reply,) = [u for u in rec_a["conversation"] if u.get("ratings")]
    assert reply["participant"] == "AGENT" and reply["ratings"][0]["values"] == {"relevance": 3}
    assert "ratings" not in rec_b["metadata"]  # skipped: nothing stored, nothing invented
    assert rec_b["metadata"]["sentiment"] == "frustrated"
