"""Evaluation runs shared by two app processes on one PostgreSQL database: a replica killed with `kill -9`
in the middle of a run has the run resumed by the live replica within the run lease plus the resume poll,
from the dialogues already stored, none run or stored twice."""

from __future__ import annotations

import time

import pytest
import sqlalchemy as sa

from arena.store import Store
from arena.store import schema as t
from tests.replicas.replicas_support import wait_until

pytestmark = pytest.mark.slow  # two app processes and a PostgreSQL cluster

LEASE_S, RESUME_S = 3.0, 0.5
RUNS = {"ARENA_RUN_LEASE_S": str(LEASE_S), "ARENA_RUN_RESUME_S": str(RESUME_S)}
N = 24


def versions(store: Store, run_id: str) -> dict[str, int]:
    d = t.dialogues.c
    with store.read() as conn:
        rows = conn.execute(sa.select(d.dialogue_id, d.version).where(d.dialogue_id.like(f"{run_id}-%")))
        return dict(rows.all())


def test_a_killed_replicas_run_is_resumed_by_the_live_one(postgres_server, replicas):
    db = postgres_server.create_database("replica_runs")
    store = Store(db)
    r1 = replicas(db, "r1", "--runs", env=RUNS)
    r2 = replicas(db, "r2", "--runs", env=RUNS)
    run_id = r1.call("run_start", n_dialogues=N)["run"]
    wait_until(lambda: len(versions(store, run_id)) >= 3, 60, "r1 storing its first dialogues")
    assert store.run_lease(run_id)[0] == r1.owner
    r1.kill()  # kill -9 in the middle of the run
    killed_at = time.monotonic()
    before = versions(store, run_id)
    assert 3 <= len(before) < N

    wait_until(lambda: store.run_lease(run_id)[0] == r2.owner, LEASE_S + RESUME_S + 10,
               "r2 resuming r1's run")
    resumed_after = time.monotonic() - killed_at
    wait_until(lambda: (store.get_run(run_id) or {}).get("status") == "finished", 120, "r2 finishing the run")
    print(f"run resumed {resumed_after:.1f} s after kill -9 (lease {LEASE_S} s, resume poll {RESUME_S} s)")
    assert resumed_after <= LEASE_S + RESUME_S + 2
    stored = versions(store, run_id)
    assert len(stored) == N and set(stored.values()) == {1}  # every dialogue once, none redone
    assert {i: stored[i] for i in before} == before
    state = store.get_run(run_id)
    assert state["done"] == N and state.get("resumed_at")
    assert store.run_lease(run_id)[1] is None  # released by r2 when the run ended
    store.close()
