"""Simultaneous wrong logins from one address get at most the configured number of password checks (issue
38: 32 parallel guesses got 32 answers of 400 and no lockout), counted in the store before each check;
the right password still works once the burst is over and the lockout has ended."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "battle"))

from battle_support import FakeCatalogCRS, make_services  # noqa: E402

from tests.support.asgi_server import running  # noqa: E402
from webapp.one_port import proxy_options  # noqa: E402
from webapp.protection.admin_auth import admin_checker, hash_password  # noqa: E402
from webapp.protection.login_limits import LoginLimiter  # noqa: E402
from webapp.serve import build_app  # noqa: E402

PASSWORD = "correct horse battery staple"
MAX_FAILURES = 10


async def burst(url: str, count: int, password: str = "guess") -> list[int]:
    limits = httpx.Limits(max_connections=count)
    async with httpx.AsyncClient(timeout=120, limits=limits) as client:
        answers = await asyncio.gather(*(client.post(url + "/admin/login",
                                                     data={"username": "ada", "password": password})
                                         for _ in range(count)))
    return [a.status_code for a in answers]


@pytest.mark.parametrize("attempts", [32, 200])
def test_a_burst_of_guesses_gets_at_most_the_configured_checks(tmp_path, attempts):
    services = make_services(tmp_path, [FakeCatalogCRS("alpha")], admin_users=("ada",),
                             admin_password_hash=hash_password(PASSWORD, iterations=20_000))
    clock = [1_000_000.0]
    limiter = LoginLimiter(max_failures=MAX_FAILURES, lockout_s=60, base_delay_s=0.02, max_delay_s=0.1,
                           store=services.store, clock=lambda: clock[0])
    app = build_app(services, admin_auth=admin_checker(services.settings), limiter=limiter)
    with running(app, **proxy_options(())) as url:
        answers = asyncio.run(burst(url, attempts))
        # MAX_FAILURES checks: the one that starts the lockout answers 429 with the wait, the others 400.
        assert answers.count(400) == MAX_FAILURES - 1 and answers.count(429) == attempts - MAX_FAILURES + 1
        assert asyncio.run(burst(url, 1, PASSWORD)) == [429]  # locked out: even the right password
        clock[0] += 61  # the lockout is over
        assert asyncio.run(burst(url, 1, PASSWORD)) == [200]
        assert limiter.locked_for("127.0.0.1") == 0 and limiter.delay_for("127.0.0.1") == 0
    services.store.close()
