"""The one scheduler of a process: every piece of periodic background work runs as a job on it.

The work is APScheduler's (3.x, `BackgroundScheduler` with its in-memory job
store): nothing here needs to outlive the process, because each process
schedules its own periodic work when it starts, and what must survive a
crash lives in the database (`arena.store.jobs`). The jobs of the app are the
lease keepers (scoring jobs, evaluation runs), the search for interrupted
runs, the Hub mirror, the leaderboard job and the warm start; `docs/jobs.md`
lists them.

`Periodic` is one such piece of work: a step that returns how long to wait
before it runs again (None: it is done). It is scheduled as a one-off job
that schedules its successor when it ends, so a slow step never overlaps
itself, the wait can change from one run to the next (a failed Hub push is
retried sooner), and `wake` brings the next run forward (a page waiting for
the leaderboard). `cancel` removes the job and, by default, waits for a run
in progress, which is what a clean shutdown needs: a lease renewal in flight
lands before the lease is released.

Each run of a job gets its own daemon thread (`DaemonThreadExecutor`): a step
that blocks (a model loading, a Hub push) delays no other job, and the
interpreter does not wait for one at exit, as it would for the worker threads
of a thread pool.
"""

from __future__ import annotations

import logging
import os
import threading
import uuid
from datetime import datetime, timedelta, timezone
from typing import Callable, Optional

from apscheduler.executors.base import BaseExecutor, run_job
from apscheduler.jobstores.base import JobLookupError
from apscheduler.schedulers.background import BackgroundScheduler

log = logging.getLogger(__name__)

_LOCK = threading.Lock()
_CURRENT: Optional[tuple[int, BackgroundScheduler]] = None


class DaemonThreadExecutor(BaseExecutor):
    """Runs each job in a daemon thread of its own (see the module's docstring for why not a pool)."""

    def _do_submit_job(self, job, run_times) -> None:
        def run() -> None:
            try:
                events = run_job(job, job._jobstore_alias, run_times, self._logger.name)
            except BaseException as exc:  # reported like the pool executors do
                self._run_job_error(job.id, exc, exc.__traceback__)
            else:
                self._run_job_success(job.id, events)

        threading.Thread(target=run, name=job.name, daemon=True).start()


def scheduler() -> BackgroundScheduler:
    """This process's scheduler, started on first use (a forked child starts its own: threads do not
    survive a fork)."""
    global _CURRENT
    with _LOCK:
        if _CURRENT is None or _CURRENT[0] != os.getpid():
            started = BackgroundScheduler(
                executors={"default": DaemonThreadExecutor()}, timezone=timezone.utc, daemon=True,
                # A run due while the scheduler was busy still runs (late), once.
                job_defaults={"coalesce": True, "max_instances": 1, "misfire_grace_time": None})
            started.start()
            _CURRENT = (os.getpid(), started)
        return _CURRENT[1]


def _at(delay_s: float) -> datetime:
    return datetime.now(timezone.utc) + timedelta(seconds=max(0.0, delay_s))


class Periodic:
    """A step run again and again on the process's scheduler: `step()` returns the seconds until its next
    run, or None when there is nothing more to do."""

    def __init__(self, name: str, step: Callable[[], Optional[float]], *, retry_s: float = 5.0):
        self.name = name
        self._prefix = f"{name}-{uuid.uuid4().hex[:10]}"
        self._runs = 0
        self.job_id = ""  # the scheduler's id of the next run
        self._step = step
        # The wait after a step raised: steps catch their own errors, but a bug must not end the work.
        self._retry_s = retry_s
        self._running = threading.Lock()  # held while a step runs: `cancel(wait=True)` waits for it
        self._state = threading.Lock()
        self._cancelled = False
        self._in_step = False
        self._again = False
        self._done = threading.Event()
        self._runner: Optional[int] = None

    def start(self, delay_s: float = 0.0) -> "Periodic":
        """Run the first step after `delay_s` seconds."""
        with self._state:
            self._add(delay_s)
        return self

    def _add(self, delay_s: float) -> None:
        """Schedule the next run (with `_state` held, so that a cancel is never undone)."""
        if self._cancelled:
            return
        # Each run is a job of its own id: the scheduler removes a one-off job by its id once it has handed
        # it to the executor, which may be after the step ended and scheduled its successor.
        self._runs += 1
        self.job_id = f"{self._prefix}-{self._runs}"
        scheduler().add_job(self._run, "date", run_date=_at(delay_s), id=self.job_id, name=self.name)

    def _run(self) -> None:
        with self._running:
            with self._state:
                if self._cancelled:
                    return
                self._in_step, self._again = True, False
            self._runner = threading.get_ident()
            try:
                delay = self._step()
            except Exception:
                log.exception("periodic job %s failed; it runs again in %.1f s", self.name, self._retry_s)
                delay = self._retry_s
            finally:
                self._runner = None
            with self._state:
                self._in_step = False
                if delay is None:
                    self._done.set()
                else:
                    self._add(0.0 if self._again else delay)

    def wake(self) -> None:
        """Run the next step now (right after the current one, if one is running)."""
        with self._state:
            if self._cancelled:
                return
            if self._in_step:
                self._again = True
                return
            try:
                scheduler().modify_job(self.job_id, next_run_time=_at(0.0))
            except JobLookupError:  # the run is starting this moment, or the job is done
                pass

    def cancel(self, wait: bool = True, timeout: Optional[float] = None) -> None:
        """No more runs; with `wait`, until the run in progress (if any) has ended (at most `timeout` s)."""
        with self._state:
            self._cancelled = True
            job_id = self.job_id
        try:
            scheduler().remove_job(job_id)
        except JobLookupError:  # running now, or never scheduled again
            pass
        if wait and self._runner != threading.get_ident():  # a step that cancels its own job does not wait
            if self._running.acquire(timeout=-1 if timeout is None else timeout):
                self._running.release()
        self._done.set()

    @property
    def active(self) -> bool:
        """Whether more runs are to come (neither cancelled nor done)."""
        return not self._done.is_set()
