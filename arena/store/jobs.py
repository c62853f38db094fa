"""The project's one durable job system: work claimed under a lease in the database, by any app process.

Two kinds of work use it: scoring jobs (`arena.store.scoring_queue`, one
`scoring_jobs` row per dialogue) and evaluation runs (`arena.store.run_leases`,
one `runs` row per run). Both tables carry the same two columns (revision
0006): `owner`, the process that holds the row (`LeaseHolder.owner_id`, one per
process), and `lease_until`, the time key until which its claim holds. The
rules, written once here for both tables (`Leased`):

- claim: a row is taken only when no other process holds a live lease on it;
- renew: the owner moves `lease_until` forward while it works (its lease
  keeper, a job on the process's scheduler, `arena.store.jobs_scheduler`);
- retake: a row whose lease ran out (its process was killed, or lost the
  database) is claimable again by any process;
- stored once: a result is written in the same transaction that checks the
  row is still the writer's (`Leased.holds`; on PostgreSQL the row stays
  locked, so a claim waits for the write or the write sees the claim);
- paid once: before each LLM call the worker asks whether it still holds the
  row, so a job taken over elsewhere stops paying at once;
- cancel: any process writes the request into the row, and the owner reads it
  at its next renewal or check.

Why the project's own module and not a job library: see `docs/jobs.md` (none
of the libraries weighed serves both SQLite and PostgreSQL with leases that
another process can retake).
"""

from __future__ import annotations

import os
import threading
import uuid
from dataclasses import dataclass
from datetime import timedelta

import sqlalchemy as sa

from arena.dialogue import utc_now
from arena.store.statements import now_key, utc_key

_OWNER_LOCK = threading.Lock()


def lease_key(seconds: float) -> str:
    """The time key `seconds` from now."""
    return utc_key(utc_now() + timedelta(seconds=seconds))


def new_owner_id() -> str:
    """A name for one process's claims: unique across processes and hosts."""
    return f"{os.getpid()}-{uuid.uuid4().hex[:12]}"


class LeaseHolder:
    """Who this process's claims belong to (a part of `arena.store.Store`)."""

    @property
    def owner_id(self) -> str:
        """Made once per process: a forked child is another owner."""
        owner = getattr(self, "_owner", None)
        if owner is None or owner[0] != os.getpid():
            with _OWNER_LOCK:  # worker threads asking first at once must not each make their own
                owner = getattr(self, "_owner", None)
                if owner is None or owner[0] != os.getpid():
                    owner = self._owner = (os.getpid(), new_owner_id())
        return owner[1]


@dataclass(frozen=True)
class Leased:
    """The lease rules on one table whose rows are jobs: `key` names the column of a job's id."""

    table: sa.Table
    key: str

    @property
    def c(self):
        return self.table.c

    def unheld(self) -> sa.ColumnElement:
        """No live lease: never claimed, released, or run out."""
        return sa.or_(self.c.lease_until.is_(None), self.c.lease_until < now_key())

    def live(self) -> sa.ColumnElement:
        """Under a lease that has not run out."""
        return self.c.lease_until >= now_key()

    def expired(self) -> sa.ColumnElement:
        """Claimed, never released, and run out: the owner died or stalled."""
        return sa.and_(self.c.lease_until.is_not(None), self.c.lease_until < now_key())

    def claimable_by(self, owner: str) -> sa.ColumnElement:
        return sa.or_(self.unheld(), self.c.owner == owner)

    @staticmethod
    def lease(owner: str, lease_s: float) -> dict[str, str]:
        """The values that put a row under `owner`'s lease for `lease_s` seconds from now."""
        return {"owner": owner, "lease_until": lease_key(lease_s)}

    def _id_is(self, job_id: str) -> sa.ColumnElement:
        return self.c[self.key] == job_id

    def claim(self, conn, job_id: str, owner: str, lease_s: float, *where: sa.ColumnElement,
              **values) -> bool:
        """Take the row unless another process holds a live lease on it (and `where` holds)."""
        return bool(conn.execute(sa.update(self.table)
                                 .where(self._id_is(job_id), self.claimable_by(owner), *where)
                                 .values(**self.lease(owner, lease_s), **values)).rowcount)

    def renew(self, conn, owner: str, lease_s: float, *where: sa.ColumnElement) -> int:
        """Extend `owner`'s leases on the rows `where` selects; returns how many."""
        return conn.execute(sa.update(self.table).where(self.c.owner == owner, *where)
                            .values(lease_until=lease_key(lease_s))).rowcount

    def release(self, conn, job_id: str, owner: str, **values) -> int:
        """The owner is done with the row: its lease ends."""
        return conn.execute(sa.update(self.table).where(self._id_is(job_id), self.c.owner == owner)
                            .values(lease_until=None, **values)).rowcount

    def held(self, job_id: str, owner: str, *where: sa.ColumnElement, live: bool = True) -> sa.Select:
        """The row while `owner` holds it (with `live`, only under a lease that has not run out)."""
        query = sa.select(self.c[self.key]).where(self._id_is(job_id), self.c.owner == owner, *where)
        return query.where(self.live()) if live else query

    def holds(self, conn, job_id: str, owner: str, *where: sa.ColumnElement, live: bool = True,
              lock: bool = False) -> bool:
        """Whether `owner` holds the row; with `lock` (before a write that only the holder may make) the row
        stays locked on PostgreSQL until the transaction ends."""
        query = self.held(job_id, owner, *where, live=live)
        if lock and conn.dialect.name == "postgresql":
            query = query.with_for_update()  # a claim waits for this write, or this write sees the claim
        return conn.execute(query).first() is not None
