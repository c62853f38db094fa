"""Evaluation runs held under a lease: which process runs a run, until when, and a cancel any process can ask.

The run's state document stays in `runs.state` (`Store.save_run`); the
columns of revision 0006 say who runs it (`owner`, the store's `owner_id`) and
until when its claim holds (`lease_until`). The owner renews the lease while
the run goes on and reads back `cancel_requested`, which any process sets
(`request_run_cancel`), so a run is cancelled from whichever replica the
researcher's page reaches. A run whose lease expired was interrupted (its
process died); `claim_run` lets exactly one process take it over (resume).

`RunLeases` is a part of `arena.store.Store`.
"""

from __future__ import annotations

from typing import Optional

import sqlalchemy as sa

from arena.store import schema as t
from arena.store.scoring_queue import lease_key
from arena.store.statements import now_key

RUN_LEASE_S = 30.0


class RunLeases:
    """Leases on evaluation runs (a part of `Store`)."""

    def claim_run(self, run_id: str, lease_s: float = RUN_LEASE_S) -> bool:
        """Take the stored run under this process's lease unless another process holds a live one; the
        cancel request of an earlier life is cleared. Returns whether this process now holds it."""
        r = t.runs.c
        free = sa.or_(r.lease_until.is_(None), r.lease_until < now_key(), r.owner == self.owner_id)
        with self.write() as conn:
            return bool(conn.execute(sa.update(t.runs).where(r.run_id == run_id, free).values(
                owner=self.owner_id, lease_until=lease_key(lease_s), cancel_requested=0)).rowcount)

    def renew_run_lease(self, run_id: str, lease_s: float = RUN_LEASE_S) -> Optional[bool]:
        """Extend this process's lease on the run; returns whether a cancel was asked (None: the lease is
        not this process's any more)."""
        r = t.runs.c
        with self.write() as conn:
            done = conn.execute(sa.update(t.runs).where(r.run_id == run_id, r.owner == self.owner_id)
                                .values(lease_until=lease_key(lease_s))).rowcount
            if not done:
                return None
            return bool(conn.execute(sa.select(r.cancel_requested).where(r.run_id == run_id)).scalar())

    def release_run(self, run_id: str) -> None:
        """The run ended here: its lease ends with it."""
        r = t.runs.c
        with self.write() as conn:
            conn.execute(sa.update(t.runs).where(r.run_id == run_id, r.owner == self.owner_id)
                         .values(lease_until=None))

    def request_run_cancel(self, run_id: str) -> bool:
        """Ask the run's owner, in whichever process, to cancel it; False when no live process holds it."""
        r = t.runs.c
        with self.write() as conn:
            return bool(conn.execute(sa.update(t.runs).where(r.run_id == run_id, r.lease_until >= now_key())
                                     .values(cancel_requested=1)).rowcount)

    def run_lease(self, run_id: str) -> Optional[tuple[Optional[str], Optional[str], bool]]:
        """(owner, lease until, cancel asked) of a stored run; None when there is no such run."""
        r = t.runs.c
        with self.read() as conn:
            row = conn.execute(sa.select(r.owner, r.lease_until, r.cancel_requested)
                               .where(r.run_id == run_id)).first()
        return None if row is None else (row.owner, row.lease_until, bool(row.cancel_requested))
