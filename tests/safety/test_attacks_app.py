"""The probe's attacks driven through gradio_client against a running app on loopback (issue 26), each in
a bounded loop, each shown to fail: predicting the next battle from the public board, stuffing labels from
fresh sessions, guessing the researcher password, a formula in a vote comment, markup in a stored system id.
(Concurrent identical sends: test_idempotent_sends.py; stuffing from one session:
test_label_protection.py; uploads: test_uploads.py; a full disk: test_disk_full.py.)"""

from __future__ import annotations

import contextlib
import csv
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "battle"))

from battle_support import FakeCatalogCRS, make_services, serving_apps  # noqa: E402
from gradio_client import Client  # noqa: E402

from arena.dialogue import Dialogue, Feedback, UserInfo, UserKind, Vote, utc_now  # noqa: E402
from arena.crowd.counting import LABEL_FLAG  # noqa: E402

IMG = '<img src="http://attacker.example/x.png" onerror="alert(1)">'
FORMULA = '=HYPERLINK("http://attacker.example/","click me")'


@pytest.fixture
def running():
    with serving_apps() as serve:
        yield serve


def play(client: Client, comment: str = "") -> None:
    client.predict(api_name="/battle_start")
    client.predict("a space adventure please", api_name="/battle_send_a")
    client.predict("something scary", api_name="/battle_send_b")
    client.predict(api_name="/battle_satisfied_a")
    client.predict(api_name="/battle_frustrated_b")
    client.predict(comment, api_name="/battle_vote_a")


def test_the_public_board_does_not_predict_the_next_pair(tmp_path, running):
    """The probe read the public battle counts and named the next pair 4 times out of 4. Here an attacker
    guesses, before each battle, the two systems with the fewest battles on the public board (exactly
    right every time were the next pair the least played one, ties broken by name). Over 12 battles the
    guess is right at most half the time (3000 runs simulated with webapp.sessions.pairing: 1.5 hits on average,
    never more than 7), and pairs vary."""
    names = ("alpha", "beta", "gamma", "delta", "eps")
    services = make_services(tmp_path, [FakeCatalogCRS(n) for n in names], max_battles_per_user=1000,
                             max_votes_per_user=1000, max_battles_per_ip=1000, max_votes_per_ip=1000,
                             leaderboard_min_votes=0)
    url = running(services)
    system_of = {services.registry.title(n): n for n in names}
    client = Client(url, verbose=False)
    hits, pairs = 0, set()
    for _ in range(12):  # bounded
        _, board, *_ = client.predict("human", "all", api_name="/leaderboard")
        battles = {n: 0 for n in names}
        if board["data"]:
            system, count = board["headers"].index("System"), board["headers"].index("Battles")
            battles.update({system_of[r[system]]: int(r[count]) for r in board["data"]})
        guess = frozenset(sorted(names, key=lambda n: (battles[n], n))[:2])
        play(client)
        last = max(services.store.list_votes(), key=lambda v: v.timestamp)
        pairs.add(frozenset((last.crs_a, last.crs_b)))
        hits += guess == frozenset((last.crs_a, last.crs_b))
    assert len(services.store.list_votes()) == 12
    assert hits <= 6, f"{hits} of 12 battles predicted from the public board"
    assert len(pairs) >= 5  # not stuck on a few pairs


def test_labels_from_fresh_sessions_hit_the_address_limit(tmp_path, running):
    """Fresh sessions (a new Client each time) from one address: the per-address limit stops them."""
    services = make_services(tmp_path, [FakeCatalogCRS("alpha")], max_turns=5, max_rated_per_user=100,
                             max_rated_per_ip=3, min_user_turns=1)
    url = running(services)
    outcomes = []
    for i in range(5):  # bounded
        client = Client(url, verbose=False)
        client.predict("alpha", api_name="/chat_start")
        client.predict(f"a comedy please {i}", api_name="/chat_send")
        answer = str(client.predict("", api_name="/chat_satisfied"))
        outcomes.append("refused" if "from this network" in answer else "stored")
    assert outcomes == ["stored"] * 3 + ["refused"] * 2
    assert sum(d.feedback is not None for d in services.store.list_dialogues()) == 3


