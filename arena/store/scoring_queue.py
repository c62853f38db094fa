"""The scoring queue: one `scoring_jobs` row per dialogue to score (Alembic revision 0003, see
`arena.store.schema`).

A job is queued, claimed (`running`), then `done` or `failed`; a failed try
is queued again while it has tries left (`MAX_SCORING_ATTEMPTS`). The queue
lives in the database, so a crash loses nothing.

Several app processes share one queue (revision 0006). A claim is a lease:
the job records its owner (`Store.owner_id`, one per process) and a time
until which the claim holds (`lease_s` from now). While the owner has running
jobs, a thread of its store renews their leases every `lease_s / 3`, so a
live owner keeps its jobs however long scoring takes. A job whose lease
expired (its owner was killed, or lost the database) is claimed again by any
process's next `claim_scoring_job`, so it is retaken within `lease_s` plus a
worker's poll interval; a live lease is never taken, also not by a process
that starts (`requeue_interrupted` takes back only expired leases). Only the
owner can finish a job, so a result comes back once per claim; and a result
is stored only together with finishing the job (`store_scoring_result`, one
transaction that first checks the job is still this process's), so an owner
that stalled past its lease and lost the job to another process has its late
result thrown away, never stored over the new owner's. `holds_scoring_job` lets
the owner stop calling (paid) LLMs once the job is gone. These are all the
queue's rules; `evaluators.stored_scoring.QueueScorer` runs the jobs.

`ScoringQueue` is a part of `arena.store.Store`: each method is one
transaction on the store's own engine.
"""

from __future__ import annotations

import logging
import os
import threading
import uuid
from datetime import timedelta
from typing import Iterable, NamedTuple, Optional

import sqlalchemy as sa

from arena.dialogue import Dialogue, Score, utc_now
from arena.llm.redaction import redact_optional
from arena.store import schema as t
from arena.store.statements import now_key, utc_key

log = logging.getLogger(__name__)

JOB_STATES = ("queued", "running", "done", "failed")
MAX_SCORING_ATTEMPTS = 3
# How long a claim holds without renewal: a killed owner's jobs are retaken after at most this long.
# (The app sets `Store.lease_s` from ARENA_SCORING_LEASE_S, `Settings.scoring_lease_s`.)
SCORING_LEASE_S = 60.0
_OWNER_LOCK = threading.Lock()


def lease_key(seconds: float) -> str:
    """The time key `seconds` from now."""
    return utc_key(utc_now() + timedelta(seconds=seconds))


def new_owner_id() -> str:
    """A name for one process's claims: unique across processes and hosts."""
    return f"{os.getpid()}-{uuid.uuid4().hex[:12]}"


class ScoringJob(NamedTuple):
    """A claimed job: the dialogue, whether to score it again from scratch, and which try this is."""
    dialogue_id: str
    force: bool
    attempt: int


class ScoringQueue:
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
    def owner_id(self) -> str:
        """Who this process's claims belong to (made once per process: a forked child is another owner)."""
        owner = getattr(self, "_owner", None)
        if owner is None or owner[0] != os.getpid():
            with _OWNER_LOCK:  # worker threads asking first at once must not each make their own
                owner = getattr(self, "_owner", None)
                if owner is None or owner[0] != os.getpid():
                    owner = self._owner = (os.getpid(), new_owner_id())
        return owner[1]

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
            claimable = sa.or_(j.state == "queued",
                               sa.and_(j.state == "running", sa.or_(j.lease_until.is_(None), j.lease_until < now)))
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
                                 owner=self.owner_id, lease_until=lease_key(self.lease_s)))
        self._keep_leases()
        return ScoringJob(row.dialogue_id, bool(row.force), row.attempts + 1)

    def renew_scoring_leases(self) -> int:
        """Extend the lease of every job this process is running; returns how many."""
        j = t.scoring_jobs.c
        with self.write() as conn:
            return conn.execute(sa.update(t.scoring_jobs)
                                .where(j.state == "running", j.owner == self.owner_id)
                                .values(lease_until=lease_key(self.lease_s))).rowcount

    def _keep_leases(self) -> None:
        """Start this process's lease keeper (once): it renews while the process runs jobs, then stops."""
        with self._engine_lock:
            keeper = getattr(self, "_lease_keeper", None)
            if keeper is not None and keeper.is_alive() and getattr(self, "_lease_pid", 0) == os.getpid():
                return
            self._lease_pid = os.getpid()
            self._lease_stop = threading.Event()
            self._lease_keeper = threading.Thread(target=self._renew_while_running, args=(self._lease_stop,),
                                                  daemon=True, name="scoring-leases")
            self._lease_keeper.start()

    def stop_renewing_leases(self) -> None:
        """Stop renewing this process's leases (the store is closing): its running jobs expire and others
        retake them."""
        stop = getattr(self, "_lease_stop", None)
        if stop is not None:
            stop.set()

    def _renew_while_running(self, stop: threading.Event) -> None:
        idle = 0
        while idle < 2 and not stop.wait(self.lease_s / 3):  # two renewals with nothing running: done
            try:
                idle = idle + 1 if self.renew_scoring_leases() == 0 else 0
            except Exception as exc:  # the database is away: the leases may expire, and others retake the jobs
                log.warning("could not renew scoring leases: %s", exc)
        with self._engine_lock:
            if getattr(self, "_lease_keeper", None) is threading.current_thread():
                self._lease_keeper = None

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

    def _held_job(self, dialogue_id: str) -> sa.Select:
        """The job row, when this process still runs it (locked for the rest of the transaction)."""
        j = t.scoring_jobs.c
        return (sa.select(j.dialogue_id)
                .where(j.dialogue_id == dialogue_id, j.state == "running", j.owner == self.owner_id))

    def holds_scoring_job(self, dialogue_id: str) -> bool:
        """Whether this process still runs the job (no other process took it over, nothing re-queued it)."""
        with self.read() as conn:
            return conn.execute(self._held_job(dialogue_id)).first() is not None

    def store_scoring_result(self, dialogue_id: str, scores: dict[str, Score], *,
                             acts_from: Optional[Dialogue] = None) -> bool:
        """Save a job's scores (as `save_scores`) and mark it done, in one transaction, only while this
        process still runs the job; returns False, storing nothing, when it does not any more (its lease
        expired and another process took the job, or it was queued again)."""
        j = t.scoring_jobs.c
        with self.write() as conn:
            held = self._held_job(dialogue_id)
            if conn.dialect.name == "postgresql":
                held = held.with_for_update()  # a claim waits for this write, or this write sees the claim
            if conn.execute(held).first() is None:
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
                                .where(j.state == "running",
                                       sa.or_(j.lease_until.is_(None), j.lease_until < now_key()))
                                .values(state="queued", owner=None, lease_until=None,
                                        updated_at=now_key())).rowcount

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
