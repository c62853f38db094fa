"""Resuming the evaluation runs of app processes that died, from whichever process is alive.

A run is held under a lease that its process renews (`arena.store.run_leases`);
when the process dies the lease runs out and the run shows as interrupted.
Every serving process looks for such runs every `Settings.run_resume_s`
(`keep_resuming`, a job on the process's scheduler started by
`webapp.serve.main`), and exactly one of them
takes each over (`Store.claim_run`): a run being cancelled ends as cancelled,
any other goes on from the dialogues it had stored. A run therefore goes on
within `run_lease_s + run_resume_s` of its process's death (35 s by default).

`ResumesInterruptedRuns` is a part of `webapp.runs.evaluation.RunManager`.
"""

from __future__ import annotations

import logging
from datetime import datetime, timezone
from typing import Any, Optional

from arena.store.jobs_scheduler import Periodic

log = logging.getLogger("webapp.runs.evaluation")


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class ResumesInterruptedRuns:
    """Taking over the runs whose process died (a part of `RunManager`)."""

    def resume_interrupted(self) -> list[str]:
        """Take over every run whose process stopped renewing its lease: a run that was being cancelled ends
        as cancelled, any other goes on here from its stored dialogues. Exactly one process gets each run
        (`Store.claim_run`). Returns the ids of the runs resumed here."""
        resumed = []
        for run_id in self.store.expired_runs():
            if self.is_active(run_id) or run_id in self._not_resumable:
                continue
            state = self.store.get_run(run_id)
            held = self.store.run_lease(run_id)
            if state is None or held is None:
                continue
            status, cancel_asked = state.get("status"), held[2]
            if status not in ("queued", "running", "cancelling"):  # its process died right after its last word
                self._close_interrupted(run_id, state, cancelled=False)
                continue
            if status == "cancelling" or cancel_asked:
                self._close_interrupted(run_id, state, cancelled=True)
                continue
            try:
                self.start(None, run_id, resume=True)
            except ValueError as exc:  # another process was first, or this one lacks a system of the run
                if "still running" not in str(exc):
                    self._not_resumable.add(run_id)
                    log.warning("run %s was interrupted but cannot be resumed here: %s", run_id, exc)
                continue
            log.warning("run %s: its process stopped renewing its lease; resumed here", run_id)
            resumed.append(run_id)
        return resumed

    def _close_interrupted(self, run_id: str, state: dict[str, Any], *, cancelled: bool) -> None:
        """An expired run that needs no more work: a cancel was asked of it (it ends cancelled), or its
        process died right after its last word (its lease is released)."""
        if not self.store.claim_run(run_id, self.lease_s):
            return
        if cancelled:
            state = dict(state, status="cancelled", finished_at=_now(), active={})
            self.store.save_owned_run(run_id, state)
            log.warning("run %s: its process died while it was being cancelled; marked cancelled", run_id)
        self.store.release_run(run_id)

    def keep_resuming(self, every_s: Optional[float] = None) -> None:
        """Look for interrupted runs now and every `every_s` (`Settings.run_resume_s`), a job on the process's
        scheduler, until `stop_resuming`; an interrupted run is resumed within `run_lease_s + every_s`."""
        every_s = float(every_s if every_s is not None else getattr(self.settings, "run_resume_s", 5.0))

        def look() -> float:
            try:
                self.resume_interrupted()
            except Exception:  # the store is away: the next look tries again
                log.exception("could not look for interrupted runs")
            return every_s

        with self._lock:
            if self._resumer is not None:
                return
            self._resumer = Periodic("run-resumer", look)
        self._resumer.start()

    def stop_resuming(self) -> None:
        with self._lock:
            resumer, self._resumer = self._resumer, None
        if resumer is not None:
            resumer.cancel()
