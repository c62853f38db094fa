"""A whole study in Chromium, as a recruited worker does it: the link on the public page, consent,
instructions, two tasks with the attention check in the second, and the completion code; then the
researcher sees the worker in the Studies tab. The task view works as the public Chat does (the message
at once, a typing indicator, the items, refusals in one line by the control) and fits a phone.
Uses Debian's Chromium through Playwright."""

from __future__ import annotations

import re

import pytest

from battle_support import FakeCatalogCRS, make_services
from study_support import INSTRUCTED, pid, publish
from tests.support.asgi_server import running
from tests.support.browser import (
    PHONE, assert_fits, assert_no_toasts, expect, open_researcher_tab, shoot, wait_for_replies,
)
from webapp.protection.admin_auth import admin_checker, hash_password
from webapp.serve import build_app

pytestmark = [pytest.mark.browser, pytest.mark.slow]
PASSWORD = "correct horse battery staple"
SHOWS = "([where, text]) => (document.querySelector(where)?.innerText || '').includes(text)"
EMPTY = re.compile(r"^\s*$")  # an element showing nothing (whitespace at most)


def chat_and_rate(page, text: str, sentiment: str) -> None:
    page.locator("#study-msg-a textarea").fill(text)
    page.locator("#study-send-a").click()
    wait_for_replies(page, "#study-chat-a", 1)
    page.locator(f"#study-{sentiment}-a").click()
    page.locator("#study-verdict-a").get_by_text(sentiment).wait_for()


@pytest.fixture
def services(tmp_path):
    svc = make_services(tmp_path, [FakeCatalogCRS("alpha"), FakeCatalogCRS("beta"), FakeCatalogCRS("gamma")],
                        max_turns=6, admin_users=("ada",), admin_password_hash=hash_password(PASSWORD, iterations=1000))
    yield svc
    svc.store.close()


def test_a_worker_takes_a_whole_study_in_the_browser(services, browser, tmp_path):
    from tests.support.browser import screenshots_dir

    publish(services, attention_check=INSTRUCTED, min_user_turns=1)
    shots = screenshots_dir(tmp_path)
    with running(build_app(services, admin_auth=admin_checker(services.settings))) as url:
        page = browser.page()
        page.goto(f"{url}/", wait_until="load")  # without a study the open arena loads as ever
        page.get_by_role("tab", name="Battle").wait_for()
        assert "/study" not in page.url
        ids = f"PROLIFIC_PID={pid('5f1a2b')}&STUDY_ID={pid('st1')}&SESSION_ID={pid('se1')}"
        page.goto(f"{url}/?study=pilot&{ids}", wait_until="load")
        page.wait_for_url("**/study/?study=pilot*")
        page.locator("#study-consent").get_by_text("You agree that your messages are stored").wait_for()
        page.locator("#study-agree").click()
        page.locator("#study-instructions").get_by_text("Ask for a movie").wait_for()
        page.locator("#study-start").click()
        page.locator("#study-task-head").get_by_text("Task 1 of 2").wait_for()
        # A verdict-less submission is refused in one line by the button; the conversation stays.
        page.locator("#study-submit").click()
        page.locator("#study-submit-status").get_by_text("give your verdict").wait_for()
        chat_and_rate(page, "A film about sharks, please", "satisfied")
        page.locator("#study-submit").click()
        page.locator("#study-task-head").get_by_text("Task 2 of 2").wait_for()
        # The reload resumes task 2 (the attention item is in its form).
        page.reload(wait_until="load")
        page.locator("#study-task-head").get_by_text("Task 2 of 2").wait_for()
        chat_and_rate(page, "Something funny for tonight", "frustrated")
        page.locator("#study-attention").get_by_text(INSTRUCTED["question"]).wait_for()
        page.locator("#study-attention").get_by_label("Often").check()
        shoot(page, shots, "study-task-2")
        page.locator("#study-submit").click()
        page.locator("#study-done").get_by_text("CODE-7731").wait_for()
        assert_no_toasts(page, "the whole study")
        shoot(page, shots, "study-done")
        (worker,) = services.store.list_participants("pilot")
        assert worker.status == "completed" and not worker.flags and pid("5f1a2b") not in worker.pseudonym
        # The session id binds the worker, as a pseudonym.
        assert worker.data["platform"] == {"STUDY_ID": pid("st1")}

        # The researcher's Studies tab lists the worker, status and time.
        admin = open_researcher_tab(browser, url, "ada", PASSWORD, "Studies")
        admin.locator("#studies-pick input").click()
        admin.get_by_role("option", name="pilot (version 1)").click()
        admin.wait_for_function(SHOWS, arg=["#studies-participants", worker.pseudonym])
        table = admin.locator("#studies-participants")
        expect(table).to_contain_text("completed", use_inner_text=True)
        expect(table).to_contain_text("done", use_inner_text=True)
        shoot(admin, shots, "studies-tab")


