"""A locked-out researcher login says, in one line on the login page itself, how long to wait (issue 37:
after the last wrong password Gradio's page said only "Incorrect Credentials", and nothing at all while
locked out). Over HTTP, then in Chromium at 1300 and 400 px."""

from __future__ import annotations

import sys
from pathlib import Path

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "battle"))

from battle_support import FakeCatalogCRS, make_services  # noqa: E402

from tests.support.asgi_server import running  # noqa: E402
from webapp.protection.admin_auth import admin_checker, hash_password  # noqa: E402
from webapp.protection.login_limits import LoginLimiter  # noqa: E402
from webapp.protection.login_page import WAIT_ID, lockout_line, wait_words  # noqa: E402
from webapp.serve import build_app  # noqa: E402

PASSWORD = "correct horse battery staple"


@pytest.fixture
def served(tmp_path):
    services = make_services(tmp_path, [FakeCatalogCRS("alpha")], admin_users=("ada",),
                             admin_password_hash=hash_password(PASSWORD, iterations=1000))
    clock = [1_000_000.0]
    limiter = LoginLimiter(max_failures=3, lockout_s=600, free_failures=3, store=services.store,
                           clock=lambda: clock[0])
    with running(build_app(services, admin_auth=admin_checker(services.settings), limiter=limiter)) as url:
        yield url, clock
    services.store.close()


def test_waits_read_as_minutes_and_seconds():
    assert [wait_words(s) for s in (0.2, 45, 60, 61.5, 870, 900)] == \
        ["1 s", "45 s", "1 min", "1 min 2 s", "14 min 30 s", "15 min"]
    assert lockout_line(870) == "Too many failed logins from this address: try again in 14 min 30 s."


def test_the_wrong_password_that_locks_and_every_try_after_it_say_how_long_to_wait(served):
    url, clock = served
    with httpx.Client(timeout=30) as client:
        def login(password: str) -> httpx.Response:
            return client.post(url + "/admin/login", data={"username": "ada", "password": password})

        assert [login("guess").status_code for _ in range(2)] == [400, 400]
        locking = login("guess")
        assert locking.status_code == 429 and locking.json()["detail"] == lockout_line(600)
        assert locking.headers["retry-after"] == "600"
        clock[0] += 30
        later = login(PASSWORD)  # even the right password waits
        assert later.status_code == 429 and later.json()["detail"].endswith("try again in 9 min 30 s.")
        page = client.get(url + "/admin/").text
        assert f'id=\\"{WAIT_ID}\\"' in page or f'id="{WAIT_ID}"' in page  # the line's place in the login panel
        assert "Date.now() + 570000" in page  # a page opened now shows the wait at once
        clock[0] += 571
        assert "var id = \"%s\", until = 0;" % WAIT_ID in client.get(url + "/admin/").text
        assert login(PASSWORD).status_code == 200


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.parametrize("width", [1300, 400])
def test_the_login_page_shows_the_wait_in_chromium(served, browser, width):
    from tests.support.browser import expect, shoot

    url, clock = served
    page = browser.page({"width": width, "height": 900})
    page.goto(url + "/admin/", wait_until="load")
    wait_line = page.locator(f"#{WAIT_ID}")

    def wrong() -> int:
        page.locator("input[type='text']").first.fill("ada")
        page.locator("input[type='password']").fill("not it")
        with page.expect_response(lambda r: r.url.endswith("/admin/login")) as answer:
            page.get_by_role("button", name="Login").click()
        return answer.value.status

    assert wrong() == 400
    page.get_by_text("Incorrect", exact=False).wait_for()
    expect(wait_line).to_have_text("")
    assert wrong() == 400
    assert wrong() == 429  # the third wrong password locks the address out: the page says for how long
    expect(wait_line).to_contain_text("Too many failed logins from this address: try again in 10 min")
    shoot(page, browser.shots, f"admin-login-locked-{width}px")
    clock[0] += 120
    page.reload(wait_until="load")  # a page opened during the lockout says it at once
    expect(wait_line).to_contain_text("try again in 8 min")
