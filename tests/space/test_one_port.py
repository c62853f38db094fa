"""One server, one port: public pages at `/`, researcher pages at `/admin` behind a login; the login limit."""

from __future__ import annotations

import logging
import sys
import time
from pathlib import Path

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "battle"))

from battle_support import FakeCatalogCRS, make_services  # noqa: E402

from tests.support.asgi_server import running  # noqa: E402
from webapp.protection.admin_auth import admin_checker, hash_password  # noqa: E402
from webapp.protection.login_limits import LoginLimiter  # noqa: E402
from webapp.serve import build_app  # noqa: E402

PASSWORD = "correct horse battery staple"


@pytest.fixture
def services(tmp_path):
    svc = make_services(tmp_path, [FakeCatalogCRS("alpha"), FakeCatalogCRS("beta")], max_turns=3,
                        admin_users=("ada",), admin_password_hash=hash_password(PASSWORD, iterations=1000))
    yield svc
    svc.store.close()


def test_public_pages_at_the_root_and_researcher_pages_behind_a_login_on_the_same_port(services):
    from gradio_client import Client

    app = build_app(services, admin_auth=admin_checker(services.settings))
    with running(app) as url:
        assert httpx.get(url + "/", timeout=30).status_code == 200
        public = Client(url + "/", verbose=False)
        assert "/leaderboard" in public.view_api(print_info=False, return_format="str")
        assert "/download" not in public.view_api(print_info=False, return_format="str")
        assert httpx.get(url + "/admin/config", timeout=30).status_code == 401  # nothing without a login
        refused = httpx.post(url + "/admin/login", data={"username": "ada", "password": "nope"}, timeout=30)
        assert refused.status_code == 400
        researcher = Client(url + "/admin/", auth=("ada", PASSWORD), verbose=False)
        files, card = researcher.predict([], "human", api_name="/download")
        assert "dialogues.jsonl" in {Path(f).name for f in files}


def test_failed_logins_wait_longer_and_then_lock_the_address_out(services, caplog):
    limiter = LoginLimiter(max_failures=5, lockout_s=60, free_failures=2, base_delay_s=0.5, max_delay_s=5)
    app = build_app(services, admin_auth=admin_checker(services.settings), limiter=limiter)
    bad = {"username": "ada", "password": "guess"}
    with running(app) as url, caplog.at_level(logging.WARNING, logger="webapp.protection.login_limits"):
        took, waits = [], []
        for n in range(5):
            waits.append(limiter.delay_for("127.0.0.1"))
            started = time.monotonic()
            answer = httpx.post(url + "/admin/login", data=bad, timeout=30)
            # The fifth wrong password locks the address out: its answer says for how long.
            assert answer.status_code == (429 if n == 4 else 400)
            took.append(time.monotonic() - started)
        assert waits == [0, 0, 0.5, 1.0, 2.0]  # the first failures are free, then each waits twice as long
        assert took[2] >= 0.5 and took[3] >= 1.0 and took[4] >= 2.0  # and the answer really waited
        locked = httpx.post(url + "/admin/login", data={"username": "ada", "password": PASSWORD}, timeout=30)
        assert locked.status_code == 429 and int(locked.headers["retry-after"]) > 0  # even the right password
        assert any("locked out for address 127.0.0.1" in r.getMessage() for r in caplog.records)
        assert httpx.get(url + "/", timeout=30).status_code == 200  # the public pages are not affected


def test_a_successful_login_forgets_earlier_failures():
    clock = [0.0]
    limiter = LoginLimiter(max_failures=3, lockout_s=100, free_failures=1, base_delay_s=1, clock=lambda: clock[0])
    limiter.failed("a")
    limiter.failed("a")
    assert limiter.delay_for("a") == 2 and limiter.delay_for("b") == 0
    limiter.succeeded("a")
    assert limiter.delay_for("a") == 0
    for _ in range(3):
        limiter.failed("a")
    assert limiter.locked_for("a") == 100
    clock[0] = 150  # the lockout is over and the failures are old: a fresh start
    assert limiter.locked_for("a") == 0 and limiter.delay_for("a") == 0
