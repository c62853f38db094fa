"""Calls to the recruiting platform that must happen once: submission transitions and bonus payments.

Before the arena asks the platform to approve, reject or ask for a return, or to pay a bonus, it claims a
row here, inserted or not in one statement (as `conversation_starts` claims a first message): of two
processes, two clicks or a retry, one gets the claim and sends the call; the others find the row and do
nothing. The sender then marks the row with the platform's answer, or drops it when the platform refused.

- A transition is keyed by (submission id, action). The platform documents transitions as idempotent, so
  one whose sender vanished (`STALE_AFTER` without an outcome) may be claimed again. A done one is final:
  a retry is a no-op; one the platform refused or did not receive is released (the row goes). Each done
  transition is written to the moderation log in the same transaction.
- A bonus payment is keyed by (study, a digest of its lines) and claims every worker it pays, so that a
  worker is in one live payment at most: a later payment of the same study leaves them out. Paying is not
  idempotent on the platform, so a payment whose pay call's outcome is unknown (the request went out and
  no answer came back) is marked "unknown" and never sent again by the arena: the researcher checks on
  the platform and records what they found (`settle_unknown_bonus`: paid, or not paid, which
  frees its workers for a new payment). Only a payment the platform refused (or one stopped before its
  pay call) is released, freeing its workers.

`PlatformPayments` is a part of `arena.store.Store`.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from typing import Any, Iterable, Optional

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from arena.dialogue import utc_now
from arena.store import schema as t
from arena.store.moderation import _log
from arena.store.part import StorePart
from arena.store.statements import insert_for, now_key, utc_key

SENDING, DONE = "sending", "done"
# The platform's last reported status of a submission (its webhook) rides in the same table, as a row with
# this action and state, its status in `answer`: it is never a claim, and no transition reads it.
REPORTED = "REPORTED"
CLAIMED, CREATED, PAID, UNKNOWN = "claimed", "created", "paid", "unknown"
STALE_AFTER = timedelta(minutes=10)  # a transition still "sending" after this was abandoned by its sender


@dataclass(frozen=True)
class TransitionClaim:
    """The row of one transition. `claim_id` is set when this caller holds it and must send the call."""

    submission_id: str
    action: str
    state: str
    answer: str
    claim_id: Optional[str] = None


@dataclass(frozen=True)
class BonusBatch:
    """A bonus payment's row. `claim_id` is set when this caller holds it and must make the calls."""

    study_id: str
    batch_key: str
    state: str
    workers: int
    total: Decimal
    bonus_id: str
    answer: str
    actor: str
    updated_at: str
    claim_id: Optional[str] = None


class WorkersAlreadyInPayment(ValueError):
    """A bonus line names a worker who is already in a live payment of the study (one line for the page)."""


def worker_key(study_id: str, worker_id: str) -> str:
    """A worker's key in the payments table: a digest, so the raw platform id is not kept there."""
    return hashlib.sha256(f"{study_id}\n{worker_id.strip()}".encode()).hexdigest()[:32]


def batch_key(study_id: str, lines: Iterable[tuple[str, Decimal]]) -> str:
    """A payment's key: a digest of its lines in a fixed order, so the same lines give the same key."""
    text = "\n".join(sorted(f"{worker.strip()},{Decimal(amount):.2f}" for worker, amount in lines))
    return hashlib.sha256(f"{study_id}\n{text}".encode()).hexdigest()[:32]


def _transition(row: Any, claim_id: Optional[str] = None) -> TransitionClaim:
    return TransitionClaim(row.submission_id, row.action, row.state, row.answer, claim_id)


def _batch(row: Any, claim_id: Optional[str] = None) -> BonusBatch:
    return BonusBatch(row.study_id, row.batch_key, row.state, row.workers, Decimal(row.total), row.bonus_id,
                      row.answer, row.actor, row.updated_at, claim_id)


