"""A paid study in Chromium, at a phone's 400 px: two good workers, one who fails the attention check (their
place goes to the next worker), one who uses a good worker's id from another session (one line, nothing of
the first one's conversation), a late worker told plainly that the study is full; the researcher's preview,
pause, resume and close, and the payment sheet. Every page is screenshot and checked for sideways scrolling.
Uses Debian's Chromium through Playwright."""

from __future__ import annotations

import csv

import pytest

from study_support import RESEARCHER_PASSWORD, pid, publish
from tests.support.asgi_server import running
from tests.support.browser import (
    PHONE, assert_no_toasts, expect, open_researcher_tab, shoot, wait_for_replies,
)
from webapp.leaderboard.study_results import payment_sheet
from webapp.protection.admin_auth import admin_checker
from webapp.serve import build_app
from webapp.sessions import study as flow

pytestmark = [pytest.mark.browser, pytest.mark.slow]
PASSWORD = RESEARCHER_PASSWORD
CHECK = {"kind": "instructed", "after_task": 1, "question": "Choose Often to show you read this.",
         "options": ["Never", "Sometimes", "Often"], "answer": "Often"}


@pytest.fixture
def services(researcher_services):
    return researcher_services


def worker_link(url: str, worker: str, session: str) -> str:
    """The link as Prolific fills it in for the worker named `worker` (Prolific-format ids for names)."""
    return (f"{url}/study/?study=pilot&PROLIFIC_PID={pid(worker)}&STUDY_ID={pid('prolific-1')}"
            f"&SESSION_ID={pid(session)}")


def take_task(page, text: str, answer: str, shots=None, name: str = "") -> None:
    page.locator("#study-agree").click()
    page.locator("#study-start").click()
    page.locator("#study-task-head").get_by_text("Task 1 of 1").wait_for()
    page.locator("#study-msg-a textarea").fill(text)
    page.locator("#study-send-a").click()
    wait_for_replies(page, "#study-chat-a", 1)
    # The verdict may change until the task is submitted; both buttons look alike.
    page.locator("#study-frustrated-a").click()
    page.locator("#study-verdict-a").get_by_text("frustrated").wait_for()
    page.locator("#study-satisfied-a").click()
    page.locator("#study-verdict-a").get_by_text("satisfied").wait_for()
    page.locator("#study-attention").get_by_label(answer).check()
    if shots is not None:
        shoot(page, shots, name)
    page.locator("#study-submit").click()


def test_a_paid_study_with_good_flagged_impersonating_and_late_workers(services, browser, tmp_path):
    publish(services, systems=["alpha", "beta"], tasks_per_participant=1, quota_per_cell=1, attention_check=CHECK)
    shots = browser.shots
    with running(build_app(services)) as url:
        good = browser.page(PHONE)
        good.goto(worker_link(url, "5f-good-1", "sess-1"), wait_until="load")
        good.locator("#study-consent").get_by_text("You agree").wait_for()
        shoot(good, shots, "paid-consent-400px")
        take_task(good, "A film about the sea, please", "Often", shots, "paid-task-400px")
        good.locator("#study-done").get_by_text("CODE-7731").wait_for()
        shoot(good, shots, "paid-done-400px")

        # Another browser with the good worker's id but another platform session: one line, no conversation.
        thief = browser.page(PHONE)
        thief.goto(worker_link(url, "5f-good-1", "sess-forged"), wait_until="load")
        thief.locator("#study-notice").get_by_text("another browser or platform session").wait_for()
        expect(thief.locator("body")).not_to_contain_text("A film about the sea")
        expect(thief.locator("body")).not_to_contain_text("CODE-7731")
        expect(thief.locator("#study-task")).to_be_hidden()
        shoot(thief, shots, "paid-impersonator-400px")

        careless = browser.page(PHONE)
        careless.goto(worker_link(url, "5f-careless", "sess-2"), wait_until="load")
        take_task(careless, "Anything", "Never")
        careless.locator("#study-done").get_by_text("CODE-7731").wait_for()  # paid or not: the researcher decides
        # The flagged worker's place went back: a third worker gets it.
        second = browser.page(PHONE)
        second.goto(worker_link(url, "5f-good-2", "sess-3"), wait_until="load")
        take_task(second, "A heist film", "Often")
        second.locator("#study-done").get_by_text("CODE-7731").wait_for()

        late = browser.page(PHONE)
        late.goto(worker_link(url, "5f-late", "sess-4"), wait_until="load")
        late.locator("#study-notice").get_by_text("no place will open again").wait_for()
        expect(late.locator("#study-notice")).to_contain_text("Return submission")
        expect(late.locator("#study-consent")).to_be_hidden()
        expect(late.locator("#study-retry")).to_be_hidden()
        assert_no_toasts(late, "a full study")
        shoot(late, shots, "paid-full-400px")

    with payment_sheet(services, "pilot", tmp_path).open(newline="") as f:
        rows = {r["PROLIFIC_PID"]: (r["SESSION_ID"], r["status_after_upload"]) for r in csv.DictReader(f)}
    assert rows == {pid("5f-good-1"): (pid("sess-1"), "APPROVED"),
                    pid("5f-careless"): (pid("sess-2"), "REJECTED"),
                    pid("5f-good-2"): (pid("sess-3"), "APPROVED")}