TRACKER = "[data-testid='status-tracker']"  # Gradio's progress overlay, in each component (hidden: `.hide`)
SLOW_REPLY_S = 2.0  # long enough to see the page between sending and the reply


@pytest.fixture
def slow_services(tmp_path):
    svc = make_services(tmp_path, [FakeCatalogCRS(name, delay_s=SLOW_REPLY_S) for name in ("alpha", "beta", "gamma")],
                        max_turns=6)
    yield svc
    svc.store.close()


def open_first_task(page, url: str, worker: str, heading: str = "Task 1 of 1") -> None:
    page.goto(f"{url}/study/?study=pilot&PROLIFIC_PID={pid(worker)}", wait_until="load")
    page.locator("#study-agree").click()
    page.locator("#study-start").click()
    page.locator("#study-task-head").get_by_text(heading).wait_for()


def test_the_task_view_works_as_the_public_chat(slow_services, browser, tmp_path):
    """The message shows at once with a typing indicator, Send waits for the reply, the page is not covered
    by a progress overlay, the reply's items are listed, refusals are one line by the control (no toast)
    and keep what was typed, and the chatbot offers no share button."""
    publish(slow_services, tasks_per_participant=1, min_user_turns=2)
    with running(build_app(slow_services)) as url:
        page = browser.page()
        open_first_task(page, url, "w-chat")
        page.locator("#study-msg-a textarea").fill("A film about sharks, please")
        page.locator("#study-send-a").click()
        page.locator("#study-chat-a [data-testid='user']").get_by_text("A film about sharks").wait_for()
        page.locator("#study-chat-a .typing-indicator").wait_for()
        expect(page.locator("#study-send-a")).to_be_disabled()
        expect(page.locator("#study-msg-a textarea")).to_have_value("")
        # While the system writes, no component of the task carries Gradio's progress overlay (Gradio keeps
        # an overlay up for the whole event, so none shown while the indicator still is means none at all).
        expect(page.locator(f"#study-task {TRACKER}").first).to_be_attached()
        expect(page.locator(f"#study-task {TRACKER}:not(.hide)")).to_have_count(0)
        expect(page.locator("#study-chat-a .typing-indicator")).to_be_visible()
        shoot(page, browser.shots, "study-typing")
        wait_for_replies(page, "#study-chat-a", 1)
        expect(page.locator("#study-send-a")).to_be_enabled()
        expect(page.locator("#study-items-a")).to_contain_text("Recommended", use_inner_text=True)
        expect(page.locator("#study-items-a li").first).to_be_attached()

        # A verdict after one message of two: one line by the buttons, the unsent text kept, no toast.
        page.locator("#study-msg-a textarea").fill("Something older")
        page.locator("#study-satisfied-a").click()
        page.locator("#study-status-a").get_by_text("at least 2 messages").wait_for()
        expect(page.locator("#study-msg-a textarea")).to_have_value("Something older")
        expect(page.locator("#study-verdict-a")).to_have_text(EMPTY, use_inner_text=True)
        assert_no_toasts(page, "a verdict too early")
        # Submitting before the verdict: one line by Submit; the earlier line is gone.
        page.locator("#study-submit").click()
        page.locator("#study-submit-status").get_by_text("give your verdict").wait_for()
        expect(page.locator("#study-status-a")).to_have_text(EMPTY, use_inner_text=True)
        expect(page.locator("#study-msg-a textarea")).to_have_value("Something older")
        assert_no_toasts(page, "a submission before the verdict")
        # The chatbot's corner offers neither share nor clear (only each message's copy button).
        expect(page.locator("#study-chat-a .top-panel button:visible")).to_have_count(0)
        expect(page.locator("#study-chat-a button[aria-label*='hare' i]")).to_have_count(0)
        shoot(page, browser.shots, "study-refused")