class PlatformPayments(StorePart):
    """Claims on the platform's non-repeatable calls and their outcomes (a part of `Store`)."""

    # -- submission transitions ----------------------------------------------------------------------
    def claim_transition(self, study_id: str, submission_id: str, action: str, *, actor: str,
                         detail: Optional[dict[str, Any]] = None) -> TransitionClaim:
        """Claim sending `action` for the submission. The answer's `claim_id` is set when the caller must
        send it (a new claim, or one abandoned by its sender); else the row as it stands (being sent
        elsewhere, or done)."""
        p = t.platform_transitions.c
        claim_id, now = secrets.token_hex(8), now_key()
        row = {"submission_id": submission_id, "action": action, "study_id": study_id, "state": SENDING,
               "claim_id": claim_id, "detail": json.dumps(detail or {}, ensure_ascii=False), "answer": "",
               "actor": actor, "created_at": now, "updated_at": now}
        where = sa.and_(p.submission_id == submission_id, p.action == action)
        with self.write() as conn:
            inserted = conn.execute(insert_for(conn, t.platform_transitions).values(**row)
                                    .on_conflict_do_nothing(index_elements=["submission_id", "action"])
                                    .returning(p.submission_id)).first()
            if inserted is not None:
                return TransitionClaim(submission_id, action, SENDING, "", claim_id)
            stale = utc_key(utc_now() - STALE_AFTER)
            # Taken over only from an abandoned claim, in one statement (of two takers, one wins).
            taken = conn.execute(sa.update(t.platform_transitions).where(
                where, p.state == SENDING, p.updated_at < stale)
                .values(state=SENDING, claim_id=claim_id, detail=row["detail"], actor=actor, answer="",
                        updated_at=now).returning(p.submission_id)).first()
            if taken is not None:
                return TransitionClaim(submission_id, action, SENDING, "", claim_id)
            return _transition(conn.execute(sa.select(t.platform_transitions).where(where)).one())

    def finish_transition(self, claim: TransitionClaim, *, answer: str) -> bool:
        """Mark the transition `claim` sent as done, logged in the moderation log in the same transaction.
        False when the claim is no longer the caller's (nothing written)."""
        p = t.platform_transitions.c
        with self.write() as conn:
            row = conn.execute(sa.update(t.platform_transitions).where(self._mine(claim))
                               .values(state=DONE, answer=answer[:500], updated_at=now_key())
                               .returning(p.actor, p.study_id, p.detail)).first()
            if row is None:
                return False
            detail = json.loads(row.detail)
            _log(conn, f"platform {claim.action.lower()}", claim.submission_id, row.actor,
                 str(detail.get("message") or "; ".join(detail.get("reasons", []))),
                 {"study": row.study_id, "status": answer, **detail})
        return True

    def release_transition(self, claim: TransitionClaim) -> bool:
        """Drop the claim of a transition the platform did not make (refused, or not reached): the arena is
        as it was before, and the transition may be sent again."""
        with self.write() as conn:
            return bool(conn.execute(sa.delete(t.platform_transitions).where(self._mine(claim))).rowcount)

    @staticmethod
    def _mine(claim: TransitionClaim) -> Any:
        p = t.platform_transitions.c
        return sa.and_(p.submission_id == claim.submission_id, p.action == claim.action,
                       p.claim_id == claim.claim_id, p.state == SENDING)

    def platform_transitions(self, study_id: str) -> dict[tuple[str, str], TransitionClaim]:
        """(submission id, action) -> its row, for the study (reported statuses left out)."""
        p = t.platform_transitions.c
        with self.read() as conn:
            rows = conn.execute(sa.select(t.platform_transitions).where(
                p.study_id == study_id, p.action != REPORTED)).all()
        return {(r.submission_id, r.action): _transition(r) for r in rows}

    # -- statuses the platform reported ----------------------------------------------------------------
    def note_submission_status(self, study_id: str, submission_id: str, status: str) -> None:
        """Keep `status` as the submission's last status reported by the platform (replacing the older)."""
        now = now_key()
        with self.write() as conn:
            conn.execute(insert_for(conn, t.platform_transitions).values(
                submission_id=submission_id, action=REPORTED, study_id=study_id, state=REPORTED,
                claim_id="", detail="{}", answer=status[:100], actor="prolific", created_at=now,
                updated_at=now,
            ).on_conflict_do_update(index_elements=["submission_id", "action"],
                                    set_={"answer": status[:100], "updated_at": now}))

    def submission_statuses(self, study_id: str) -> dict[str, str]:
        """submission id -> its last status reported by the platform, for the study."""
        p = t.platform_transitions.c
        with self.read() as conn:
            rows = conn.execute(sa.select(p.submission_id, p.answer).where(
                p.study_id == study_id, p.action == REPORTED)).all()
        return {r.submission_id: r.answer for r in rows}

    # -- bonus payments ------------------------------------------------------------------------------
    def claim_bonus(self, study_id: str, lines: list[tuple[str, Decimal]], *, actor: str) -> BonusBatch:
        """Claim paying `lines` (platform worker id, amount). The answer's `claim_id` is set when the
        caller must make the calls; else the payment as it stands (the same lines claimed before).
        Raises WorkersAlreadyInPayment when a worker is in another live payment of the study (nothing
        claimed)."""
        key, claim_id, now = batch_key(study_id, lines), secrets.token_hex(8), now_key()
        total = sum((Decimal(a) for _, a in lines), Decimal(0))
        b = t.platform_bonuses.c
        with self.write() as conn:
            inserted = conn.execute(insert_for(conn, t.platform_bonuses).values(
                study_id=study_id, batch_key=key, state=CLAIMED, claim_id=claim_id, workers=len(lines),
                total=f"{total:.2f}", bonus_id="", answer="", actor=actor, created_at=now, updated_at=now)
                .on_conflict_do_nothing(index_elements=["study_id", "batch_key"])
                .returning(b.batch_key)).first()
            if inserted is None:
                return self._bonus_row(conn, study_id, key)
            self._claim_workers(conn, study_id, key, lines)
            return self._bonus_row(conn, study_id, key, claim_id)

    @staticmethod
    def _bonus_row(conn: Connection, study_id: str, key: str, claim_id: Optional[str] = None) -> BonusBatch:
        b = t.platform_bonuses.c
        row = conn.execute(sa.select(t.platform_bonuses)
                           .where(b.study_id == study_id, b.batch_key == key)).one()
        return _batch(row, claim_id)

    @staticmethod
    def _claim_workers(conn: Connection, study_id: str, key: str, lines: list[tuple[str, Decimal]]) -> None:
        w = t.platform_bonus_workers.c
        for worker, amount in lines:
            inserted = conn.execute(insert_for(conn, t.platform_bonus_workers).values(
                study_id=study_id, worker_key=worker_key(study_id, worker), batch_key=key,
                amount=f"{Decimal(amount):.2f}")
                .on_conflict_do_nothing(index_elements=["study_id", "worker_key"])
                .returning(w.worker_key)).first()
            if inserted is None:  # the whole claim is rolled back with the transaction
                raise WorkersAlreadyInPayment(
                    f"worker {worker} is already in a bonus payment of this study: refresh the preview")

    def mark_bonus(self, batch: BonusBatch, state: str, *, bonus_id: Optional[str] = None,
                   answer: str = "") -> bool:
        """Move the payment `batch` (claimed by the caller) to `state`: created (with the platform's bonus
        id), paid or unknown (both logged in the moderation log). False when the claim is no longer the
        caller's."""
        b = t.platform_bonuses.c
        values: dict[str, Any] = {"state": state, "answer": answer[:500], "updated_at": now_key()}
        if bonus_id is not None:
            values["bonus_id"] = bonus_id
        with self.write() as conn:
            row = conn.execute(sa.update(t.platform_bonuses).where(self._my_batch(batch)).values(**values)
                               .returning(b.bonus_id, b.actor, b.workers, b.total)).first()
            if row is None:
                return False
            if state in (PAID, UNKNOWN):
                _log(conn, f"platform bonus {state}", batch.study_id, row.actor, answer,
                     {"bonus_id": row.bonus_id, "workers": row.workers, "total": row.total,
                      "batch": batch.batch_key})
        return True

    def release_bonus(self, batch: BonusBatch) -> bool:
        """Drop the claim of a payment the platform did not make (it refused the bonus or the pay call, or
        was not reached before the pay call): its workers are free again, as before the claim."""
        w = t.platform_bonus_workers.c
        with self.write() as conn:
            gone = conn.execute(sa.delete(t.platform_bonuses).where(self._my_batch(batch))).rowcount
            if gone:
                conn.execute(sa.delete(t.platform_bonus_workers).where(
                    w.study_id == batch.study_id, w.batch_key == batch.batch_key))
        return bool(gone)

    def settle_unknown_bonus(self, study_id: str, key: str, *, paid: bool, actor: str) -> bool:
        """The researcher's finding on Prolific for an "unknown" payment, logged in the moderation log:
        paid (it stays, its workers stay left out), or not paid (the row and its workers' claims go, so
        the lines can be paid again). False when the payment is not (or no longer) unknown."""
        b, w = t.platform_bonuses.c, t.platform_bonus_workers.c
        where = sa.and_(b.study_id == study_id, b.batch_key == key, b.state == UNKNOWN)
        with self.write() as conn:
            if paid:
                row = conn.execute(sa.update(t.platform_bonuses).where(where).values(
                    state=PAID, answer="marked as paid after a check on the platform", updated_at=now_key())
                    .returning(b.bonus_id, b.workers, b.total)).first()
            else:
                row = conn.execute(sa.delete(t.platform_bonuses).where(where)
                                   .returning(b.bonus_id, b.workers, b.total)).first()
                if row is not None:
                    conn.execute(sa.delete(t.platform_bonus_workers).where(
                        w.study_id == study_id, w.batch_key == key))
            if row is None:
                return False
            verdict = "paid" if paid else "not paid"
            _log(conn, f"platform bonus marked {verdict}", study_id, actor,
                 f"an unknown payment checked on the platform: {verdict}",
                 {"bonus_id": row.bonus_id, "workers": row.workers, "total": row.total, "batch": key})
        return True

    @staticmethod
    def _my_batch(batch: BonusBatch) -> Any:
        b = t.platform_bonuses.c
        return sa.and_(b.study_id == batch.study_id, b.batch_key == batch.batch_key,
                       b.claim_id == batch.claim_id, b.state.in_((CLAIMED, CREATED)))

    def bonus_payments(self, study_id: str) -> list[BonusBatch]:
        """The study's bonus payments, newest first."""
        b = t.platform_bonuses.c
        with self.read() as conn:
            rows = conn.execute(sa.select(t.platform_bonuses).where(b.study_id == study_id)
                                .order_by(b.created_at.desc())).all()
        return [_batch(r) for r in rows]

    def bonused_workers(self, study_id: str) -> set[str]:
        """`worker_key`s of the workers in a live payment of the study (paid, being paid or unknown)."""
        w = t.platform_bonus_workers.c
        with self.read() as conn:
            return set(conn.execute(sa.select(w.worker_key).where(w.study_id == study_id)).scalars())