def test_a_preview_walks_the_study_and_pause_holds_workers(services, browser):
    publish(services, systems=["alpha", "beta"], tasks_per_participant=1, quota_per_cell=1, attention_check=CHECK)
    shots = browser.shots
    with running(build_app(services)) as url:
        preview = browser.page(PHONE)
        preview.goto(f"{url}/study/?study=pilot&preview={flow.preview_token(services, 'pilot')}", wait_until="load")
        preview.locator("#study-notice").get_by_text("Preview:").wait_for()
        take_task(preview, "Just looking", "Often", shots, "preview-task-400px")
        preview.locator("#study-done").get_by_text("End of the preview").wait_for()
        shoot(preview, shots, "preview-done-400px")
        assert services.store.list_participants("pilot") == []

        services.store.set_study_state("pilot", "paused")
        paused = browser.page(PHONE)
        paused.goto(worker_link(url, "5f-paused", "sess-9"), wait_until="load")
        paused.locator("#study-notice").get_by_text("paused").wait_for()
        shoot(paused, shots, "paused-400px")
        services.store.set_study_state("pilot", "open")
        paused.reload(wait_until="load")
        paused.locator("#study-consent").get_by_text("You agree").wait_for()


def test_the_researcher_runs_the_study_from_the_tab_on_a_phone(services, browser):
    publish(services, systems=["alpha", "beta"], tasks_per_participant=1)
    shots = browser.shots
    with running(build_app(services, admin_auth=admin_checker(services.settings))) as url:
        admin = open_researcher_tab(browser, url, "ada", PASSWORD, "Studies")
        admin.set_viewport_size(PHONE)  # the tab at a phone's width (its tab list folds into a menu there)
        admin.locator("#studies-systems").get_by_text("Systems a study can use here: alpha, beta").wait_for()
        admin.locator("#studies-pick input").click()
        admin.get_by_role("option", name="pilot (version 1)").click()
        link = admin.locator("#studies-link textarea, #studies-link input").first
        expect(link).to_have_value(f"{url}/study/?study=pilot&PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}"
                                   "&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}")
        expect(admin.locator("#studies-link button").first).to_be_visible()  # the copy button
        expect(admin.locator("#studies-overview")).to_contain_text("Preview the study")
        expect(admin.locator("#studies-participants")).to_be_hidden()  # no empty table with "1 2 3" headers
        shoot(admin, shots, "studies-tab-400px")
        admin.locator("#studies-pause").click()
        admin.locator("#studies-state").get_by_text("paused").wait_for()
        assert services.store.study_state("pilot") == "paused"
        admin.locator("#studies-resume").click()
        admin.locator("#studies-state").get_by_text("is open").wait_for()
        admin.once("dialog", lambda dialog: dialog.accept())
        admin.locator("#studies-close").click()
        admin.locator("#studies-state").get_by_text("Closed").wait_for()
        assert services.store.study_state("pilot") == "closed"
        assert_no_toasts(admin, "closing a study")
        shoot(admin, shots, "studies-closed-400px")


