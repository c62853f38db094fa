"""A result is stored once and paid once: an owner that stalls past its lease, while another process takes
its work over, stores nothing late and stops calling the LLM. Each `Store` object claims as its own owner,
so two stores in this process stand for two app processes."""

from __future__ import annotations

import threading
import time

import sqlalchemy as sa

from arena.llm import FakeProvider, LLMClient, RetryPolicy
from arena.store import Store
from arena.store import schema as t
from evaluators.acts.llm import LLMActAnnotator
from evaluators.stored_scoring import QueueScorer, score_stored
from tests.acts.test_acts_scoring import keyword_llm
from tests.replicas.test_replica_jobs import finished

METRICS = ["rdl", "sr"]


class StallingJudge:
    """An act-labelling model whose first call stalls until the test lets it go; counts the calls."""

    def __init__(self):
        self.calls = 0
        self.stalled = threading.Event()
        self.go_on = threading.Event()

    def __call__(self, request) -> str:
        self.calls += 1
        if self.calls == 1:
            self.stalled.set()
            assert self.go_on.wait(30)
        return keyword_llm(request)


def scorer(store: Store, respond) -> QueueScorer:
    judge = LLMClient(FakeProvider(respond), retry=RetryPolicy(max_retries=0, base_delay_s=0.01))
    return QueueScorer(store, METRICS, client=judge, annotator=LLMActAnnotator(judge, use_catalog=False))


def score_rows(store: Store, dialogue_id: str) -> int:
    s = t.scores.c
    with store.read() as conn:
        return conn.execute(sa.select(sa.func.count()).where(s.dialogue_id == dialogue_id)).scalar()


def job(store: Store, dialogue_id: str) -> tuple:
    j = t.scoring_jobs.c
    with store.read() as conn:
        row = conn.execute(sa.select(j.state, j.owner, j.attempts)
                           .where(j.dialogue_id == dialogue_id)).first()
    return tuple(row)


def test_a_stalled_owners_late_result_is_discarded_and_its_llm_calls_stop(db_location):
    stalled, taker = Store(db_location), Store(db_location)
    stalled.lease_s = taker.lease_s = 0.5
    stalled.save_dialogue(finished("d-1"))
    stalled.enqueue_scoring(["d-1"])
    judge = StallingJudge()
    outcome = {}
    worker = threading.Thread(target=lambda: outcome.update(result=scorer(stalled, judge).run_next_job()))
    worker.start()
    assert judge.stalled.wait(30)
    stalled.stop_renewing_leases()  # the owner stalls: nothing renews its lease any more
    time.sleep(0.8)
    taken = taker.claim_scoring_job()  # another process takes the job over once the lease ran out
    assert taken is not None and taken.dialogue_id == "d-1" and taken.attempt == 2
    calls_before = judge.calls
    judge.go_on.set()  # the stalled owner wakes up and goes on
    worker.join(30)
    assert score_rows(taker, "d-1") == 0  # nothing of the late result stored
    assert judge.calls == calls_before  # not one more (paid) call after the job was gone
    result = outcome["result"]
    assert result.lost and result.scores is None
    assert job(taker, "d-1") == ("running", taker.owner_id, 2)  # the job stays the new owner's

    # The new owner's result is the one stored, once, and finishes the job.
    rescored = scorer(taker, keyword_llm)
    dialogue = taker.get_dialogue("d-1")
    _, scores = score_stored(taker, "d-1", False, METRICS, client=rescored.client,
                             annotator=rescored.annotator())
    assert taker.store_scoring_result("d-1", scores, acts_from=dialogue)
    assert not stalled.store_scoring_result("d-1", scores)  # never a second time from the old owner
    assert job(taker, "d-1") == ("done", taker.owner_id, 2)
    assert taker.get_dialogue("d-1").scores["sr"].value == 1.0
    stalled.close()
    taker.close()


def test_a_result_is_stored_only_while_the_job_is_held(db_location):
    a, b = Store(db_location), Store(db_location)
    a.save_dialogue(finished("d-2"))
    a.enqueue_scoring(["d-2"])
    assert a.claim_scoring_job().dialogue_id == "d-2"
    assert a.holds_scoring_job("d-2") and not b.holds_scoring_job("d-2")
    outcome = scorer(b, keyword_llm)
    dialogue = a.get_dialogue("d-2")
    _, scores = score_stored(a, "d-2", False, METRICS, client=outcome.client, annotator=outcome.annotator())
    assert not b.store_scoring_result("d-2", scores)  # not b's job: nothing stored
    assert score_rows(a, "d-2") == 0 and job(a, "d-2")[0] == "running"
    assert a.store_scoring_result("d-2", scores, acts_from=dialogue)
    assert score_rows(a, "d-2") == len(scores) and job(a, "d-2")[0] == "done"
    assert not a.holds_scoring_job("d-2")
    assert not a.store_scoring_result("d-2", scores)  # done: a second result is never stored
    a.close()
    b.close()


def test_worker_threads_asking_at_once_share_one_owner(db_location):
    """The scorer's worker threads claim as soon as they start: the first of them to ask must not make
    an owner of its own, or its claims would not count as this process's (nor be renewed)."""
    for _ in range(20):
        store = Store(db_location)
        start = threading.Barrier(8)
        seen = []

        def ask() -> None:
            start.wait()
            seen.append(store.owner_id)

        threads = [threading.Thread(target=ask) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(set(seen)) == 1
        store.close()
