"""Evaluation runs held under a lease: a cancel asked from another app process reaches the run, and a run
whose process died is taken over by exactly one process. Each `Store` object claims as its own owner, so
two stores in this process stand for two app processes."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import sqlalchemy as sa

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sim"))

from sim_fakes import AttributeCRS, SlowCRS, fake_llm, question_nlu, simulator_responder, spec  # noqa: E402

from arena.runtime.config import Settings  # noqa: E402
from arena.store import Store  # noqa: E402
from arena.store import schema as t  # noqa: E402
from crs.registry import CRSRegistry  # noqa: E402
from simulators import build_simulator, catalog_view  # noqa: E402
from webapp.runs.evaluation import FINAL_STATES, RunConfig, RunManager  # noqa: E402


def manager(location: str, systems: dict, llm=None, **settings) -> RunManager:
    return RunManager(store=Store(location), registry=CRSRegistry([spec(n, c) for n, c in systems.items()]),
                      llm=llm or fake_llm(simulator_responder()),
                      settings=Settings(db_path=location, turn_timeout_s=10, **settings),
                      simulator_factory=lambda kind, **kw: build_simulator(kind, nlu=question_nlu, **kw))


def versions(store: Store, run_id: str) -> dict[str, int]:
    """How many times each stored dialogue of the run was written (its version)."""
    d = t.dialogues.c
    with store.read() as conn:
        rows = conn.execute(sa.select(d.dialogue_id, d.version).where(d.dialogue_id.like(f"{run_id}-%")))
        return dict(rows.all())


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


def test_a_stalled_owner_stores_nothing_once_another_process_resumed_its_run(db_location):
    view = catalog_view("redial")
    calls = []  # when the stalled owner called its LLM
    responder = simulator_responder()

    def counted(request):
        calls.append(time.monotonic())
        return responder(request)

    stalled = manager(db_location, {"slow": SlowCRS(AttributeCRS(view), 0.05)}, llm=fake_llm(counted),
                      run_lease_s=1.0)
    resumer = manager(db_location, {"slow": SlowCRS(AttributeCRS(view), 0.01)}, run_lease_s=1.0)
    wake = threading.Event()
    renew = stalled.store.renew_run_lease

    def stalled_renewal(*args, **kwargs):  # the owner's process stalls (its renewals hang) ...
        assert wake.wait(60)
        return renew(*args, **kwargs)

    run_id = stalled.start(RunConfig(systems=["slow"], simulator="llm_us", n_dialogues=30, max_turns=10,
                                     concurrency=2))
    wait_for = time.monotonic() + 30
    while len(versions(resumer.store, run_id)) < 2 and time.monotonic() < wait_for:
        time.sleep(0.05)
    stalled.store.renew_run_lease = stalled_renewal
    time.sleep(1.2)  # ... past its lease; the lease is made to have run out whatever the lease length
    with resumer.store.write() as conn:
        conn.execute(sa.update(t.runs).where(t.runs.c.run_id == run_id).values(lease_until="2000-01-01"))
    assert resumer.status(run_id)["status"] == "interrupted"
    assert resumer.start(None, run_id, resume=True) == run_id  # another process resumes it
    taken_over = time.monotonic()
    before = versions(resumer.store, run_id)
    wake.set()  # the owner wakes up and goes on
    assert stalled.wait(run_id, timeout=60) and resumer.wait(run_id, timeout=120)

    stored = versions(resumer.store, run_id)
    assert len(stored) == 30  # every dialogue of the run is stored ...
    assert set(stored.values()) == {1}  # ... once: none written again by the stalled owner, none redone
    assert {i: stored[i] for i in before} == before
    assert [c for c in calls if c > taken_over] == []  # no LLM call of the stalled owner after the takeover
    state = resumer.status(run_id)
    assert state["status"] == "finished" and state["done"] == 30 and state.get("resumed_at")
    assert resumer.store.run_lease(run_id)[1] is None  # released by its new owner
    stalled.store.close()
    resumer.store.close()


def test_an_owner_that_cannot_renew_in_time_gives_the_run_up_and_a_live_process_resumes_it(db_location):
    view = catalog_view("redial")
    owner = manager(db_location, {"slow": SlowCRS(AttributeCRS(view), 0.05)}, run_lease_s=1.0)
    other = manager(db_location, {"slow": SlowCRS(AttributeCRS(view), 0.01)}, run_lease_s=1.0)
    wake = threading.Event()
    renew = owner.store.renew_run_lease

    def unreachable(*args, **kwargs):  # the owner's renewals cannot reach the database for a while
        assert wake.wait(60)
        return renew(*args, **kwargs)

    run_id = owner.start(RunConfig(systems=["slow"], simulator="llm_us", n_dialogues=20, max_turns=10,
                                   concurrency=2))
    deadline = time.monotonic() + 30
    while len(versions(other.store, run_id)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    owner.store.renew_run_lease = unreachable
    assert owner.wait(run_id, timeout=30)  # it gives the run up rather than go on without a lease
    wake.set()
    assert owner.store.run_lease(run_id)[1] is not None  # not released: the lease runs out by itself
    deadline = time.monotonic() + 10
    while not other.resume_interrupted():  # what each process's resumer does every few seconds
        assert time.monotonic() < deadline, "the run was not resumed"
        time.sleep(0.2)
    assert other.wait(run_id, timeout=120)
    stored = versions(other.store, run_id)
    assert len(stored) == 20 and set(stored.values()) == {1}
    assert other.status(run_id)["status"] == "finished"
    owner.store.close()
    other.store.close()


def test_a_run_whose_process_died_while_cancelling_ends_cancelled_and_is_not_run_again(db_location):
    view = catalog_view("redial")
    died = Store(db_location)
    died.save_run("run-c", {"run_id": "run-c", "status": "cancelling", "heartbeat": time.time(), "done": 1,
                            "config": {"systems": ["slow"], "simulator": "llm_us", "n_dialogues": 5}})
    assert died.claim_run("run-c", lease_s=0.3)
    died.save_run("run-f", {"run_id": "run-f", "status": "finished", "heartbeat": time.time(), "done": 5})
    assert died.claim_run("run-f", lease_s=0.3)  # died after its last word, before releasing its lease
    time.sleep(0.5)
    other = manager(db_location, {"slow": AttributeCRS(view)})
    assert other.resume_interrupted() == []  # neither needs running
    assert other.status("run-c")["status"] == "cancelled" and other.status("run-f")["status"] == "finished"
    assert other.store.run_lease("run-c")[1] is None and other.store.run_lease("run-f")[1] is None
    assert other.store.expired_runs() == []
    died.close()
    other.store.close()


class GatedCRS(AttributeCRS):
    """Replies at once, except its first reply, which waits until the test opens the gate."""

    def __init__(self, catalog, gate: threading.Event):
        super().__init__(catalog)
        self.gate, self.waiting = gate, threading.Event()

    def respond(self, dialogue):
        if dialogue.num_turns == 1:
            self.waiting.set()
            assert self.gate.wait(60)
        return super().respond(dialogue)


class BuiltManager:
    """A worker recipe that hands over a manager built already (the Ray task calls its recipe once)."""

    def __init__(self, built: RunManager, name: str):
        self.built, self.name = built, name

    def __call__(self) -> RunManager:
        return self.built

    def __repr__(self) -> str:  # the task keeps one manager per recipe, told apart by repr
        return f"BuiltManager({self.name!r})"


def test_a_ray_workers_dialogue_makes_no_llm_call_once_its_run_is_taken_over(db_location):
    """A Ray task runs a dialogue of a run that another process (the driver) holds; the worker holds no lease
    of its own. Once a third process has taken the run over, the worker's dialogue makes no further LLM
    call (each would be paid for a dialogue the store then refuses) and stores nothing."""
    from dataclasses import asdict

    from webapp.runs.evaluation import run_dialogue_id, simulate_in_worker

    driver, resumer = Store(db_location), Store(db_location)
    config = RunConfig(systems=["gated"], simulator="llm_us", n_dialogues=1, max_turns=10).validate()
    run_id = "run-ray-worker"
    driver.save_run(run_id, {"run_id": run_id, "status": "running", "heartbeat": time.time(),
                             "config": asdict(config)})
    assert driver.claim_run(run_id, lease_s=30)
    calls: list[float] = []
    responder = simulator_responder()

    def counted(request):
        calls.append(time.monotonic())
        return responder(request)

    gate = threading.Event()
    crs = GatedCRS(catalog_view("redial"), gate)
    worker = manager(db_location, {"gated": crs}, llm=fake_llm(counted))
    outcome: dict = {}
    task = threading.Thread(target=lambda: outcome.update(stored=simulate_in_worker(
        BuiltManager(worker, db_location), run_id, asdict(config), "gated", 0, driver.owner_id)))
    task.start()
    assert crs.waiting.wait(30) and calls  # the dialogue is under way: the seeker's first message was paid
    # The driver stalls past its lease and another process resumes the run.
    with resumer.write() as conn:
        conn.execute(sa.update(t.runs).where(t.runs.c.run_id == run_id).values(lease_until="2000-01-01"))
    assert resumer.claim_run(run_id, lease_s=30)
    before = len(calls)
    gate.set()
    task.join(60)
    assert not task.is_alive()
    assert len(calls) == before  # not one LLM call after the takeover
    assert outcome["stored"] is None
    assert worker.store.get_dialogue(run_dialogue_id(run_id, "gated", 0)) is None
    for store in (driver, resumer, worker.store):
        store.close()


def test_a_renewal_in_flight_as_the_run_ends_does_not_outlive_its_release(db_location):
    view = catalog_view("redial")
    owner = manager(db_location, {"slow": SlowCRS(AttributeCRS(view), 0.05)}, run_lease_s=8.0)
    renew, held_back = owner.store.renew_run_lease, threading.Event()

    def late(run_id, *args, **kwargs):  # the renewal reaches the database only after the run's last word
        held_back.set()
        deadline = time.monotonic() + 30
        while owner.status(run_id)["status"] not in FINAL_STATES and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.3)  # long enough for a release that does not wait for it to come first
        return renew(run_id, *args, **kwargs)

    owner.store.renew_run_lease = late
    run_id = owner.start(RunConfig(systems=["slow"], simulator="llm_us", n_dialogues=24, max_turns=6,
                                   concurrency=2))  # long enough for a renewal (every second) to start
    assert owner.wait(run_id, timeout=60) and held_back.is_set()
    time.sleep(0.6)  # any renewal still on its way has landed by now
    assert owner.store.run_lease(run_id)[1] is None  # released after the late renewal, not before it
    other = manager(db_location, {"slow": AttributeCRS(view)})
    assert other.store.claim_run(run_id)  # so another process may take it up at once
    owner.store.close()
    other.store.close()
