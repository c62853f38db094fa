"""Score the dialogues of a database in bulk as Ray tasks, storing each result as it ends.

    python -m evaluators score --db DB_OR_URL [--metrics acts,rdl,srrr,sr] --engine ray [--address ADDR]

(On threads, `score --db` drains the store's durable scoring queue instead: `evaluators.stored_scoring`.)

Only dialogues still missing one of the requested scores are scored (all of
them with `--force`), so an interrupted run picks up where it stopped. Each
task loads its dialogue from the store, scores it and merges the scores back
(`Store.save_scores`: keyed by dialogue and metric, newest wins), so a task
retried after its worker died cannot store anything twice. A dialogue whose
task fails for good stays unscored and is reported; nothing is written as 0.
"""

from __future__ import annotations

import threading
import traceback
from dataclasses import dataclass
from typing import Any, Iterator, Optional

from arena.runtime import distributed
from arena.store import Store
from evaluators.annotator_choice import annotator_named, client_if_needed
from evaluators.scoring import REGISTRY, score_dialogue


@dataclass(frozen=True)
class ScoringJob:
    """Everything a worker needs to score a dialogue of the database (picklable for Ray)."""

    location: str
    metrics: tuple[str, ...]
    settings: Any
    annotator: str = "auto"
    force: bool = False

    def score_names(self) -> list[str]:
        return [name for m in self.metrics for name in REGISTRY[m].score_names]


_WORKERS: dict[str, tuple[Store, Any, Any]] = {}
_WORKERS_LOCK = threading.Lock()


def _worker(job: ScoringJob) -> tuple[Store, Any, Any]:
    """This process's store, LLM client and annotator for `job` (built once)."""
    key = repr(job)
    with _WORKERS_LOCK:
        if key not in _WORKERS:
            client = client_if_needed(list(job.metrics), job.annotator, job.settings)
            _WORKERS[key] = (Store(job.location), client, annotator_named(job.annotator, client))
        return _WORKERS[key]


def score_stored(job: ScoringJob, dialogue_id: str) -> dict[str, Any]:
    """Score one stored dialogue and save its scores with their acts; what a thread or a Ray task runs."""
    store, client, annotator = _worker(job)
    dialogue = store.get_dialogue(dialogue_id)
    if dialogue is None:
        return {"dialogue_id": dialogue_id, "error": "no longer in the database"}
    scores = score_dialogue(dialogue, list(job.metrics), client=client, annotator=annotator, force=job.force,
                            settings=job.settings)
    store.save_scores(dialogue_id, scores, acts_from=dialogue)
    return {"dialogue_id": dialogue_id, "failed": sorted(n for n, s in scores.items() if s.error)}


def pending(store: Store, job: ScoringJob, limit: Optional[int] = None) -> list[str]:
    """Ids of the dialogues (with turns) to score, oldest first."""
    if job.force:
        ids = [d.dialogue_id for d in store.list_dialogues() if d.utterances]
    else:
        missing: set[str] = set()
        for name in job.score_names():
            missing.update(d.dialogue_id for d in store.list_dialogues(missing_score=name) if d.utterances)
        ids = [d.dialogue_id for d in store.list_dialogues() if d.dialogue_id in missing]
    return ids[:limit] if limit is not None else ids


def score_all(job: ScoringJob, ids: list[str], *, address: Optional[str] = None,
              concurrency: int = 4, task_cpus: float = 1.0) -> Iterator[dict[str, Any]]:
    """Score `ids` as Ray tasks; yields one outcome per dialogue as it finishes (`error` set when it
    could not be scored)."""
    distributed.connect(address)
    items = [(job, i) for i in ids]
    for (_, dialogue_id), result, error in distributed.map_unordered(
            score_stored, items, max_in_flight=concurrency, task_cpus=task_cpus):
        yield result if error is None else {"dialogue_id": dialogue_id, "error": _describe(error)}


def _describe(exc: BaseException) -> str:
    return "".join(traceback.format_exception_only(type(exc), exc)).strip()[:500]
