"""A researcher logged in through one app process is logged in on every process sharing the database."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "battle"))

from battle_support import FakeCatalogCRS, make_services  # noqa: E402

from arena.store.researcher_logins import token_digest  # noqa: E402
from tests.support.asgi_server import running  # noqa: E402
from webapp.protection.admin_auth import admin_checker, hash_password  # noqa: E402
from webapp.protection.shared_login import StoredLoginTokens  # noqa: E402
from webapp.serve import build_app  # noqa: E402

PASSWORD = "correct horse battery staple"


def _services(folder: Path):
    return make_services(folder, [FakeCatalogCRS("alpha"), FakeCatalogCRS("beta")], max_turns=3,
                         admin_users=("ada",), admin_password_hash=hash_password(PASSWORD, iterations=1000))


@pytest.fixture
def two_replicas(tmp_path):
    """Two app servers (each its own Services and Gradio apps) on one database file."""
    first, second = _services(tmp_path), _services(tmp_path)
    app1 = build_app(first, admin_auth=admin_checker(first.settings))
    app2 = build_app(second, admin_auth=admin_checker(second.settings))
    with running(app1) as url1, running(app2) as url2:
        yield url1, url2, first.store
    first.store.close()
    second.store.close()


def test_a_login_made_on_one_replica_holds_on_the_other_until_logout(two_replicas):
    url1, url2, store = two_replicas
    with httpx.Client(timeout=30) as browser:  # one cookie jar: both servers are on 127.0.0.1
        assert browser.get(url2 + "/admin/config").status_code == 401
        assert browser.post(url1 + "/admin/login", data={"username": "ada", "password": PASSWORD}).status_code == 200
        assert browser.get(url1 + "/admin/config").status_code == 200
        assert browser.get(url2 + "/admin/config").status_code == 200  # the other replica knows the login
        name, token = next((c.name, c.value) for c in browser.cookies.jar if c.name.startswith("access-token-"))
        assert store.researcher_login(token_digest(token)) == "ada"
        stored = [digest for digest, _user in store.researcher_login_digests()]
        assert token not in stored  # only its digest is kept
        browser.get(url2 + "/admin/logout", follow_redirects=False)  # logged out through the other one
    with httpx.Client(timeout=30, cookies={name: token}) as old_cookie:  # the token itself no longer works
        assert old_cookie.get(url1 + "/admin/config").status_code == 401
    assert store.researcher_login_digests() == []


def test_a_wrong_password_stores_no_login(two_replicas):
    url1, url2, store = two_replicas
    with httpx.Client(timeout=30) as browser:
        assert browser.post(url1 + "/admin/login", data={"username": "ada", "password": "nope"}).status_code == 400
        assert browser.get(url2 + "/admin/config").status_code == 401
    assert store.researcher_login_digests() == []


def test_stored_logins_expire(tmp_path):
    services = _services(tmp_path)
    try:
        tokens = StoredLoginTokens(services.store, ttl_s=0.2)
        tokens["a-token"] = "ada"
        assert tokens.get("a-token") == "ada" and "a-token" in tokens and len(tokens) == 1
        assert tokens.get("another-token") is None and tokens.get(None) is None
        time.sleep(0.3)
        assert tokens.get("a-token") is None and len(tokens) == 0
        tokens["b-token"] = "ada"
        for handle in list(tokens):  # Gradio's logout of all of a user's sessions lists and deletes
            assert tokens[handle] == "ada"
            del tokens[handle]
        assert tokens.get("b-token") is None
    finally:
        services.store.close()


@pytest.mark.parametrize("public", [True, False])
def test_the_page_shows_the_login_form_until_a_login_is_made(tmp_path, public):
    """At `/admin/` beside the public app, and at `/` when the researcher app is served alone (`--admin`)."""
    services = _services(tmp_path)
    base = "/admin" if public else ""
    try:
        with running(build_app(services, public=public, admin_auth=admin_checker(services.settings))) as url, \
                httpx.Client(base_url=url, timeout=30) as browser:
            form = browser.get(base + "/")
            assert form.status_code == 200 and 'type="password"' in form.text and "gradio_config" not in form.text
            assert browser.get(base + "/config").status_code == 401
            assert browser.post(base + "/login", data={"username": "ada", "password": PASSWORD}).status_code == 200
            page = browser.get(base + "/")
            assert page.status_code == 200 and "gradio_config" in page.text and 'type="password"' not in page.text
            assert browser.get(base + "/config").json()["username"] == "ada"  # Gradio knows who it is
            assert browser.get(base + "/logout", follow_redirects=False).status_code == 302
            assert browser.get(base + "/config").status_code == 401
    finally:
        services.store.close()
