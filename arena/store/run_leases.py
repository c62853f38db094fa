"""Evaluation runs held under a lease: which process runs a run, until when, and a cancel any process can ask.

The run's state document stays in `runs.state` (`Store.save_run`); the
columns of revision 0006 say who runs it (`owner`, the store's `owner_id`) and
until when its claim holds (`lease_until`). The owner renews the lease while
the run goes on and reads back `cancel_requested`, which any process sets
(`request_run_cancel`), so a run is cancelled from whichever replica the
researcher's page reaches. A run whose lease expired was interrupted (its
process died); `claim_run` lets exactly one process take it over (resume), and
`expired_runs` lists them for the processes that look for runs to resume.

What a run stores is stored only under its lease: its state document
(`save_owned_run`) and each of its dialogues (`save_run_dialogue`) are written
in a transaction that first checks the run is still the writer's. An owner
that stalled past its lease while another process resumed the run therefore
stores nothing late: no dialogue twice, no state over the new owner's.

The lease rules are those of every job of the project (`arena.store.jobs`,
which scoring jobs follow too). `RunLeases` is a part of `arena.store.Store`.
"""

from __future__ import annotations

import json
import logging
from typing import Optional

import sqlalchemy as sa

from arena.dialogue import Dialogue
from arena.store import schema as t
from arena.store.jobs import Leased, LeaseHolder
from arena.store.statements import now_key

log = logging.getLogger(__name__)

RUN_LEASE_S = 30.0
RUNS = Leased(t.runs, "run_id")


class RunLeases(LeaseHolder):
    """Leases on evaluation runs (a part of `Store`)."""

    def claim_run(self, run_id: str, lease_s: float = RUN_LEASE_S) -> bool:
        """Take the stored run under this process's lease unless another process holds a live one; the
        cancel request of an earlier life is cleared. Returns whether this process now holds it."""
        with self.write() as conn:
            return RUNS.claim(conn, run_id, self.owner_id, lease_s, cancel_requested=0)

    def renew_run_lease(self, run_id: str, lease_s: float = RUN_LEASE_S) -> Optional[bool]:
        """Extend this process's lease on the run; returns whether a cancel was asked (None: the lease is
        not this process's any more)."""
        r = t.runs.c
        with self.write() as conn:
            if not RUNS.renew(conn, self.owner_id, lease_s, r.run_id == run_id):
                return None
            return bool(conn.execute(sa.select(r.cancel_requested).where(r.run_id == run_id)).scalar())

    def release_run(self, run_id: str) -> None:
        """The run ended here: its lease ends with it."""
        with self.write() as conn:
            RUNS.release(conn, run_id, self.owner_id)

    def request_run_cancel(self, run_id: str) -> bool:
        """Ask the run's owner, in whichever process, to cancel it; False when no live process holds it."""
        r = t.runs.c
        with self.write() as conn:
            return bool(conn.execute(sa.update(t.runs).where(r.run_id == run_id, RUNS.live())
                                     .values(cancel_requested=1)).rowcount)

    def run_lease(self, run_id: str) -> Optional[tuple[Optional[str], Optional[str], bool]]:
        """(owner, lease until, cancel asked) of a stored run; None when there is no such run."""
        r = t.runs.c
        with self.read() as conn:
            row = conn.execute(sa.select(r.owner, r.lease_until, r.cancel_requested)
                               .where(r.run_id == run_id)).first()
        return None if row is None else (row.owner, row.lease_until, bool(row.cancel_requested))

    def run_held_by(self, run_id: str, owner: str) -> bool:
        """Whether `owner` holds the run under a live lease, as the store has it now (one read, nothing
        locked: what a Ray worker asks before an LLM call)."""
        with self.read() as conn:
            return RUNS.holds(conn, run_id, owner)

    def save_run_dialogue(self, dialogue: Dialogue, run_id: str, owner: Optional[str] = None) -> bool:
        """Store a dialogue of the run (as `save_dialogue`) only while `owner` (this process by default; a
        Ray worker passes its run's owner) holds the run; returns False, storing nothing, otherwise."""
        owner = owner or self.owner_id
        with self.write() as conn:
            if not RUNS.holds(conn, run_id, owner, lock=True):
                log.warning("run %s is no longer %s's (lease lost); dialogue %s discarded", run_id, owner,
                            dialogue.dialogue_id)
                return False
            self._put_dialogue(conn, dialogue)
        return True

    def save_owned_run(self, run_id: str, state: dict) -> bool:
        """Write the run's state document only while this process holds the run; returns whether it did."""
        r = t.runs.c
        with self.write() as conn:
            if not RUNS.holds(conn, run_id, self.owner_id, lock=True):
                return False
            conn.execute(sa.update(t.runs).where(r.run_id == run_id).values(
                state=json.dumps(state, ensure_ascii=False, default=str), updated_at=now_key()))
        return True

    def expired_runs(self) -> list[str]:
        """Runs whose lease ran out unreleased: their process died (or stalled) while running them."""
        r = t.runs.c
        with self.read() as conn:
            query = sa.select(r.run_id).where(RUNS.expired()).order_by(r.lease_until)
            return list(conn.execute(query).scalars())

