"""Driving the app in Debian's Chromium (/usr/bin/chromium) through Playwright, as a participant would.

`open_browser` yields a factory of pages (each in its own browser context, so
each is a different browser with its own localStorage, unless a context is
passed); the checks every browser test shares live here too: no Gradio error
toast, no horizontal overflow, a screenshot kept for people to look at.

Checks on what a page shows go through Playwright's `expect`, which retries until the page agrees or
`TIMEOUT_MS` passes: a one-shot read (`inner_text()`, `is_enabled()`) can land in the middle of a
redraw on a busy machine and fail for no reason. `expect(...).to_contain_text(..., use_inner_text=True)`
reads the text as `inner_text()` does (what is rendered, without hidden elements and scripts).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Iterator, Optional

import pytest

expect = pytest.importorskip("playwright.sync_api").expect

CHROMIUM = os.environ.get("ARENA_CHROMIUM", "/usr/bin/chromium")
TIMEOUT_MS = 30_000
expect.set_options(timeout=TIMEOUT_MS)
DESKTOP = {"width": 1400, "height": 1000}
PHONE = {"width": 400, "height": 860}
WIDE = {"width": 1300, "height": 900}  # a laptop: panes side by side
# Gradio's error/warning toasts (what a refusal must never produce).
TOASTS = ".toast-body, [data-testid='toast-body']"


class Browser:
    def __init__(self, browser, shots: Path):
        self.browser = browser
        self.shots = shots
        self._contexts = []

    def page(self, viewport: Optional[dict] = None, context=None):
        """A page in a new browser context (a browser of its own), or in `context`."""
        if context is None:
            context = self.browser.new_context(accept_downloads=True, viewport=viewport or DESKTOP)
            self._contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        return page

    def close(self) -> None:
        for context in self._contexts:
            context.close()


@contextlib.contextmanager
def open_browser(shots: Path) -> Iterator[Browser]:
    sync_api = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium not found at {CHROMIUM} (apt-get install chromium, or set ARENA_CHROMIUM)")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM, headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-dev-shm-usage"],
        )
        wrapped = Browser(browser, shots)
        try:
            yield wrapped
        finally:
            wrapped.close()
            browser.close()


def screenshots_dir(tmp_path: Path) -> Path:
    """Where screenshots go: ARENA_SCREENSHOTS (to look at them afterwards), else the test's tmp folder."""
    folder = Path(os.environ.get("ARENA_SCREENSHOTS") or tmp_path / "screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def assert_no_toasts(page, after: str = "") -> None:
    # One look, on purpose: a toast closes by itself, so waiting for none would hide it. All texts are
    # read at once, so a toast closing between counting and reading cannot stall the check.
    texts = page.locator(TOASTS).all_inner_texts()
    assert not texts, f"error toast after {after or 'that action'}: {texts}"


def assert_fits(page, what: str = "") -> None:
    """No horizontal overflow of the page (a phone would scroll sideways)."""
    scroll, client = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert scroll <= client, f"{what or page.url}: page is {scroll} px wide in a {client} px viewport"


def shoot(page, shots: Path, name: str) -> Path:
    """A full-page screenshot, after checking the page fits its width."""
    assert_fits(page, name)
    path = shots / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


# -- what a participant does --------------------------------------------------------------------

REPLIES_IN = """([chat, n]) => document.querySelectorAll(chat + " [data-testid='bot']").length >= n
    && !document.querySelector(chat + " .typing-indicator")"""


def replies(page, chat: str) -> int:
    """System messages shown in a chatbot (the typing indicator counts while it is there)."""
    return page.locator(f"{chat} [data-testid='bot']").count()


def wait_for_replies(page, chat: str, count: int) -> None:
    """Until `chat` shows `count` system messages and no typing indicator."""
    page.wait_for_function(REPLIES_IN, arg=[chat, count])


def send_in_pane(page, side: str, text: str, wait: bool = True) -> None:
    """Type into a battle pane and press Send; with `wait`, until the reply is in."""
    s = side.lower()
    before = replies(page, f"#battle-chat-{s}")
    page.locator(f"#battle-msg-{s} textarea").fill(text)
    page.locator(f"#battle-send-{s}").click()
    if wait:
        wait_for_replies(page, f"#battle-chat-{s}", before + 1)


def new_battle(page) -> None:
    page.locator("#battle-new").click()
    page.locator("#battle-msg-a textarea:enabled").wait_for()


def rate_pane(page, side: str, sentiment: str) -> None:
    s = side.lower()
    page.locator(f"#battle-{sentiment}-{s}").click()
    page.locator(f"#battle-status-{s}").get_by_text(sentiment).wait_for()


def chat_send(page, text: str) -> None:
    """Send in the Chat tab and wait for the reply."""
    before = replies(page, "#chat-chatbot")
    page.locator("#chat-msg textarea").fill(text)
    page.locator("#chat-send").click()
    wait_for_replies(page, "#chat-chatbot", before + 1)


def open_researcher_tab(browser: "Browser", url: str, user: str, password: str, tab: str):
    """A new page logged in to the researcher app at `url` through its login form, on `tab`."""
    page = browser.page()
    page.goto(f"{url}/admin/", wait_until="load")
    page.locator("input[type='text']").first.fill(user)
    page.locator("input[type='password']").fill(password)
    page.get_by_role("button", name="Login").click()
    page.get_by_role("tab", name=tab).click()
    return page
