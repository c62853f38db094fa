"""The scoring queue: one `scoring_jobs` row per dialogue to score (Alembic revision 0003, see
`arena.store.schema`).

A job is queued, claimed (`running`), then `done` or `failed`; a failed try
is queued again while it has tries left (`MAX_SCORING_ATTEMPTS`). The queue
lives in the database, so a crash loses nothing.

Several app processes share one queue (revision 0006). A claim is a lease:
the job records its owner (`Store.owner_id`, one per process) and a time
until which the claim holds (`lease_s` from now). While the owner has running
jobs, a keeper of its store renews their leases every `lease_s / 3`, so a
live owner keeps its jobs however long scoring takes (the keeper is a job on
the process's scheduler, `arena.store.jobs_scheduler`). A job whose lease
expired (its owner was killed, or lost the database) is claimed again by any
process's next `claim_scoring_job`, so it is retaken within `lease_s` plus a
worker's poll interval; a live lease is never taken, also not by a process
that starts (`requeue_interrupted` takes back only expired leases). Only the
owner can finish a job, so a result comes back once per claim; and a result
is stored only together with finishing the job (`store_scoring_result`, one
transaction that first checks the job is still this process's), so an owner
that stalled past its lease and lost the job to another process has its late
result thrown away, never stored over the new owner's. `holds_scoring_job` lets
the owner stop calling (paid) LLMs once the job is gone, and `cancel_scoring`,
from any process, ends a job so (its owner finds it gone at its next check).
The lease rules are those of every job of the project (`arena.store.jobs`);
`evaluators.stored_scoring.QueueScorer` runs the jobs.

`ScoringQueue` is a part of `arena.store.Store`: each method is one
transaction on the store's own engine.
"""

from __future__ import annotations

import logging
import os
from typing import Iterable, NamedTuple, Optional

import sqlalchemy as sa

from arena.dialogue import Dialogue, Score
from arena.llm.redaction import redact_optional
from arena.store import schema as t
from arena.store.jobs import Leased, LeaseHolder
from arena.store.jobs_scheduler import Periodic
from arena.store.statements import now_key

log = logging.getLogger(__name__)

JOB_STATES = ("queued", "running", "done", "failed")
MAX_SCORING_ATTEMPTS = 3
# How long a claim holds without renewal: a killed owner's jobs are retaken after at most this long.
# (The app sets `Store.lease_s` from ARENA_SCORING_LEASE_S, `Settings.scoring_lease_s`.)
SCORING_LEASE_S = 60.0
SCORING_JOBS = Leased(t.scoring_jobs, "dialogue_id")
_RUNNING = t.scoring_jobs.c.state == "running"
CANCELLED = "cancelled"  # the error of a job cancelled from any process (`cancel_scoring`)


class ScoringJob(NamedTuple):
    """A claimed job: the dialogue, whether to score it again from scratch, and which try this is."""
    dialogue_id: str
    force: bool
    attempt: int