def test_guessing_the_researcher_password_locks_the_address_out(tmp_path):
    from tests.support.asgi_server import running as serving
    from webapp.protection.admin_auth import admin_checker, hash_password
    from webapp.protection.login_limits import LoginLimiter
    from webapp.serve import build_app

    password = "correct horse battery staple"
    services = make_services(tmp_path, [FakeCatalogCRS("alpha")], admin_users=("ada",),
                             admin_password_hash=hash_password(password, iterations=1000))
    limiter = LoginLimiter(max_failures=3, lockout_s=600, free_failures=3, base_delay_s=0.1, max_delay_s=0.1)
    app = build_app(services, admin_auth=admin_checker(services.settings), limiter=limiter)
    with serving(app) as url:
        for guess in ("password", "123456", "letmein"):  # bounded: the limit is 3
            with pytest.raises(Exception):
                Client(url + "/admin/", auth=("ada", guess), verbose=False)
        assert limiter.locked_for("127.0.0.1") > 0
        with pytest.raises(Exception):  # now even the right password is refused
            Client(url + "/admin/", auth=("ada", password), verbose=False)
        assert Client(url + "/", verbose=False).predict("human", api_name="/leaderboard")  # the public app is not


PASSWORD = "correct horse battery staple"


@pytest.fixture
def one_port(tmp_path):
    """The one-port server (public pages at /, researcher pages at /admin behind a login), as deployed."""
    from tests.support.asgi_server import running as serving
    from webapp.protection.admin_auth import admin_checker, hash_password
    from webapp.serve import build_app

    servers = contextlib.ExitStack()

    def serve(systems, **settings):
        services = make_services(tmp_path, [FakeCatalogCRS(n) for n in systems], admin_users=("ada",),
                                 admin_password_hash=hash_password(PASSWORD, iterations=1000), **settings)
        app = build_app(services, admin_auth=admin_checker(services.settings))
        return services, servers.enter_context(serving(app))

    with servers:
        yield serve


def test_a_formula_in_a_vote_comment_is_inert_in_votes_csv(one_port):
    services, url = one_port(["alpha", "beta"])
    play(Client(url + "/", verbose=False), comment=FORMULA)
    assert services.store.list_votes()[0].comment == FORMULA  # stored as typed
    researcher = Client(url + "/admin/", auth=("ada", PASSWORD), verbose=False)
    files, _ = researcher.predict([], "all", api_name="/download")
    votes_csv = next(Path(f) for f in files if Path(f).name == "votes.csv")
    with open(votes_csv, newline="", encoding="utf-8") as fh:
        (row,) = list(csv.DictReader(fh))
    assert row["comment"] == "'" + FORMULA  # a spreadsheet shows it as text


def store_injected(services):
    """A battle and a flagged label whose system id carries markup: stored by another tool, or before import
    validation existed (import refuses such ids now: test_injection.py)."""
    a = Dialogue(crs_id=IMG, user=UserInfo(kind=UserKind.HUMAN, id="u"), metadata={"source": "battle"})
    b = Dialogue(crs_id="beta", user=UserInfo(kind=UserKind.HUMAN, id="u"), metadata={"source": "battle"})
    for d in (a, b):
        d.add_user("hi")
        d.add_agent("ok")
        d.feedback = Feedback(sentiment="satisfied")
    a.metadata[LABEL_FLAG] = f"burst {IMG}"
    vote = Vote(battle_id="b1", dialogue_a=a.dialogue_id, dialogue_b=b.dialogue_id, crs_a=IMG, crs_b="beta",
                choice="A", user_id="u", comment=IMG)
    flag = services.store.save_battle_once(a, b, vote, user_key="k", ip_key="i", started_at=utc_now(),
                            burst_votes=100, burst_window_s=60, min_battle_s=3600)  # flagged: too fast
    assert flag
    return a


def test_an_injected_system_id_comes_back_escaped_from_researcher_markdown(one_port):
    services, url = one_port(["beta"])
    store_injected(services)
    researcher = Client(url + "/admin/", auth=("ada", PASSWORD), verbose=False)
    _, card = researcher.predict([], "all", api_name="/download")
    assert "<img" not in card and "attacker.example/x.png\"" not in card
