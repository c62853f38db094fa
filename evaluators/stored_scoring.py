"""Scoring dialogues that live in the store, through its durable scoring queue.

The queue and its rules (who is next, how many tries a job gets, what a crash
leaves) belong to the store (`arena.store.scoring_queue`). `QueueScorer` is
the one place that runs its jobs: claim the next job, score the dialogue,
store the scores, mark the job done or failed. Two users:

* the app's `webapp.runs.scorer.BackgroundScorer`, whose worker threads keep
  calling `run_next_job` while the app runs;
* `python -m evaluators score --db PATH`, which queues stored dialogues and
  drains the queue with several workers (`drain`).
"""

from __future__ import annotations

import functools
import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable, Optional

from arena.dialogue import Dialogue, Score
from arena.llm.call_guard import calls_wanted_while
from arena.store import Store
from evaluators.scoring import REGISTRY, default_annotator, score_dialogue

log = logging.getLogger(__name__)


class MissingDialogue(LookupError):
    pass


def first_score_name(metrics: list[str]) -> str:
    """The score a dialogue lacks when it was never scored with these metrics."""
    return REGISTRY[metrics[0]].score_names[0]


def score_stored(store: Store, dialogue_id: str, force: bool, metrics: list[str], *, client: Any = None,
                 annotator: Any = None, settings: Any = None) -> tuple[Dialogue, dict[str, Score]]:
    """Score one stored dialogue without saving anything (a failed metric is unscored, never 0); returns
    the scored dialogue and the scores of `metrics`."""
    dialogue = store.get_dialogue(dialogue_id)
    if dialogue is None:
        raise MissingDialogue(f"no dialogue {dialogue_id!r} in the store")
    scores = score_dialogue(
        dialogue, metrics, client=client, annotator=annotator, force=force, settings=settings
    )
    return dialogue, scores


def score_and_store(store: Store, dialogue_id: str, force: bool, metrics: list[str], *, client: Any = None,
                    annotator: Any = None, settings: Any = None) -> tuple[Dialogue, dict[str, Score]]:
    """Score one stored dialogue and save its scores with the acts they came from; returns the scored
    dialogue and the scores of `metrics`."""
    dialogue, scores = score_stored(store, dialogue_id, force, metrics, client=client, annotator=annotator,
                                    settings=settings)
    store.save_scores(dialogue_id, scores, acts_from=dialogue)
    return dialogue, scores


@dataclass
class JobOutcome:
    """What one job of the queue came to: the scores, or why it failed."""
    dialogue_id: str
    scores: Optional[dict[str, Score]] = None
    error: Optional[str] = None
    lost: bool = False  # another process took the job over meanwhile: this result was thrown away


class QueueScorer:
    """Runs the jobs of a store's scoring queue with one set of metrics, LLM client and act annotator.

    The annotator, when none is given, is the default one, built at the first
    job that needs acts (shared by every worker thread afterwards).
    """

    def __init__(self, store: Store, metrics: list[str], *, client: Any = None, annotator: Any = None,
                 settings: Any = None):
        self.store = store
        self.metrics = list(metrics)
        self.client = client
        self.settings = settings
        self._annotator = annotator
        self._lock = threading.Lock()
        self.failures: dict[str, str] = {}  # dialogue id -> why its last attempt failed (`drain`)

    def annotator(self) -> Any:
        """The act annotator the metrics need (built now if not yet), or None when none needs acts."""
        with self._lock:
            if self._annotator is None and any(REGISTRY[m].needs_acts for m in self.metrics):
                self._annotator = default_annotator(self.settings, self.client)
            return self._annotator

    def run_next_job(self) -> Optional[JobOutcome]:
        """Claim the oldest queued job, score its dialogue and mark the job; None when the queue is empty.
        A failure is logged and returned, never raised: one broken dialogue must not stop the workers."""
        job = self.store.claim_scoring_job()
        if job is None:
            return None
        # Each LLM call first checks that the job is still ours: once another process has taken it over
        # (our lease ran out while we stalled), we stop paying for a result that would be thrown away.
        still_ours = functools.partial(self.store.holds_scoring_job, job.dialogue_id)
        try:
            with calls_wanted_while(still_ours, f"scoring job {job.dialogue_id}"):
                dialogue, scores = score_stored(self.store, job.dialogue_id, job.force, self.metrics,
                                                client=self.client, annotator=self.annotator(),
                                                settings=self.settings)
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
            log.warning("scoring %s failed: %s", job.dialogue_id, error)
            # A missing dialogue will not come back; anything else is tried again while the store allows.
            retry = not isinstance(exc, MissingDialogue)
            ours = self.store.finish_scoring_job(job.dialogue_id, error, retry=retry)
            return JobOutcome(job.dialogue_id, error=error, lost=not ours)
        # Stored only if the job is still ours, in the transaction that marks it done: a result stored once.
        if not self.store.store_scoring_result(job.dialogue_id, scores, acts_from=dialogue):
            return JobOutcome(job.dialogue_id, error="taken over by another process; result discarded",
                              lost=True)
        return JobOutcome(job.dialogue_id, scores=scores)

    def _note_failure(self, outcome: JobOutcome) -> None:
        """Keep why a dialogue's last attempt failed (a job that failed, or a metric that did), for the
        command line's report; a later attempt that worked clears it."""
        self.failures.pop(outcome.dialogue_id, None)
        if outcome.lost:  # another process scores it: not a failure of ours
            return
        failed = {name: score.error for name, score in (outcome.scores or {}).items() if score.error}
        if outcome.error or failed:
            self.failures[outcome.dialogue_id] = outcome.error or "; ".join(
                f"{name}: {error}" for name, error in sorted(failed.items()))

    def drain(self, workers: int = 2, progress: Optional[Callable[[int], None]] = None) -> dict[str, int]:
        """Run queued jobs with `workers` threads until none is left; returns counts of done and failed
        attempts. `progress` gets the number of attempts finished so far after each one."""
        counts = {"done": 0, "failed": 0}
        lock = threading.Lock()
        self.failures = {}

        def worker() -> None:
            while (outcome := self.run_next_job()) is not None:
                with lock:
                    counts["failed" if outcome.error else "done"] += 1
                    finished = counts["done"] + counts["failed"]
                    self._note_failure(outcome)
                if progress is not None:
                    progress(finished)

        with ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="score-db") as pool:
            for future in [pool.submit(worker) for _ in range(max(1, workers))]:
                future.result()
        return counts