def test_a_place_is_held_from_start_and_a_worker_too_late_is_told_before_writing(services, browser):
    publish(services, systems=["alpha", "beta"], tasks_per_participant=1, quota_per_cell=1)
    shots = browser.shots
    with running(build_app(services)) as url:
        pages = {}
        for n in range(3):  # three workers read the consent and instructions: none of them holds a place yet
            page = browser.page(PHONE)
            page.goto(worker_link(url, f"5f-w{n}", f"sess-w{n}"), wait_until="load")
            page.locator("#study-agree").click()
            page.locator("#study-instructions").get_by_text("Ask for a movie").wait_for()
            pages[n] = page
        assert all(n["reserved"] == 0 for n in services.store.cell_fill(flow.load_study(services, "pilot")[1]).values())
        for n in (0, 1):  # the first two to press Start take the two places
            pages[n].locator("#study-start").click()
            pages[n].locator("#study-task-head").get_by_text("Task 1 of 1").wait_for()
        late = pages[2]
        late.locator("#study-start").click()  # told now, before writing anything
        late.locator("#study-full-notice").get_by_text("held by other workers").wait_for()
        expect(late.locator("#study-full-notice")).to_contain_text("Return submission")
        expect(late.locator("#study-task")).to_be_hidden()
        expect(late.locator("#study-retry")).to_be_visible()
        assert_no_toasts(late, "every place held")
        shoot(late, shots, "places-held-400px")
        for n in (0, 1):  # the two who started write and keep their task
            pages[n].locator("#study-msg-a textarea").fill(f"A film for worker {n}")
            pages[n].locator("#study-send-a").click()
            wait_for_replies(pages[n], "#study-chat-a", 1)
            expect(pages[n].locator("#study-chat-a")).to_contain_text(f"A film for worker {n}")


def test_a_made_up_or_unfilled_link_takes_nothing_and_a_bare_study_address_leads_on(services, browser):
    publish(services, systems=["alpha", "beta"], tasks_per_participant=1, quota_per_cell=1)
    shots = browser.shots
    with running(build_app(services)) as url:
        page = browser.page(PHONE)
        # The link of the Studies tab, opened as it is: one line for the researcher, no consent page.
        page.goto(f"{url}/study/?study=pilot&PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}&STUDY_ID={{{{%STUDY_ID%}}}}"
                  "&SESSION_ID={{%SESSION_ID%}}", wait_until="load")
        page.locator("#study-notice").get_by_text("the platform's placeholder").wait_for()
        expect(page.locator("#study-notice")).to_contain_text("opened from the platform")
        expect(page.locator("#study-consent")).to_be_hidden()
        shoot(page, shots, "placeholder-link-400px")
        page.goto(f"{url}/study/?study=pilot&PROLIFIC_PID=anything&SESSION_ID=x", wait_until="load")
        page.locator("#study-notice").get_by_text("not a Prolific id").wait_for()
        expect(page.locator("#study-consent")).to_be_hidden()
        assert services.store.list_participants("pilot") == [] and services.store.platform_ids("pilot") == {}
        # `/study` without its slash leads to the study page, the worker's ids kept.
        bare = worker_link(url, "5f-bare", "sess-bare").replace("/study/?", "/study?")
        page.goto(bare, wait_until="load")
        page.locator("#study-consent").get_by_text("You agree").wait_for()
        assert f"/study/?study=pilot&PROLIFIC_PID={pid('5f-bare')}" in page.url
        assert_no_toasts(page, "made-up and unfilled links")
