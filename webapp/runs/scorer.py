"""The background scorer: scores finished dialogues off the request path and stores the scores."""

from __future__ import annotations

import logging
import threading
from concurrent.futures import Future, wait
from typing import Optional

from arena.llm.budget import budget_of
from arena.runtime.config import Settings
from arena.llm import LLMClient
from arena.store import Store
from evaluators.acts.base import ActAnnotator
from evaluators.scoring import parse_metrics
from evaluators.stored_scoring import JobOutcome, QueueScorer, first_score_name

log = logging.getLogger(__name__)

# How often an idle worker looks for jobs queued by other processes.
POLL_SECONDS = 2.0


class BackgroundScorer:
    """Scores finished dialogues off the request path, through the store's durable job queue.

    `submit(dialogue_id)` writes a job to the store (a dialogue already queued
    is not queued twice) and wakes a worker; `workers` threads run the queue's
    jobs through `jobs` (`evaluators.stored_scoring.QueueScorer`, which claims,
    scores and marks them). Jobs queued by another process (the
    researcher app, the command line) are picked up by polling. `resume()`
    (called when the app starts) puts jobs a crash left running back in the
    queue and queues every ended dialogue that was never scored. Nothing
    raised while scoring reaches the caller: failures are logged, kept in
    `errors` and in the job row.
    """

    def __init__(self, store: Store, metrics: Optional[list[str]] = None, client: Optional[LLMClient] = None, *,
                 annotator: Optional[ActAnnotator] = None, settings: Optional[Settings] = None, workers: int = 1,
                 poll_s: float = POLL_SECONDS):
        self.store = store
        if settings is not None:  # how long this process's claims hold unrenewed (arena.store.scoring_queue)
            store.lease_s = settings.scoring_lease_s
        self.metrics = list(metrics or ["acts", "rdl", "srrr", "sr"])
        parse_metrics(",".join(self.metrics))
        self.client = client
        self.settings = settings
        self.jobs = QueueScorer(store, self.metrics, client=client, annotator=annotator, settings=settings)
        self._poll_s = poll_s
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._futures: dict[str, Future] = {}
        self._stopping = False
        self.errors: dict[str, str] = {}
        self.completed = 0
        self._threads = [threading.Thread(target=self._work, name=f"scorer-{i}", daemon=True)
                         for i in range(max(1, workers))]
        for thread in self._threads:
            thread.start()

    def load_annotator(self) -> Optional[ActAnnotator]:
        """Build the act annotator and load its model now (a warm start) rather than on the first job."""
        annotator = self.jobs.annotator()
        if annotator is not None and hasattr(annotator, "model"):
            annotator.model  # the offline annotator's network, shared by the process
        return annotator

    def resume(self) -> int:
        """Re-queue jobs a dead process left running and every ended dialogue never scored; returns how many."""
        back = self.store.requeue_interrupted()
        new = self.store.enqueue_unscored(first_score_name(self.metrics))
        if back or new:
            log.info("scoring resumed: %d interrupted job(s), %d unscored dialogue(s) queued", back, new)
            self._notify()
        return back + new

    def submit(self, dialogue_id: str, *, force: bool = False) -> Optional[Future]:
        """Queue a dialogue in the store; returns a Future of its scores (or the one already waiting).

        After `shutdown` the job is still written to the store (the next start runs it) and None is returned.
        """
        with self._lock:
            future = self._futures.get(dialogue_id)
            if future is not None:
                return future
            stopping = self._stopping
            if not stopping:  # registered first, so a worker finishing at once still finds it
                future = self._futures[dialogue_id] = Future()
        try:
            self.store.enqueue_scoring([dialogue_id], force=force)
        except Exception:
            with self._lock:
                self._futures.pop(dialogue_id, None)
            raise
        if stopping:
            log.warning("scorer stopping: %s stays queued for the next start", dialogue_id)
            return None
        self._notify()
        return future

    def _notify(self) -> None:
        with self._lock:
            self._wake.notify_all()

    def _finished(self, outcome: JobOutcome) -> None:
        with self._lock:
            if outcome.lost:  # another process took the job over and stores its result
                pass
            elif outcome.error is None:
                self.completed += 1
                self.errors.pop(outcome.dialogue_id, None)
            else:
                self.errors[outcome.dialogue_id] = outcome.error
            future = self._futures.pop(outcome.dialogue_id, None)
        if future is not None and not future.done():
            future.set_result(outcome.scores or {})

    def _work(self) -> None:
        idle_s = self._poll_s
        while True:
            with self._lock:
                if self._stopping:
                    return
            budget = budget_of(self.client)
            if budget is not None and budget.exhausted():  # spent: leave the jobs queued until calls age out
                with self._lock:
                    if self._stopping:
                        return
                    self._wake.wait(timeout=min(max(budget.seconds_until_free(), 0.05), 60.0))
                continue
            try:
                outcome = self.jobs.run_next_job()
                idle_s = self._poll_s
            except Exception as exc:  # the store is unreachable: wait, then try again
                log.warning("scorer could not read its queue: %s", exc)
                outcome, idle_s = None, min(idle_s * 2, 30.0)
            busy = outcome is not None
            if busy:
                self._finished(outcome)
            if not busy:
                with self._lock:
                    if self._stopping:
                        return
                    self._wake.wait(timeout=idle_s)

    def pending(self) -> int:
        """Dialogues submitted by this process whose scores are not stored yet."""
        with self._lock:
            return len(self._futures)

    def wait(self, timeout: Optional[float] = None) -> bool:
        """Block until everything submitted so far is done; False on timeout."""
        with self._lock:
            futures = list(self._futures.values())
        done, not_done = wait(futures, timeout=timeout)
        return not not_done

    def shutdown(self, wait: bool = True) -> None:
        """Stop taking jobs (queued ones stay in the store for the next start); `wait` for running ones."""
        with self._lock:
            self._stopping = True
            self._wake.notify_all()
            futures = list(self._futures.values())
        if wait:
            for thread in self._threads:
                thread.join()
        for future in futures:
            future.cancel()
