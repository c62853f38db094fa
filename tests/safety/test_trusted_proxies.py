"""Client addresses come from trusted proxies only (ARENA_TRUSTED_PROXIES): a rotating X-Forwarded-For
from loopback or from any peer not named changes nothing; from a named proxy it names the client."""

from __future__ import annotations

import sys
from pathlib import Path

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "battle"))

from battle_support import FakeCatalogCRS, make_services  # noqa: E402
from gradio_client import Client  # noqa: E402

from arena.runtime.config import Settings, SettingsError  # noqa: E402
from tests.support.asgi_server import running  # noqa: E402
from webapp.one_port import SPACE_PROXY_NETWORKS, proxy_options, trusted_proxies  # noqa: E402
from webapp.protection.admin_auth import admin_checker, hash_password  # noqa: E402
from webapp.protection.login_limits import LoginLimiter  # noqa: E402
from webapp.serve import build_app  # noqa: E402

PASSWORD = "correct horse battery staple"
PROXY = "127.0.0.2"  # a second loopback address stands for a proxy on another host


def test_the_setting_names_proxies_and_refuses_anything_else():
    assert Settings.from_env({}).trusted_proxies is None
    assert trusted_proxies(Settings.from_env({})) == ()  # none by default, loopback included
    assert trusted_proxies(Settings.from_env({"SPACE_ID": "lab/arena"})) == SPACE_PROXY_NETWORKS
    assert trusted_proxies(Settings.from_env({"SPACE_ID": "lab/arena", "ARENA_TRUSTED_PROXIES": "none"})) == ()
    named = Settings.from_env({"ARENA_TRUSTED_PROXIES": "10.0.0.7, 192.168.0.0/16"})
    assert trusted_proxies(named) == ("10.0.0.7", "192.168.0.0/16")
    with pytest.raises(SettingsError, match="'proxy.example' is not an IP address or network"):
        Settings.from_env({"ARENA_TRUSTED_PROXIES": "proxy.example"})
    with pytest.raises(SettingsError, match="'\\*' is not an IP address"):  # any peer: never
        Settings.from_env({"ARENA_TRUSTED_PROXIES": "*"})
    assert proxy_options(()) == {"proxy_headers": False, "forwarded_allow_ips": ""}


@pytest.fixture
def services(tmp_path):
    svc = make_services(tmp_path, [FakeCatalogCRS("alpha")], max_turns=5, max_rated_per_user=100,
                        max_rated_per_ip=3, min_user_turns=1, admin_users=("ada",),
                        admin_password_hash=hash_password(PASSWORD, iterations=1000))
    yield svc
    svc.store.close()


def _limiter(services):
    return LoginLimiter(max_failures=3, lockout_s=600, free_failures=10, store=services.store)


def _guesses(url, forwarded_for, *, local_address=None):
    """Status codes of one wrong login per X-Forwarded-For value, sent from `local_address`."""
    transport = httpx.HTTPTransport(local_address=local_address) if local_address else None
    with httpx.Client(transport=transport, timeout=30) as client:
        return [client.post(url + "/admin/login", data={"username": "ada", "password": "guess"},
                            headers={"X-Forwarded-For": xff}).status_code for xff in forwarded_for]


ROTATING = [f"203.0.113.{i}" for i in range(1, 7)]


@pytest.mark.parametrize("proxies", [(), (PROXY,)], ids=["no-proxy", "another-proxy"])
def test_a_rotating_header_from_an_untrusted_peer_does_not_escape_the_login_lockout(services, proxies):
    app = build_app(services, admin_auth=admin_checker(services.settings), limiter=_limiter(services))
    with running(app, **proxy_options(proxies)) as url:  # the client connects from 127.0.0.1
        # The third wrong password locks the address out, and its answer says how long (429).
        assert _guesses(url, ROTATING) == [400, 400, 429, 429, 429, 429]


def test_the_header_from_a_trusted_proxy_names_the_client(services):
    app = build_app(services, admin_auth=admin_checker(services.settings), limiter=_limiter(services))
    with running(app, **proxy_options((PROXY,))) as url:
        # Six visitors behind the proxy, two guesses each: nobody reaches the lockout of three.
        assert _guesses(url, ROTATING * 2, local_address=PROXY) == [400] * 12
        # One visitor guessing on: locked out alone, and told so at its third guess (as is 203.0.113.1 at its
        # third, counting the two above); a client's own entry left of it is not believed.
        assert _guesses(url, ["198.51.100.9"] * 3 + ["203.0.113.1"], local_address=PROXY) == [400, 400, 429, 429]
        assert _guesses(url, ["198.51.100.9", "203.0.113.77, 198.51.100.9"], local_address=PROXY) == [429, 429]


def test_labels_from_fresh_sessions_with_a_rotating_header_hit_the_address_limit(services):
    """The probe's 25 labels from 25 sessions with a rotating header all counted; here the third is the last."""
    with running(build_app(services), **proxy_options(())) as url:
        outcomes = []
        for i in range(5):  # bounded
            client = Client(url + "/", verbose=False, headers={"X-Forwarded-For": f"203.0.113.{i + 1}"})
            client.predict("alpha", api_name="/chat_start")
            client.predict(f"a comedy please {i}", api_name="/chat_send")
            answer = str(client.predict("", api_name="/chat_satisfied"))
            outcomes.append("refused" if "from this network" in answer else "stored")
    assert outcomes == ["stored"] * 3 + ["refused"] * 2
    assert sum(d.feedback is not None for d in services.store.list_dialogues()) == 3
