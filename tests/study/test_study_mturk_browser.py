"""An MTurk worker in Chromium: the preview takes no place, the accepted HIT runs, and the finished page posts
MTurk's external-submit form (a POST with the assignment id and the completion code)."""

from __future__ import annotations

from urllib.parse import parse_qs

import pytest

from battle_support import FakeCatalogCRS, make_services
from study_support import publish
from tests.support.asgi_server import running
from tests.support.browser import PHONE, assert_no_toasts, wait_for_replies
from webapp.serve import build_app

pytestmark = [pytest.mark.browser, pytest.mark.slow]

WORKER, ASSIGNMENT, HIT = "A1B2C3D4E5F6G7", "3" + "A" * 29, "3" + "H" * 29
SUBMIT = "https://workersandbox.mturk.com/mturk/externalSubmit"


@pytest.fixture
def services(tmp_path):
    svc = make_services(tmp_path, [FakeCatalogCRS("alpha"), FakeCatalogCRS("beta")], max_turns=6)
    yield svc
    svc.store.close()


def mturk_link(url: str, assignment: str) -> str:
    return (f"{url}/study/?study=pilot&workerId={WORKER}&assignmentId={assignment}&hitId={HIT}"
            "&turkSubmitTo=https%3A%2F%2Fworkersandbox.mturk.com")


def test_an_mturk_worker_previews_then_does_the_task_and_the_page_posts_mturks_form(services, browser):
    publish(services, systems=["alpha", "beta"], tasks_per_participant=1, quota_per_cell=1, platform="mturk")
    with running(build_app(services)) as url:
        page = browser.page(PHONE)
        page.goto(mturk_link(url, "ASSIGNMENT_ID_NOT_AVAILABLE"), wait_until="load")
        page.locator("#study-notice").get_by_text("previewing this task on MTurk").wait_for()
        assert services.store.list_participants("pilot") == []
        posted = []

        def mturk(route) -> None:  # MTurk's server, as far as this page can tell
            posted.append((route.request.method, route.request.post_data))
            route.fulfill(status=200, content_type="text/html", body="<p>Submitted</p>")

        page.route(SUBMIT, mturk)
        page.goto(mturk_link(url, ASSIGNMENT), wait_until="load")
        page.locator("#study-agree").click()
        page.locator("#study-start").click()
        page.locator("#study-task-head").get_by_text("Task 1 of 1").wait_for()
        page.locator("#study-msg-a textarea").fill("A western, please")
        page.locator("#study-send-a").click()
        wait_for_replies(page, "#study-chat-a", 1)
        page.locator("#study-satisfied-a").click()
        page.locator("#study-verdict-a").get_by_text("satisfied").wait_for()
        page.locator("#study-submit").click()
        page.locator("#study-done").get_by_text("CODE-7731").wait_for()
        assert_no_toasts(page, "an MTurk study")
        page.wait_for_url(SUBMIT, timeout=15000)
    assert len(posted) == 1 and posted[0][0] == "POST"
    assert parse_qs(posted[0][1]) == {"assignmentId": [ASSIGNMENT], "completion": ["CODE-7731"]}
