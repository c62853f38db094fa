"""In Chromium, against the local server that models Prolific's API: the submissions' statuses on the
Studies page follow the researcher's own actions. Choosing a study made on Prolific from this page lists its
submissions without a press of Load, and an approval changes the status shown without a press of Load or
Refresh; so does the platform's status after the arena pauses the study."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from study_support import PROLIFIC_TERMS, RESEARCHER_PASSWORD, pid, publish
from tests.support.asgi_server import running
from tests.support.browser import assert_no_toasts, expect, open_researcher_tab
from arena.crowd.prolific_api import ProlificClient
from webapp.protection.admin_auth import admin_checker
from webapp.serve import build_app
from webapp.sessions import platform_link

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))

pytestmark = [pytest.mark.browser, pytest.mark.slow]
PASSWORD = RESEARCHER_PASSWORD
PROLIFIC = PROLIFIC_TERMS


@pytest.fixture
def services(researcher_services):
    return researcher_services


def published_with_one_submission_awaiting_review(services, prolific) -> tuple[str, str]:
    """The study "pilot" created on the local Prolific from the arena and published, with one worker's
    submission completed and awaiting review: (the platform's study id, the submission id)."""
    publish(services, systems=["alpha", "beta"], tasks_per_participant=1, quota_per_cell=1, prolific=PROLIFIC)
    platform_link.create(services, "pilot", "https://arena.example/study/?study=pilot",
                         ProlificClient.from_environment)
    ((study_id, _),) = prolific.state.studies.items()
    platform_link.publish(services, "pilot", ProlificClient.from_environment)
    submission = prolific.reserve(study_id, pid("5f-ann"))
    prolific.start_submission(submission)
    prolific.complete(submission, "CODE-7731")
    return study_id, submission


def test_an_approval_changes_the_shown_status_without_refresh(services, prolific, browser):
    study_id, submission = published_with_one_submission_awaiting_review(services, prolific)
    with running(build_app(services, admin_auth=admin_checker(services.settings))) as url:
        admin = open_researcher_tab(browser, url, "ada", PASSWORD, "Studies")
        admin.locator("#studies-pick input").click()
        admin.get_by_role("option", name="pilot (version 1)").click()
        table = admin.locator("#studies-review-table")
        expect(table).to_contain_text("AWAITING REVIEW", use_inner_text=True)  # no press of Load
        admin.locator("#studies-review-chosen").get_by_label(submission, exact=False).check()
        admin.locator("#studies-review-prepare").click()
        admin.locator("#studies-review-outcome").get_by_text("About to send to Prolific: 1").wait_for()
        admin.locator("#studies-review-confirm").click()
        admin.locator("#studies-review-outcome").get_by_text("Approved 1 submission(s).").wait_for()
        expect(table).to_contain_text("APPROVED", use_inner_text=True)  # no press of Load or Refresh
        expect(table).not_to_contain_text("AWAITING REVIEW", use_inner_text=True)
        admin.locator("#studies-pause").click()  # sent to Prolific first; its new status shows at once
        admin.locator("#studies-platform").get_by_text("was PAUSED", exact=False).wait_for()
        assert_no_toasts(admin, "approving and pausing")
    assert prolific.state.submissions[submission].status == "APPROVED"


def submission_reads(prolific) -> int:
    return sum(1 for method, path, _ in prolific.state.requests if method == "GET" and "submissions" in path)


def test_a_study_chosen_when_the_page_opens_is_shown_at_once(services, prolific, browser):
    """The only study, or the one the page's address names, is chosen at load: its summary, its Prolific
    line and its submissions show with no choice made and no press of Load, and are read once."""
    study_id, submission = published_with_one_submission_awaiting_review(services, prolific)
    with running(build_app(services, admin_auth=admin_checker(services.settings))) as url:
        admin = open_researcher_tab(browser, url, "ada", PASSWORD, "Studies")  # the only study
        expect(admin.locator("#studies-pick input")).to_have_value("pilot (version 1)")
        expect(admin.locator("#studies-overview")).to_contain_text("Movie chat pilot", use_inner_text=True)
        expect(admin.locator("#studies-platform")).to_contain_text(f"study {study_id} was ACTIVE",
                                                                   use_inner_text=True)
        expect(admin.locator("#studies-review-table")).to_contain_text("AWAITING REVIEW", use_inner_text=True)
        admin.locator("#studies-review-chosen").get_by_label(submission, exact=False).wait_for()
        assert submission_reads(prolific) == 1
        # With a second study, the page's address names the one it opens on.
        publish(services, id="second", systems=["alpha", "beta"], tasks_per_participant=1)
        admin.goto(f"{url}/admin/?study=pilot", wait_until="load")
        admin.get_by_role("tab", name="Studies").click()
        expect(admin.locator("#studies-pick input")).to_have_value("pilot (version 1)")
        expect(admin.locator("#studies-review-table")).to_contain_text("AWAITING REVIEW", use_inner_text=True)
        admin.locator("#studies-review-chosen").get_by_label(submission, exact=False).check()
        admin.locator("#studies-review-prepare").click()  # the submission offered at load is a valid pick
        admin.locator("#studies-review-outcome").get_by_text("About to send to Prolific: 1").wait_for()
        admin.locator("#studies-pick input").click()  # and so is the study created after the app was built
        admin.get_by_role("option", name="second (version 1)").click()
        expect(admin.locator("#studies-overview")).to_contain_text("version 1, chat", use_inner_text=True)
        admin.goto(f"{url}/admin/?study=nosuch", wait_until="load")
        admin.get_by_role("tab", name="Studies").click()
        expect(admin.locator("#studies-overview")).to_contain_text("There is no study 'nosuch' here",
                                                                   use_inner_text=True)
        assert_no_toasts(admin, "opening the page on a study")
    assert submission_reads(prolific) == 2
