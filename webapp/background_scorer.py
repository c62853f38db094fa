"""The background scorer: scores finished dialogues off the request path and stores the scores."""

from __future__ import annotations

import logging
import threading
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any, Optional

from arena.config import Settings
from arena.dialogue import Score
from arena.llm import LLMClient
from arena.store import Store
from evaluators.scoring import REGISTRY, default_annotator, parse_metrics, score_dialogue

log = logging.getLogger(__name__)


class BackgroundScorer:
    """Scores finished dialogues off the request path and stores the scores.

    `submit(dialogue_id)` queues one dialogue (a dialogue already queued is
    not queued twice); a worker loads it from the store, runs
    `score_dialogue` and saves the scores with `store.save_scores`. Nothing
    raised while scoring reaches the caller: failures are logged and kept in
    `errors`.
    """

    def __init__(self, store: Store, metrics: Optional[list[str]] = None, client: Optional[LLMClient] = None, *,
                 annotator: Any = None, settings: Optional[Settings] = None, workers: int = 1):
        self.store = store
        self.metrics = list(metrics or ["acts", "rdl", "srrr", "sr"])
        parse_metrics(",".join(self.metrics))
        self.client = client
        self.settings = settings
        self._annotator = annotator
        self._pool = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="scorer")
        self._lock = threading.Lock()
        self._pending: dict[str, Any] = {}
        self.errors: dict[str, str] = {}
        self.completed = 0

    def _annotator_for_run(self):
        with self._lock:
            if self._annotator is None and any(REGISTRY[m].needs_acts for m in self.metrics):
                self._annotator = default_annotator(self.settings, self.client)
            return self._annotator

    def submit(self, dialogue_id: str, *, force: bool = False):
        """Queue a dialogue; returns a Future of its scores (or the one already queued)."""
        with self._lock:
            future = self._pending.get(dialogue_id)
            if future is not None:
                return future
            try:
                future = self._pool.submit(self._run, dialogue_id, force)
            except RuntimeError as exc:  # pool shut down: the app is stopping
                log.warning("not scoring %s: %s", dialogue_id, exc)
                return None
            self._pending[dialogue_id] = future
        future.add_done_callback(lambda _f, key=dialogue_id: self._done(key))
        return future

    def _done(self, dialogue_id: str) -> None:
        with self._lock:
            self._pending.pop(dialogue_id, None)

    def _run(self, dialogue_id: str, force: bool) -> dict[str, Score]:
        try:
            dialogue = self.store.get_dialogue(dialogue_id)
            if dialogue is None:
                raise LookupError(f"no dialogue {dialogue_id!r} in the store")
            scores = score_dialogue(dialogue, self.metrics, client=self.client,
                                    annotator=self._annotator_for_run(), force=force, settings=self.settings)
            self.store.save_scores(dialogue_id, scores)
            with self._lock:
                self.completed += 1
                self.errors.pop(dialogue_id, None)
            return scores
        except Exception as exc:
            log.exception("background scoring of %s failed", dialogue_id)
            with self._lock:
                self.errors[dialogue_id] = f"{type(exc).__name__}: {exc}"
            return {}

    def pending(self) -> int:
        with self._lock:
            return len(self._pending)

    def wait(self, timeout: Optional[float] = None) -> bool:
        """Block until everything queued so far is done; False on timeout."""
        with self._lock:
            futures = list(self._pending.values())
        done, not_done = wait(futures, timeout=timeout)
        return not not_done

    def shutdown(self, wait: bool = True) -> None:
        self._pool.shutdown(wait=wait, cancel_futures=not wait)
