"""One browser, one pseudonymous participant: a reload resumes the work under way, "Your data" downloads or
deletes exactly that participant's dialogues, and another browser sees none of it.

Also: the public pages show participants no developer detail (no systems' status table, no checkpoint
commands, no version strings), and the researcher app shows that table instead.
Uses Debian's Chromium (/usr/bin/chromium) through Playwright (tests/support/browser.py).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "battle"))

from battle_support import FakeCatalogCRS, launch, make_services  # noqa: E402

from arena.dialogue import Score  # noqa: E402
from tests.support.browser import (  # noqa: E402
    PHONE, assert_no_toasts, chat_send, expect, new_battle, rate_pane, send_in_pane, shoot,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture
def app(tmp_path):
    services = make_services(tmp_path, [FakeCatalogCRS("alpha"), FakeCatalogCRS("beta"), FakeCatalogCRS("gamma")],
                             unavailable=["gamma"], max_turns=4)
    demos = []

    def url(admin=False):
        demo, address = launch(services, admin=admin)
        demos.append(demo)
        return address

    yield services, url
    for demo in demos:
        demo.close()
    services.store.close()


def participant_id(page) -> str:
    page.get_by_role("tab", name="Your data").click()
    shown = page.locator("#yourdata-id code")
    expect(shown).to_have_text(re.compile(r"\S"))  # filled in, not an empty box mid-render
    return shown.inner_text()


def test_a_reload_resumes_the_battle_and_the_chat_under_one_participant(app, browser):
    services, url = app
    address = url()
    page = browser.page()
    page.goto(address)
    new_battle(page)
    send_in_pane(page, "A", "Something with sharks")
    page.get_by_role("tab", name="Chat").click()
    chat_send(page, "A comedy for tonight")
    first_id = participant_id(page)

    page.reload()
    # The page comes back on the tab in use (Your data, where the id was read); the battle waits in its tab.
    expect(page.get_by_role("tab", name="Your data")).to_have_attribute("aria-selected", "true")
    page.get_by_role("tab", name="Battle").click()
    page.locator("#battle-notice").get_by_text("Welcome back").wait_for()
    expect(page.locator("#battle-chat-a")).to_contain_text("Something with sharks", use_inner_text=True)
    expect(page.locator("#battle-satisfied-a")).to_be_enabled()  # the pane is as it was: ready to rate
    send_in_pane(page, "B", "And for my kids?")  # the same battle goes on
    rate_pane(page, "A", "satisfied")
    rate_pane(page, "B", "frustrated")
    page.locator("#battle-vote-a:enabled").click()
    page.locator("#battle-result").get_by_text("System A was").wait_for()
    expect(page.locator("#battle-notice")).not_to_contain_text("Welcome back")  # the battle it spoke of is over
    page.get_by_role("tab", name="Chat").click()
    page.locator("#chat-chatbot").get_by_text("A comedy for tonight", exact=True).wait_for()
    chat_send(page, "Something lighter?")
    assert participant_id(page) == first_id
    assert_no_toasts(page, "the reload")

    later = browser.page(context=page.context)  # another visit from the same browser
    later.goto(address)
    assert participant_id(later) == first_id
    stored = services.store.list_dialogues()
    assert len(stored) == 3 and len({d.user.id for d in stored}) == 1
    assert stored[0].user.id.startswith("p-") and first_id not in stored[0].user.id  # shown: a pseudonym
    chat = next(d for d in stored if d.metadata["source"] == "chat")
    assert [u.text for u in chat.user_turns()] == ["A comedy for tonight", "Something lighter?"]

    stranger = browser.page()  # another browser: another participant, nothing resumed
    stranger.goto(address)
    assert participant_id(stranger) != first_id
    stranger.locator("#yourdata-counts").get_by_text("no stored conversations").wait_for()
    stranger.get_by_role("tab", name="Battle").click()
    stranger_chat = stranger.locator("#battle-chat-a")
    expect(stranger_chat).not_to_contain_text("Something with sharks", use_inner_text=True)


def test_your_data_downloads_and_deletes_only_ones_own_dialogues(app, browser):
    services, url = app
    address = url()
    page = browser.page(PHONE)
    page.goto(address)
    new_battle(page)
    send_in_pane(page, "A", "space")
    send_in_pane(page, "B", "sharks")
    rate_pane(page, "A", "satisfied")
    rate_pane(page, "B", "frustrated")
    page.locator("#battle-vote-tie:enabled").click()
    page.locator("#battle-result").get_by_text("System A was").wait_for()
    new_battle(page)  # a second battle, left before its vote
    send_in_pane(page, "A", "a western")

    other = browser.page()
    other.goto(address)
    other.get_by_role("tab", name="Chat").click()
    chat_send(other, "someone else's chat")

    shown = participant_id(page)
    counts = page.locator("#yourdata-counts")
    counts.get_by_text("0 chat conversations and 3 battle conversations").wait_for()  # refreshed on opening
    expect(counts).to_contain_text("1 battle conversation of a battle still waiting for your vote",
                                   use_inner_text=True)
    shoot(page, browser.shots, "your-data-400px")
    page.locator("#yourdata-download").click()
    link = page.locator("#yourdata-file a[download]").first
    link.wait_for()
    with page.expect_download() as info:
        link.click()
    records = [json.loads(line) for line in Path(info.value.path()).read_text().splitlines()]
    assert len(records) == 2  # the voted battle; the one under way would name its systems
    assert {r["user"]["id"] for r in records} == {shown}
    assert "someone else's chat" not in json.dumps(records)

    page.locator("#yourdata-delete").click()
    page.locator("#yourdata-confirm-no").click()
    page.locator("#yourdata-status").get_by_text("Nothing was deleted").wait_for()
    page.locator("#yourdata-delete").click()
    page.locator("#yourdata-confirm-yes").click()
    # The second battle's B side was never written in: it is deleted too, and the line counts it as the log does.
    page.locator("#yourdata-status").get_by_text(
        "Deleted 4 conversations (1 of them empty: a battle side you never wrote in) and 1 vote.").wait_for()
    assert_no_toasts(page, "deleting one's data")
    remaining = services.store.list_dialogues()
    assert [d.user_turns()[0].text for d in remaining] == ["someone else's chat"]
    (entry, *_) = services.store.moderation_entries()
    assert entry["action"] == "delete" and entry["actor"] == "participant"
    logged = [json.loads(e["detail"]) for e in services.store.moderation_entries() if e["actor"] == "participant"]
    assert sum(d["dialogues"] for d in logged) == 4  # the log counts what the line says
    page.get_by_role("tab", name="Battle").click()  # the battle under way is gone too
    expect(page.locator("#battle-chat-a")).not_to_contain_text("a western", use_inner_text=True)
    expect(page.locator("#battle-send-a")).to_be_disabled()


def test_participants_see_no_developer_detail_and_researchers_see_the_systems(app, browser):
    services, url = app
    page = browser.page()
    page.goto(url())
    page.get_by_role("tab", name="Chat").click()
    chat_send(page, "A comedy please")
    chat_send(page, "Thanks!")
    page.locator("#chat-satisfied").click()
    page.locator("#chat-status").get_by_text("Your feedback").wait_for()
    (dialogue,) = services.store.list_dialogues()
    services.store.save_scores(dialogue.dialogue_id, {
        "srrr": Score(value=0.5, scorer="srrr", version="acts 1/offline-acts/13+pairs-v1",
                      details={"rounds": 2, "successful_rounds": 1}),
        "rdl": Score(value=0.25, scorer="rdl", version="acts 1/offline-acts/13+pairs-v1",
                     details={"accepted": 1, "length": 4}),
    })
    page.locator("#chat-scores-box").get_by_text("Your conversation's scores").click()
    page.locator("#chat-scores-refresh").click()
    page.locator("#chat-scores").get_by_text("1 of 2 rounds of recommendations").wait_for()
    body = page.locator("body")
    for detail in ("python -m crs", "checkpoint", "offline-acts", "pairs-v1", "gamma", "unavailable",
                   "CoRE factors", "srrr"):
        expect(body, detail).not_to_contain_text(detail, use_inner_text=True)
    expect(page.locator("#chat-core-plot")).to_be_hidden()  # no CoRE scores: no empty plot
    expect(page.locator("#chat-system input")).to_have_value("alpha (ReDial)")  # systems by their names
    assert_no_toasts(page, "the chat")

    page.goto(url(admin=True))
    page.get_by_role("tab", name="Systems").click()
    table = page.locator("#systems-status")
    for shown in ("gamma", "make models", "no checkpoint"):
        expect(table).to_contain_text(shown, use_inner_text=True)


def test_a_message_sent_just_before_a_reload_is_kept_with_its_reply(tmp_path, browser):
    services = make_services(tmp_path, [FakeCatalogCRS("alpha", delay_s=1.5), FakeCatalogCRS("beta", delay_s=1.5)])
    demo, address = launch(services)
    try:
        page = browser.page()
        page.goto(address)
        new_battle(page)
        send_in_pane(page, "A", "Anything with dragons?", wait=False)
        page.locator("#battle-chat-a .typing-indicator").wait_for()
        page.reload()  # while System A is still answering
        page.locator("#battle-notice").get_by_text("Welcome back").wait_for()
        chat = page.locator("#battle-chat-a")
        chat.get_by_text("Anything with dragons?", exact=True).wait_for()
        chat.get_by_text("you might enjoy").wait_for()
        (a,) = [d for d in services.store.list_dialogues() if d.metadata["side"] == "A"]
        assert [u.role.value for u in a.utterances] == ["USER", "AGENT"]
    finally:
        demo.close()
        services.store.close()
