"""The researcher pages' address: `/admin`, as the start-up log and the README give it, leads to the login."""

from __future__ import annotations

import httpx

from tests.support.asgi_server import running
from webapp.protection.admin_auth import admin_checker, hash_password
from webapp.serve import build_app
from battle_support import FakeCatalogCRS, make_services


def test_the_bare_admin_address_redirects_to_the_researcher_pages(tmp_path):
    services = make_services(tmp_path, [FakeCatalogCRS("alpha")], admin_users=("ada",),
                             admin_password_hash=hash_password("a long enough password", iterations=1000))
    try:
        with running(build_app(services, admin_auth=admin_checker(services.settings))) as url:
            bare = httpx.get(url + "/admin", timeout=30)
            assert bare.status_code == 308 and bare.headers["location"].endswith("/admin/")
            assert httpx.get(url + "/admin", timeout=30, follow_redirects=True).status_code == 200
            assert httpx.get(url + "/", timeout=30).status_code == 200
    finally:
        services.store.close()


def test_the_researcher_pages_have_a_logout_that_ends_the_login(tmp_path):
    services = make_services(tmp_path, [FakeCatalogCRS("alpha")], admin_users=("ada",),
                             admin_password_hash=hash_password("a long enough password", iterations=1000))
    try:
        with running(build_app(services, admin_auth=admin_checker(services.settings))) as url:
            with httpx.Client(base_url=url, timeout=30) as client:
                login = client.post("/admin/login", data={"username": "ada", "password": "a long enough password"})
                assert login.status_code == 200
                config = client.get("/admin/config")
                assert config.status_code == 200 and "admin-logout" in config.text
                client.get("/admin/logout")
                assert client.get("/admin/config").status_code == 401
    finally:
        services.store.close()
