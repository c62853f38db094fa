"""The whole loop of a study run on Prolific, in Chromium, against the local server that models Prolific's
API: the researcher logs in, creates the study on Prolific from its file and publishes it; two workers take
a place on the platform, do their task through the study page and bring back the completion code; the
researcher reads the status (places taken, the study waiting for review), approves both submissions and
pays the file's bonus once. Uses Debian's Chromium through Playwright."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from study_support import PROLIFIC_TERMS, RESEARCHER_PASSWORD, pid, publish
from tests.support.asgi_server import running
from tests.support.browser import assert_no_toasts, expect, open_researcher_tab, shoot, wait_for_replies
from webapp.protection.admin_auth import admin_checker
from webapp.serve import build_app

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))


pytestmark = [pytest.mark.browser, pytest.mark.slow]
PASSWORD = RESEARCHER_PASSWORD
PROLIFIC = PROLIFIC_TERMS


@pytest.fixture
def services(researcher_services):
    return researcher_services


def do_the_task(page, url: str, worker: str, study_id: str, session: str) -> None:
    """A worker follows the link as Prolific fills it in, chats, gives a verdict and submits."""
    page.goto(f"{url}/study/?study=pilot&PROLIFIC_PID={pid(worker)}&STUDY_ID={study_id}&SESSION_ID={session}",
              wait_until="load")
    page.locator("#study-agree").click()
    page.locator("#study-start").click()
    page.locator("#study-task-head").get_by_text("Task 1 of 1").wait_for()
    page.locator("#study-msg-a textarea").fill(f"A film for {worker}, please")
    page.locator("#study-send-a").click()
    wait_for_replies(page, "#study-chat-a", 1)
    page.locator("#study-satisfied-a").click()
    page.locator("#study-verdict-a").get_by_text("satisfied").wait_for()
    page.locator("#study-submit").click()
    page.locator("#study-done").get_by_text("CODE-7731").wait_for()


def test_create_publish_work_review_and_pay_a_bonus_on_prolific(services, prolific, browser):
    publish(services, systems=["alpha", "beta"], tasks_per_participant=1, quota_per_cell=1, prolific=PROLIFIC,
            bonus={"fixed": "0.50"})
    shots = browser.shots
    with running(build_app(services, admin_auth=admin_checker(services.settings))) as url:
        admin = open_researcher_tab(browser, url, "ada", PASSWORD, "Studies")
        admin.locator("#studies-pick input").click()
        admin.get_by_role("option", name="pilot (version 1)").click()
        section = admin.locator("#studies-platform")
        section.get_by_text("Not on Prolific yet").wait_for()
        admin.locator("#studies-platform-create").click()
        section.get_by_text("Created on Prolific as study").wait_for()
        ((study_id, study),) = prolific.state.studies.items()
        assert study.fields["external_study_url"] == (
            f"{url}/study/?study=pilot&PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}&STUDY_ID={{{{%STUDY_ID%}}}}"
            "&SESSION_ID={{%SESSION_ID%}}")
        assert (study.fields["total_available_places"], study.fields["reward"]) == (2, 200)
        admin.locator("#studies-platform-publish").click()
        section.get_by_text("Published: Prolific says ACTIVE.").wait_for()
        shoot(admin, shots, "prolific-published")

        submissions = {}
        for worker in ("5f-ann", "5f-bob"):  # each takes a place on Prolific, then opens the link
            submission = prolific.reserve(study_id, pid(worker))
            prolific.start_submission(submission)
            do_the_task(browser.page(), url, worker, study_id, submission)
            prolific.complete(submission, "CODE-7731")  # the code typed back on Prolific
            submissions[worker] = submission

        admin.locator("#studies-platform-refresh").click()
        section.get_by_text("AWAITING REVIEW, 2 of 2 places taken").wait_for()
        expect(section).to_contain_text("the arena study is paused")
        assert services.store.study_state("pilot") == "paused"

        admin.locator("#studies-review-load").click()
        admin.locator("#studies-review-line").get_by_text("2 submission(s)").wait_for()
        for submission in submissions.values():
            admin.locator("#studies-review-chosen").get_by_label(submission, exact=False).check()
        admin.locator("#studies-review-prepare").click()
        admin.locator("#studies-review-outcome").get_by_text("About to send to Prolific: 2").wait_for()
        admin.locator("#studies-review-confirm").click()
        admin.locator("#studies-review-outcome").get_by_text("Approved 2 submission(s).").wait_for()
        assert {prolific.state.submissions[s].status for s in submissions.values()} == {"APPROVED"}

        admin.locator("#studies-bonus-preview").click()
        admin.locator("#studies-bonus-line").get_by_text("2 worker(s), total 1.00").wait_for()
        expect(admin.locator("#studies-bonus-table")).to_contain_text(pid("5f-ann"), use_inner_text=True)
        admin.locator("#studies-bonus-pay").click()
        admin.locator("#studies-bonus-line").get_by_text("Paid 1.00 to 2 worker(s)").wait_for()
        admin.locator("#studies-bonus-pay").click()  # a second press: the previewed lines went with the first
        admin.locator("#studies-bonus-line").get_by_text("Preview the bonuses first").wait_for()
        assert_no_toasts(admin, "paying the bonus")
        shoot(admin, shots, "prolific-paid")
    assert sum(prolific.pay_calls.values()) == 1
    assert sorted((p, cents) for _, p, cents in prolific.state.payments) == sorted(
        [(pid("5f-ann"), 50), (pid("5f-bob"), 50)])