def test_a_battle_study_fits_a_phone(services, browser):
    publish(services, mode="battle", tasks_per_participant=1)
    with running(build_app(services)) as url:
        page = browser.page(PHONE)
        open_first_task(page, url, "w-phone")
        shoot(page, browser.shots, "study-battle-empty-400px")
        for side in ("a", "b"):
            page.locator(f"#study-msg-{side} textarea").fill("A long space adventure with robots and a heist")
            page.locator(f"#study-send-{side}").click()
            wait_for_replies(page, f"#study-chat-{side}", 1)
        page.locator("#study-frustrated-a").click()
        page.locator("#study-verdict-a").get_by_text("frustrated").wait_for()
        # A submission without B's verdict is refused by the button; the vote picked stays picked.
        page.locator("#study-choice").get_by_label("A tie").check()
        page.locator("#study-submit").click()
        page.locator("#study-submit-status").get_by_text("give your verdict").wait_for()
        expect(page.locator("#study-choice").get_by_label("A tie")).to_be_checked()
        page.locator("#study-frustrated-b").click()
        page.locator("#study-verdict-b").get_by_text("frustrated").wait_for()
        assert_fits(page, "a battle task at 400 px")
        assert_no_toasts(page, "a battle task at 400 px")
        shoot(page, browser.shots, "study-battle-400px")
        page.locator("#study-submit").click()
        page.locator("#study-done").get_by_text("CODE-7731").wait_for()
        shoot(page, browser.shots, "study-done-400px")


@pytest.fixture
def platform():
    """A stand-in for the recruiting platform on loopback: records the paths it is asked for."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            seen.append(self.path)
            body = b"<html><body>submission complete</body></html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


def test_a_finished_worker_is_forwarded_to_the_platform_with_the_code(services, browser, platform):
    base, seen = platform
    publish(services, tasks_per_participant=1, redirect_url=f"{base}/submissions/complete",
            redirect_code_param="cc")
    with running(build_app(services)) as url:
        page = browser.page()
        ids = f"PROLIFIC_PID={pid('77aa')}&STUDY_ID={pid('st1')}&SESSION_ID={pid('se1')}"
        page.goto(f"{url}/study/?study=pilot&{ids}", wait_until="load")
        page.locator("#study-agree").click()
        page.locator("#study-start").click()
        page.locator("#study-task-head").get_by_text("Task 1 of 1").wait_for()
        chat_and_rate(page, "A film about sharks, please", "satisfied")
        page.locator("#study-submit").click()
        page.locator("#study-done").get_by_text("CODE-7731").wait_for()  # shown first, the link kept
        link = page.locator("#study-done a")
        expect(link).to_have_attribute("href", f"{base}/submissions/complete?cc=CODE-7731")
        page.wait_for_url(f"{base}/submissions/complete?cc=CODE-7731", wait_until="load")
        assert "submission complete" in page.content()
        assert [p for p in seen if p != "/favicon.ico"] == ["/submissions/complete?cc=CODE-7731"]
        (worker,) = services.store.list_participants("pilot")
        assert worker.status == "completed"


def test_a_study_link_on_a_share_link_is_refused_in_one_line(services, browser):
    """`--share` serves the public app alone (Gradio's tunnel carries one Blocks): a study link says so
    instead of showing the open arena to a recruited worker. The same launch as `--share`, without the tunnel."""
    from battle_support import free_port
    from webapp.serve import SHARE_STUDY_REFUSAL_TEXT, launch_shared

    publish(services)
    port = free_port()
    demo = launch_shared(services, services.settings.model_copy(update={"host": "127.0.0.1"}), port, share=False,
                         prevent_thread_lock=True, quiet=True)
    try:
        page = browser.page()
        page.goto(f"http://127.0.0.1:{port}/", wait_until="load")
        page.get_by_role("tab", name="Battle").wait_for()  # without a study the open arena loads as ever
        page.goto(f"http://127.0.0.1:{port}/?study=pilot&PROLIFIC_PID=5f1a2b", wait_until="load")
        page.locator("#study-refused").wait_for()
        only_the_refusal = re.compile(r"^\s*" + re.escape(SHARE_STUDY_REFUSAL_TEXT) + r"\s*$")
        expect(page.locator("body")).to_have_text(only_the_refusal, use_inner_text=True)
        expect(page.get_by_role("tab", name="Battle")).to_have_count(0)
    finally:
        demo.close()