class ScoringQueue(LeaseHolder):
    """The durable scoring queue (a part of `Store`)."""

    def enqueue_scoring(self, dialogue_ids: Iterable[str], *, force: bool = False) -> int:
        """Queue dialogues for scoring (again, if done or failed); returns how many were queued."""
        now, n = now_key(), 0
        j = t.scoring_jobs.c
        with self.write() as conn:
            for dialogue_id in sorted(set(dialogue_ids)):
                row = conn.execute(sa.select(j.state).where(j.dialogue_id == dialogue_id).with_for_update()).first()
                if row is None:
                    conn.execute(sa.insert(t.scoring_jobs).values(
                        dialogue_id=dialogue_id, state="queued", force=int(force), attempts=0,
                        queued_at=now, updated_at=now))
                elif row.state != "queued" or force:
                    conn.execute(sa.update(t.scoring_jobs).where(j.dialogue_id == dialogue_id).values(
                        state="queued", force=1 if force else j.force, attempts=0, error=None, queued_at=now,
                        updated_at=now))
                else:
                    continue
                n += 1
        return n

    @property
    def lease_s(self) -> float:
        return getattr(self, "_lease_s", SCORING_LEASE_S)

    @lease_s.setter
    def lease_s(self, seconds: float) -> None:
        self._lease_s = float(seconds)

    def claim_scoring_job(self) -> Optional[ScoringJob]:
        """Take the oldest job that is queued (or running under an expired lease) with tries left, and
        mark it running under this process's lease; None when there is none."""
        j = t.scoring_jobs.c
        now = now_key()
        with self.write() as conn:
            claimable = sa.or_(j.state == "queued", sa.and_(j.state == "running", SCORING_JOBS.unheld()))
            query = (sa.select(j.dialogue_id, j.force, j.attempts, j.state)
                     .where(claimable, j.attempts < MAX_SCORING_ATTEMPTS)
                     .order_by(j.queued_at, j.dialogue_id).limit(1))
            if conn.dialect.name == "postgresql":
                query = query.with_for_update(skip_locked=True)
            row = conn.execute(query).first()
            if row is None:
                return None
            if row.state == "running":
                log.warning("scoring job %s: its owner's lease expired; taken over", row.dialogue_id)
            conn.execute(sa.update(t.scoring_jobs).where(j.dialogue_id == row.dialogue_id)
                         .values(state="running", attempts=j.attempts + 1, updated_at=now,
                                 **SCORING_JOBS.lease(self.owner_id, self.lease_s)))
        self._keep_leases()
        return ScoringJob(row.dialogue_id, bool(row.force), row.attempts + 1)

    def renew_scoring_leases(self) -> int:
        """Extend the lease of every job this process is running; returns how many."""
        with self.write() as conn:
            return SCORING_JOBS.renew(conn, self.owner_id, self.lease_s, t.scoring_jobs.c.state == "running")

    def _keep_leases(self) -> None:
        """Start this process's lease keeper (once): it renews while the process runs jobs, then stops."""
        with self._engine_lock:
            keeper = getattr(self, "_lease_keeper", None)
            if keeper is not None and keeper.active and getattr(self, "_lease_pid", 0) == os.getpid():
                return
            self._lease_pid, self._lease_idle = os.getpid(), 0
            self._lease_keeper = Periodic("scoring-leases", self._renew_while_running)
            self._lease_keeper.start(self.lease_s / 3)

    def stop_renewing_leases(self) -> None:
        """Stop renewing this process's leases (the store is closing): its running jobs expire and others
        retake them."""
        keeper = getattr(self, "_lease_keeper", None)
        if keeper is not None:
            keeper.cancel(wait=False)

    def _renew_while_running(self) -> Optional[float]:
        """One renewal; the keeper ends after two renewals that found nothing running."""
        try:
            self._lease_idle = self._lease_idle + 1 if self.renew_scoring_leases() == 0 else 0
        except Exception as exc:  # the database is away: the leases may expire, and others retake the jobs
            log.warning("could not renew scoring leases: %s", exc)
        return None if self._lease_idle >= 2 else self.lease_s / 3

    def finish_scoring_job(self, dialogue_id: str, error: Optional[str] = None, *, retry: bool = False) -> bool:
        """Mark a job this process runs done, or failed. A failure with `retry` goes back to the queue while
        the job has tries left (`MAX_SCORING_ATTEMPTS`). A job re-queued meanwhile stays queued, and a job
        another process took over (this one's lease expired) is left to that process; returns whether the
        job was this process's to finish."""
        j = t.scoring_jobs.c
        if error is None:
            state = sa.literal("done")
        elif retry:
            state = sa.case((j.attempts < MAX_SCORING_ATTEMPTS, "queued"), else_="failed")
        else:
            state = sa.literal("failed")
        with self.write() as conn:
            return bool(conn.execute(
                sa.update(t.scoring_jobs)
                .where(j.dialogue_id == dialogue_id, j.state == "running",
                       sa.or_(j.owner == self.owner_id, j.owner.is_(None)))
                .values(state=state, error=redact_optional(error), force=0 if error is None else j.force,
                        updated_at=now_key(), lease_until=None)).rowcount)

    def holds_scoring_job(self, dialogue_id: str) -> bool:
        """Whether this process still runs the job (no other process took it over, nothing re-queued it)."""
        with self.read() as conn:
            return SCORING_JOBS.holds(conn, dialogue_id, self.owner_id, _RUNNING, live=False)

    def store_scoring_result(self, dialogue_id: str, scores: dict[str, Score], *,
                             acts_from: Optional[Dialogue] = None) -> bool:
        """Save a job's scores (as `save_scores`) and mark it done, in one transaction, only while this
        process still runs the job; returns False, storing nothing, when it does not any more (its lease
        expired and another process took the job, or it was queued again)."""
        j = t.scoring_jobs.c
        with self.write() as conn:
            if not SCORING_JOBS.holds(conn, dialogue_id, self.owner_id, _RUNNING, live=False, lock=True):
                log.warning("scoring job %s is no longer this process's (lease lost); its result is "
                            "discarded", dialogue_id)
                return False
            self._merge_scores(conn, dialogue_id, scores, acts_from)
            conn.execute(sa.update(t.scoring_jobs).where(j.dialogue_id == dialogue_id).values(
                state="done", error=None, force=0, updated_at=now_key(), lease_until=None))
        return True

    def requeue_interrupted(self) -> int:
        """Jobs whose owner died (their lease expired) go back to the queue; a live lease stays put."""
        j = t.scoring_jobs.c
        with self.write() as conn:
            return conn.execute(sa.update(t.scoring_jobs)
                                .where(j.state == "running", SCORING_JOBS.unheld())
                                .values(state="queued", owner=None, lease_until=None,
                                        updated_at=now_key())).rowcount

    def cancel_scoring(self, dialogue_id: str) -> bool:
        """End a queued or running job from any process: it is marked failed ("cancelled"), so no process
        claims it, and its owner, if it runs it, finds it gone at its next check before an LLM call and
        stores nothing. Returns whether there was such a job."""
        j = t.scoring_jobs.c
        with self.write() as conn:
            return bool(conn.execute(sa.update(t.scoring_jobs)
                                     .where(j.dialogue_id == dialogue_id, j.state.in_(("queued", "running")))
                                     .values(state="failed", error=CANCELLED, owner=None, lease_until=None,
                                             updated_at=now_key())).rowcount)

    def enqueue_unscored(self, metric: str) -> int:
        """Queue every ended dialogue with no value for `metric` that is not queued or running already."""
        d, s, j = t.dialogues.c, t.scores.c, t.scoring_jobs.c
        with self.read() as conn:
            ids = conn.execute(sa.select(d.dialogue_id).where(
                d.ended == 1,
                ~sa.exists().where(s.dialogue_id == d.dialogue_id, s.metric == metric, s.value.is_not(None)),
                ~sa.exists().where(j.dialogue_id == d.dialogue_id, j.state.in_(("queued", "running"))),
            )).scalars().all()
        return self.enqueue_scoring(ids) if ids else 0

    def scoring_counts(self) -> dict[str, int]:
        """How many jobs are in each state (every state named, 0 when none)."""
        j = t.scoring_jobs.c
        with self.read() as conn:
            rows = conn.execute(sa.select(j.state, sa.func.count()).group_by(j.state)).all()
        counts = {state: 0 for state in JOB_STATES}
        counts.update({state: n for state, n in rows})
        return counts

    def failed_jobs(self, limit: int = 50) -> list[tuple[str, str]]:
        """(dialogue id, error) of failed jobs, the latest first."""
        j = t.scoring_jobs.c
        with self.read() as conn:
            rows = conn.execute(sa.select(j.dialogue_id, j.error).where(j.state == "failed")
                                .order_by(j.updated_at.desc()).limit(limit)).all()
        return [(r.dialogue_id, r.error or "") for r in rows]
