"""A whole study in Chromium, as a recruited worker does it: the link on the public page, consent,
instructions, two tasks with the attention check in the second, and the completion code; then the
researcher sees the worker in the Studies tab. Uses Debian's Chromium through Playwright."""

from __future__ import annotations

import pytest

from arena.study_store import list_participants
from battle_support import FakeCatalogCRS, make_services
from study_support import INSTRUCTED, publish
from tests.support.asgi_server import running
from tests.support.browser import assert_no_toasts, shoot, wait_for_replies
from webapp.admin_auth import admin_checker, hash_password
from webapp.serve import build_app

pytestmark = [pytest.mark.browser, pytest.mark.slow]
PASSWORD = "correct horse battery staple"
SHOWS = "([where, text]) => (document.querySelector(where)?.innerText || '').includes(text)"


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
        page.goto(f"{url}/?study=pilot&PROLIFIC_PID=5f1a2b&STUDY_ID=st1&SESSION_ID=se1", wait_until="load")
        page.wait_for_url("**/study/?study=pilot*")
        page.locator("#study-consent").get_by_text("You agree that your messages are stored").wait_for()
        page.locator("#study-agree").click()
        page.locator("#study-instructions").get_by_text("Ask for a movie").wait_for()
        page.locator("#study-start").click()
        page.locator("#study-task-head").get_by_text("Task 1 of 2").wait_for()
        # A verdict-less submission is refused in one line; the conversation stays.
        page.locator("#study-submit").click()
        page.locator("#study-notice").get_by_text("give your verdict").wait_for()
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
        (worker,) = list_participants(services.store, "pilot")
        assert worker.status == "completed" and not worker.flags and "5f1a2b" not in worker.pseudonym
        assert worker.data["platform"] == {"STUDY_ID": "st1", "SESSION_ID": "se1"}

        # The researcher's Studies tab lists the worker, status and time.
        admin = browser.page()
        admin.goto(f"{url}/admin/", wait_until="load")
        admin.locator("input[type='text']").first.fill("ada")
        admin.locator("input[type='password']").fill(PASSWORD)
        admin.get_by_role("button", name="Login").click()
        admin.get_by_role("tab", name="Studies").click()
        admin.locator("#studies-pick input").click()
        admin.get_by_role("option", name="pilot (version 1)").click()
        admin.wait_for_function(SHOWS, arg=["#studies-participants", worker.pseudonym])
        table = admin.locator("#studies-participants").inner_text()
        assert "completed" in table and "done" in table
        shoot(admin, shots, "studies-tab")


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
        page.goto(f"{url}/study/?study=pilot&PROLIFIC_PID=77aa&STUDY_ID=st1&SESSION_ID=se1", wait_until="load")
        page.locator("#study-agree").click()
        page.locator("#study-start").click()
        page.locator("#study-task-head").get_by_text("Task 1 of 1").wait_for()
        chat_and_rate(page, "A film about sharks, please", "satisfied")
        page.locator("#study-submit").click()
        page.locator("#study-done").get_by_text("CODE-7731").wait_for()  # shown first, the link kept
        link = page.locator("#study-done a").get_attribute("href")
        assert link == f"{base}/submissions/complete?cc=CODE-7731"
        page.wait_for_url(f"{base}/submissions/complete?cc=CODE-7731", wait_until="load")
        assert "submission complete" in page.content()
        assert [p for p in seen if p != "/favicon.ico"] == ["/submissions/complete?cc=CODE-7731"]
        (worker,) = list_participants(services.store, "pilot")
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
        assert page.locator("body").inner_text().strip() == SHARE_STUDY_REFUSAL_TEXT
        assert page.get_by_role("tab", name="Battle").count() == 0
    finally:
        demo.close()
