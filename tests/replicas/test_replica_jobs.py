"""Scoring jobs shared by two app processes on one PostgreSQL database: a replica that starts leaves the
other's running jobs alone, and a replica killed with `kill -9` has its jobs retaken within the lease."""

from __future__ import annotations

import time

import pytest

from arena.store import Store
from tests.acts.acts_helpers import make_dialogue
from tests.replicas.replicas_support import scoring_jobs, wait_until

pytestmark = pytest.mark.slow  # two app processes and a PostgreSQL cluster

LEASE_S = 4.0
LEASE = {"ARENA_SCORING_LEASE_S": str(LEASE_S)}


def finished(dialogue_id: str):
    d = make_dialogue([("U", "hi, any thriller?", None), ("A", "Try Heat (1995).", None),
                       ("U", "great, I'll watch it", None)], dialogue_id=dialogue_id, sentiment="satisfied")
    d.end("feedback")
    return d



def test_a_starting_replica_leaves_live_jobs_alone_and_a_killed_replicas_jobs_are_retaken(postgres_server,
                                                                                         replicas):
    db = postgres_server.create_database("replica_jobs")
    store = Store(db)
    ids = [f"d-{i}" for i in range(4)]
    store.save_dialogues([finished(i) for i in ids])
    # r1 starts first and queues the four unscored dialogues; its two workers each hold one for a long while.
    r1 = replicas(db, "r1", "--scorer-delay", "30", "--workers", "2", env=LEASE)
    held = wait_until(lambda: sorted(i for i, (s, o, _) in scoring_jobs(store).items() if s == "running" and o == r1.owner)
                      if len([1 for s, o, _ in scoring_jobs(store).values() if s == "running" and o == r1.owner]) == 2
                      else None, 60, "r1 running two jobs")

    # r2 starts while they run (its start re-queues interrupted jobs): it scores the other two, never r1's.
    r2 = replicas(db, "r2", "--scorer-delay", "0.01", "--workers", "2", env=LEASE)
    rest = sorted(set(ids) - set(held))
    wait_until(lambda: all(scoring_jobs(store)[i][0] == "done" for i in rest), 60, "r2 scoring the queued jobs")
    time.sleep(LEASE_S)  # longer than a lease: r1 renews its own, so they stay with it
    now = scoring_jobs(store)
    assert {i: now[i] for i in held} == {i: ("running", r1.owner, 1) for i in held}
    assert {i: now[i] for i in rest} == {i: ("done", r2.owner, 1) for i in rest}

    # kill -9 of r1 mid-scoring: r2 takes both jobs over once their lease runs out, and scores each once.
    r1.kill()
    killed_at = time.monotonic()
    wait_until(lambda: all(scoring_jobs(store)[i][1] == r2.owner for i in held), LEASE_S + 10, "r2 taking r1's jobs")
    taken_after = time.monotonic() - killed_at
    wait_until(lambda: all(scoring_jobs(store)[i][0] == "done" for i in held), 60, "r2 scoring r1's jobs")
    assert taken_after <= LEASE_S + 5
    final = scoring_jobs(store)
    assert {i: final[i] for i in held} == {i: ("done", r2.owner, 2) for i in held}  # one try lost with r1
    assert all(final[i][2] == 1 for i in rest)  # nothing scored twice
    for i in ids:
        scores = store.get_dialogue(i).scores
        assert set(scores) >= {"rdl", "sr"} and scores["sr"].value == 1.0
    store.close()
