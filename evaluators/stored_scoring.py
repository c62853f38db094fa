"""Scoring dialogues that live in the store, through its durable job queue.

The queue is the `scoring_jobs` table (`arena.store.safety`): a job is claimed,
run and marked done in the store, so a crash loses nothing (a restart puts
jobs left running back in the queue). Two users:

* the app's `webapp.runs.scorer.BackgroundScorer`, whose workers keep
  taking jobs while the app runs;
* `python -m evaluators score --db PATH`, which queues stored dialogues and
  drains the queue with several workers (`drain_queue`).
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Optional

from arena.dialogue import Dialogue, Score
from arena.store import Store
from arena.store.safety import claim_scoring_job, finish_scoring_job
from evaluators.scoring import REGISTRY, score_dialogue

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 3


class MissingDialogue(LookupError):
    pass


def first_score_name(metrics: list[str]) -> str:
    """The score a dialogue lacks when it was never scored with these metrics."""
    return REGISTRY[metrics[0]].score_names[0]


def score_and_store(store: Store, dialogue_id: str, force: bool, metrics: list[str], *, client: Any = None,
                    annotator: Any = None, settings: Any = None) -> tuple[Dialogue, dict[str, Score]]:
    """Score one stored dialogue and save its scores with the acts they came from (a failed metric is
    stored unscored, never 0); returns the scored dialogue and the scores of `metrics`."""
    dialogue = store.get_dialogue(dialogue_id)
    if dialogue is None:
        raise MissingDialogue(f"no dialogue {dialogue_id!r} in the store")
    scores = score_dialogue(dialogue, metrics, client=client, annotator=annotator, force=force, settings=settings)
    store.save_scores(dialogue_id, scores, acts_from=dialogue)
    return dialogue, scores


def run_job(store: Store, dialogue_id: str, force: bool, metrics: list[str], *, client: Any = None,
            annotator: Any = None, settings: Any = None) -> dict[str, Score]:
    """One job of the queue: `score_and_store`, returning the scores."""
    return score_and_store(store, dialogue_id, force, metrics, client=client, annotator=annotator,
                           settings=settings)[1]


def take_and_run(store: Store, run: Callable[[str, bool], dict[str, Score]],
                 on_done: Optional[Callable[[str, Optional[dict[str, Score]], Optional[str]], None]] = None) -> bool:
    """Claim one queued job and run it; False when the queue is empty."""
    job = claim_scoring_job(store, MAX_ATTEMPTS)
    if job is None:
        return False
    dialogue_id, force, attempt = job
    try:
        scores = run(dialogue_id, force)
    except Exception as exc:  # one broken dialogue must not stop the workers
        error = f"{type(exc).__name__}: {exc}"
        log.warning("scoring %s failed: %s", dialogue_id, error)
        # A missing dialogue will not come back; anything else gets up to MAX_ATTEMPTS tries.
        retry = attempt < MAX_ATTEMPTS and not isinstance(exc, MissingDialogue)
        finish_scoring_job(store, dialogue_id, error, retry=retry)
        if on_done is not None:
            on_done(dialogue_id, None, error)
        return True
    finish_scoring_job(store, dialogue_id)
    if on_done is not None:
        on_done(dialogue_id, scores, None)
    return True


def drain_queue(store: Store, run: Callable[[str, bool], dict[str, Score]], workers: int = 2,
                progress: Optional[Callable[[int], None]] = None) -> dict[str, int]:
    """Run queued jobs with `workers` threads until none is left; returns counts of done and failed."""
    counts = {"done": 0, "failed": 0}
    lock = threading.Lock()

    def on_done(_dialogue_id: str, _scores: Any, error: Optional[str]) -> None:
        with lock:
            counts["failed" if error else "done"] += 1
            finished = counts["done"] + counts["failed"]
        if progress is not None:
            progress(finished)

    def worker() -> None:
        while take_and_run(store, run, on_done):
            pass

    with ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="score-db") as pool:
        for future in [pool.submit(worker) for _ in range(max(1, workers))]:
            future.result()
    return counts
