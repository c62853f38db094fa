"""Hard limits hold under 32 simultaneous requests (issue 38: 32 simultaneous votes with a limit of 5
stored 32, and 32 labels with a limit of 5 stored 9), on SQLite and PostgreSQL: votes, labels and new
study workers, per address (fresh sessions) and per session, through the session rules the pages call."""

from __future__ import annotations

import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "battle"))
sys.path.insert(0, str(Path(__file__).parent.parent / "study"))

from battle_support import FakeCatalogCRS, fake_spec  # noqa: E402
from study_support import pid, publish  # noqa: E402

from arena.runtime.config import Settings  # noqa: E402
from arena.dialogue import Dialogue, UserInfo, UserKind  # noqa: E402
from arena.llm import FakeProvider, LLMClient  # noqa: E402
from arena.store import Store  # noqa: E402
from crs.registry import CRSRegistry  # noqa: E402
from webapp.protection.vote_limits import LimitReached, origin_keys_of  # noqa: E402
from webapp.services import Services  # noqa: E402
from webapp.sessions import study as study_flow  # noqa: E402
from webapp.sessions.refusal import Refusal  # noqa: E402
from webapp.sessions.turn_step import store_label  # noqa: E402

BURST = 32
CAP = 5


@pytest.fixture
def services(db_location, tmp_path):
    settings = Settings(db_path=db_location, cache_dir=tmp_path / "cache", llm_provider="fake",
                        max_votes_per_user=CAP, max_votes_per_ip=CAP, max_rated_per_user=CAP,
                        max_rated_per_ip=CAP, max_study_workers_per_user=CAP, max_study_workers_per_ip=CAP,
                        burst_labels=10_000, min_user_turns=1)
    svc = Services(settings=settings, store=Store(db_location), llm=LLMClient(FakeProvider(default="ok")),
                   registry=CRSRegistry([fake_spec(FakeCatalogCRS(n), True) for n in ("alpha", "beta", "gamma")]))
    yield svc
    svc.store.close()


def request_from(address: str, session: str):
    """What the pages hand the session rules: Gradio's request, with its session and client address."""
    return SimpleNamespace(session_hash=session, client=SimpleNamespace(host=address))


def all_at_once(action):
    barrier = threading.Barrier(BURST)

    def go(i):
        barrier.wait()
        try:
            action(i)
            return True
        except (LimitReached, Refusal):
            return False

    with ThreadPoolExecutor(BURST) as pool:
        return sum(pool.map(go, range(BURST)))


@pytest.mark.parametrize("same", ["address", "session"])
def test_votes_stop_at_the_cap(services, same):
    def keys(i):
        session = "one-session" if same == "session" else f"session-{i}"
        address = "198.51.100.1" if same == "address" else f"198.51.100.{i + 1}"
        return origin_keys_of(services, request_from(address, session))

    assert all_at_once(lambda i: services.vote_limiter.admit("vote", *keys(i)).count()) == CAP


@pytest.mark.parametrize("same", ["address", "session"])
def test_labels_stop_at_the_cap_and_only_the_admitted_are_stored(services, same):
    dialogues = []
    for i in range(BURST):
        d = Dialogue(crs_id="alpha", user=UserInfo(kind=UserKind.HUMAN, id=f"p{i}"))
        services.runner_for("alpha").user_turn(d, "a comedy please")
        dialogues.append(d)

    def label(i):
        session = "one-session" if same == "session" else f"session-{i}"
        address = "198.51.100.1" if same == "address" else f"198.51.100.{i + 1}"
        store_label(services, dialogues[i], "satisfied", request=request_from(address, session))

    assert all_at_once(label) == CAP
    assert sum(d.feedback is not None for d in services.store.list_dialogues()) == CAP


@pytest.mark.parametrize("same", ["address", "session"])
def test_new_study_workers_stop_at_the_cap(services, same):
    publish(services)

    def enter(i):
        session = "one-session" if same == "session" else f"session-{i}"
        address = "198.51.100.1" if same == "address" else f"198.51.100.{i + 1}"
        study_flow.enter(services, {"study": "pilot", "worker_id": pid(f"worker-{i}")},
                         request_from(address, session))

    assert all_at_once(enter) == CAP
    assert len(services.store.list_participants("pilot")) == CAP
    # A returning worker is never counted again; a new one from the same place is refused.
    admitted = services.store.list_participants("pilot")[0].pseudonym
    returning = next(i for i in range(BURST)
                     if study_flow.worker_pseudonym(services, "pilot", pid(f"worker-{i}")) == admitted)
    place = ("198.51.100.1", "one-session")  # at its cap in either case
    study_flow.enter(services, {"study": "pilot", "worker_id": pid(f"worker-{returning}")},
                     request_from(*place))
    with pytest.raises(Refusal, match="Too many new participants"):
        study_flow.enter(services, {"study": "pilot", "worker_id": pid("worker-new")}, request_from(*place))
