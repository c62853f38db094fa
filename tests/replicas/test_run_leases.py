"""Evaluation runs held under a lease: a cancel asked from another app process reaches the run, and a run
whose process died is taken over by exactly one process. Each `Store` object claims as its own owner, so
two stores in this process stand for two app processes."""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sim"))

from sim_fakes import AttributeCRS, SlowCRS, fake_llm, question_nlu, simulator_responder, spec  # noqa: E402

from arena.config import Settings  # noqa: E402
from arena.store import Store  # noqa: E402
from crs.registry import CRSRegistry  # noqa: E402
from simulators import build_simulator, catalog_view  # noqa: E402
from webapp.runs.evaluation import RunConfig, RunManager  # noqa: E402


def manager(location: str, systems: dict) -> RunManager:
    return RunManager(store=Store(location), registry=CRSRegistry([spec(n, c) for n, c in systems.items()]),
                      llm=fake_llm(simulator_responder()), settings=Settings(db_path=location, turn_timeout_s=10),
                      simulator_factory=lambda kind, **kw: build_simulator(kind, nlu=question_nlu, **kw))


def test_a_run_is_cancelled_from_another_process(db_location):
    view = catalog_view("redial")
    slow = SlowCRS(AttributeCRS(view), 0.05)
    owner = manager(db_location, {"slow": slow})
    elsewhere = manager(db_location, {"slow": AttributeCRS(view)})  # another replica, same database
    run_id = owner.start(RunConfig(systems=["slow"], simulator="llm_us", n_dialogues=40, max_turns=20,
                                   concurrency=2))
    assert slow.called.wait(10)
    assert elsewhere.status(run_id)["status"] == "running"
    assert elsewhere.cancel(run_id)  # the researcher's page reached the other replica
    assert elsewhere.status(run_id)["status"] in ("cancelling", "cancelled")
    assert owner.wait(run_id, timeout=30)
    state = elsewhere.status(run_id)
    assert state["status"] == "cancelled" and state["done"] < 40
    assert not elsewhere.cancel(run_id)  # over: nothing runs it any more
    owner.store.close()
    elsewhere.store.close()


def test_an_expired_run_lease_is_taken_by_one_process_only(db_location):
    a, b, c = Store(db_location), Store(db_location), Store(db_location)
    a.save_run("run-x", {"status": "running", "heartbeat": time.time()})
    assert a.claim_run("run-x", lease_s=0.5)
    assert not b.claim_run("run-x") and not c.claim_run("run-x")  # a live lease is never taken
    assert a.renew_run_lease("run-x", lease_s=0.5) is False  # renewed; no cancel asked
    time.sleep(0.7)  # a's process died: nothing renewed its lease
    assert b.request_run_cancel("run-x") is False  # nobody holds it to cancel
    assert b.claim_run("run-x") and not c.claim_run("run-x")
    assert a.renew_run_lease("run-x") is None  # the old owner learns the run is not its own any more
    for store in (a, b, c):
        store.close()
