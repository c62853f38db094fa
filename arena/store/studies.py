"""Queries for crowdsourced studies: study files (each save a new version), participants and quota cells
(tables of Alembic revision 0004, see `arena.store.schema`).

Quota state lives in the store so that every app process (the store may be
PostgreSQL behind several replicas) assigns from one count. A task holds its
cell as a `reserved` claim from the moment it is handed out; the claim turns
`done` when the task is finished, or is deleted when it expires: a reserved
claim lapses `start_hold_minutes` after the task's start when no message came,
and after the study's `idle_minutes` without activity once one did (each
message or verdict extends it), never past `abandon_after_minutes` from the
task's start. A
flagged worker's claims become `released` when the study does not count
flagged work, and no longer fill their cell. `reserve_cell` counts done and
live reserved claims and inserts the new one in one transaction under the
store's write lock, so two workers never both take a cell's last place.

`Studies` is a part of `arena.store.Store`: each method is one transaction on
the store's own engine.
"""

from __future__ import annotations

import json
import random
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Iterable, Optional

import sqlalchemy as sa

from arena.dialogue import utc_now
from arena.store import schema as t
from arena.store.part import StorePart
from arena.store.statements import insert_for, now_key, utc_key
from arena.crowd.study import Study

_STUDY_LOCK = 0x4152454E41_03  # PostgreSQL advisory lock of quota assignment
ACTIVE, COMPLETED = "active", "completed"
RESERVED, DONE, RELEASED = "reserved", "done", "released"  # a claim's states; released claims fill nothing


@dataclass
class Participant:
    """A worker's row in a study: their salted pseudonym, progress (`data`), flags and completion."""

    study_id: str
    pseudonym: str
    study_version: int
    status: str = ACTIVE
    data: dict[str, Any] = field(default_factory=dict)
    started_at: str = ""
    updated_at: str = ""
    completed_at: Optional[str] = None

    @property
    def flags(self) -> list[str]:
        return list(self.data.get("flags", []))


def _participant(row: Any) -> Participant:
    return Participant(study_id=row.study_id, pseudonym=row.pseudonym, study_version=row.study_version,
                       status=row.status, data=json.loads(row.data), started_at=row.started_at,
                       updated_at=row.updated_at, completed_at=row.completed_at)


def _put_participant(conn: Any, participant: Participant) -> None:
    p = t.study_participants.c
    participant.updated_at = now_key()
    conn.execute(sa.update(t.study_participants)
                 .where(p.study_id == participant.study_id, p.pseudonym == participant.pseudonym)
                 .values(status=participant.status, data=json.dumps(participant.data),
                         updated_at=participant.updated_at, completed_at=participant.completed_at))


def _counts(conn: Any, study_id: str, now: str) -> dict[str, int]:
    c = t.study_claims.c
    conn.execute(sa.delete(t.study_claims).where(c.study_id == study_id, c.state == RESERVED,
                                                 c.expires_at < now))
    rows = conn.execute(sa.select(c.cell, sa.func.count()).where(c.study_id == study_id,
                                                                 c.state.in_((RESERVED, DONE)))
                        .group_by(c.cell)).all()
    return {cell: n for cell, n in rows}


def _hold_until(study: Study, started: datetime, minutes: Optional[float] = None) -> str:
    """When a place held now lapses: `minutes` (else `idle_minutes`) from now, never past
    `abandon_after_minutes` from the task's start."""
    return utc_key(min(utc_now() + timedelta(minutes=study.idle_minutes if minutes is None else minutes),
                       started + timedelta(minutes=study.abandon_after_minutes)))


def _pick(study: Study, counts: dict[str, int], skip: set[str], rng: random.Random) -> Optional[str]:
    """The least-filled cell with room, as a share of its quota (unequal quotas fill at one pace); ties at
    random; None when no cell outside `skip` has room."""
    room = [(counts.get(cell, 0) / study.quota(cell), cell) for cell in study.cells()
            if cell not in skip and counts.get(cell, 0) < study.quota(cell)]
    if not room:
        return None
    lowest = min(share for share, _ in room)
    return rng.choice(sorted(cell for share, cell in room if share == lowest))


class Studies(StorePart):
    """Study files, participants and quota cells (a part of `Store`)."""

    # -- study files ---------------------------------------------------------------------
    def save_study(self, study: Study, text: str, saved_by: str) -> int:
        """Store `text` (which parses to `study`) as the study's next version; returns that version."""
        f = t.study_files.c
        with self.write() as conn:
            if self.backend == "postgresql":
                conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _STUDY_LOCK})
            latest = (
                conn.execute(sa.select(sa.func.max(f.version)).where(f.study_id == study.id)).scalar() or 0
            )
            conn.execute(sa.insert(t.study_files).values(study_id=study.id, version=latest + 1, text=text,
                                                         saved_by=saved_by, saved_at=now_key()))
        return latest + 1

    def study_text(self, study_id: str, version: Optional[int] = None) -> Optional[tuple[int, str]]:
        """(version, text) of the study file: the given version, else the newest; None when there is none."""
        f = t.study_files.c
        query = sa.select(f.version, f.text).where(f.study_id == study_id)
        query = query.where(f.version == version) if version is not None else query.order_by(f.version.desc())
        with self.read() as conn:
            row = conn.execute(query.limit(1)).first()
        return (row.version, row.text) if row is not None else None

    def study_ids(self) -> list[tuple[str, int]]:
        """(study id, newest version), by id."""
        f = t.study_files.c
        with self.read() as conn:
            rows = conn.execute(sa.select(f.study_id, sa.func.max(f.version)).group_by(f.study_id)
                                .order_by(f.study_id)).all()
        return [(r[0], r[1]) for r in rows]

    # -- participants ----------------------------------------------------------------------
    def get_participant(self, study_id: str, pseudonym: str) -> Optional[Participant]:
        p = t.study_participants.c
        with self.read() as conn:
            row = conn.execute(sa.select(t.study_participants).where(p.study_id == study_id,
                                                                     p.pseudonym == pseudonym)).first()
        return _participant(row) if row is not None else None

    def join_study(self, study_id: str, pseudonym: str, version: int, data: dict[str, Any]) -> Participant:
        """The worker's row: created on their first visit, else the one they have (a returning worker)."""
        now = now_key()
        with self.write() as conn:
            conn.execute(insert_for(conn, t.study_participants).values(
                study_id=study_id, pseudonym=pseudonym, study_version=version, status=ACTIVE,
                data=json.dumps(data), started_at=now, updated_at=now,
            ).on_conflict_do_nothing(index_elements=["study_id", "pseudonym"]))
        found = self.get_participant(study_id, pseudonym)
        assert found is not None
        return found

    def save_participant(self, participant: Participant) -> None:
        with self.write() as conn:
            _put_participant(conn, participant)

    def complete_participant(self, participant: Participant) -> bool:
        """Mark the worker completed, once: False when they already were (a second completion)."""
        p = t.study_participants.c
        with self.write() as conn:
            status = conn.execute(sa.select(p.status).where(p.study_id == participant.study_id,
                                                            p.pseudonym == participant.pseudonym)
                                  .with_for_update()).scalar()
            if status == COMPLETED:
                return False
            participant.status, participant.completed_at = COMPLETED, now_key()
            _put_participant(conn, participant)
        return True

    def list_participants(self, study_id: str, previews: bool = False) -> list[Participant]:
        """The study's workers, in the order they came; the researchers' own preview walks only when asked."""
        p = t.study_participants.c
        with self.read() as conn:
            rows = conn.execute(sa.select(t.study_participants).where(p.study_id == study_id)
                                .order_by(p.started_at, p.pseudonym)).all()
        return [q for q in map(_participant, rows) if previews or not q.data.get("preview")]

    # -- quota cells ------------------------------------------------------------------------
    def reserve_cell(self, study: Study, pseudonym: str, exclude: Iterable[str] = (),
                     rng: Optional[random.Random] = None, *, prefer: Optional[str] = None,
                     claim_id: Optional[str] = None, started: Optional[datetime] = None,
                     minutes: Optional[float] = None) -> Optional[tuple[str, str]]:
        """Hold a place: in `prefer` (the cell the task was given) while it has room, else in the least-filled
        cell that has room (ties at random), skipping `exclude`; returns (cell, claim id), or None when every
        cell the worker may take is full. `claim_id` names the new claim (a task's own id, else a new one);
        the place lapses `minutes` (else `idle_minutes`) from now, never past `abandon_after_minutes` from
        `started`."""
        rng = rng or random.SystemRandom()
        skip = set(exclude)
        now = utc_now()
        expires = _hold_until(study, started or now, minutes)
        with self.write() as conn:
            if self.backend == "postgresql":
                conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _STUDY_LOCK})
            counts = _counts(conn, study.id, utc_key(now))
            # A worker holds one task at a time: a second start of the same worker (a double click, both
            # sides of a battle sending at once, or two app processes) gets the place it holds already.
            c = t.study_claims.c
            held = conn.execute(sa.select(c.cell, c.claim_id).where(
                c.study_id == study.id, c.pseudonym == pseudonym, c.state == RESERVED,
                c.expires_at >= utc_key(now))).first()
            if held is not None:
                return held.cell, held.claim_id
            cell: Optional[str]
            if prefer is not None and prefer not in skip and counts.get(prefer, 0) < study.quota(prefer):
                cell = prefer
            else:
                cell = _pick(study, counts, skip, rng)
            if cell is None:
                return None
            claim_id = claim_id or uuid.uuid4().hex
            # A claim of this id that lapsed (deleted above) or was given up makes way for the new one.
            conn.execute(sa.delete(t.study_claims).where(c.claim_id == claim_id, c.state == RESERVED))
            conn.execute(
                sa.insert(t.study_claims).values(
                    claim_id=claim_id,
                    study_id=study.id,
                    cell=cell,
                    pseudonym=pseudonym,
                    state=RESERVED,
                    expires_at=expires,
                )
            )
        return cell, claim_id

    def keep_cell(self, study: Study, pseudonym: str, claim_id: str, cell: str, started: datetime) -> bool:
        """The worker is active on their task: its place is held `idle_minutes` longer. A place that lapsed
        meanwhile is taken again when its cell still has room; False when it had none (the worker may
        still finish: a finished task always counts)."""
        c = t.study_claims.c
        now = utc_now()
        with self.write() as conn:
            if self.backend == "postgresql":
                conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _STUDY_LOCK})
            kept = conn.execute(sa.update(t.study_claims).where(c.claim_id == claim_id, c.state == RESERVED,
                                                                c.expires_at >= utc_key(now))
                                .values(expires_at=_hold_until(study, started)))
            if kept.rowcount:
                return True
            if conn.execute(sa.select(c.state).where(c.claim_id == claim_id)).scalar() in (DONE, RELEASED):
                return True
            if _counts(conn, study.id, utc_key(now)).get(cell, 0) >= study.quota(cell):
                return False
            conn.execute(sa.insert(t.study_claims).values(claim_id=claim_id, study_id=study.id, cell=cell,
                                                          pseudonym=pseudonym, state=RESERVED,
                                                          expires_at=_hold_until(study, started)))
        return True

    def release_worker(self, study_id: str, pseudonym: str) -> int:
        """Every place the worker holds or filled no longer counts (a flagged worker, when the study does
        not count flagged work); returns how many were released."""
        c = t.study_claims.c
        with self.write() as conn:
            return conn.execute(
                sa.update(t.study_claims)
                .where(c.study_id == study_id, c.pseudonym == pseudonym, c.state.in_((RESERVED, DONE)))
                .values(state=RELEASED)
            ).rowcount

    def finish_study_task(
        self, participant: Participant, claim_id: str, cell: str, counts: bool = True
    ) -> bool:
        """The task's claim becomes a filled place and the worker's row moves on, in one transaction; False
        (and nothing written) when the stored row no longer holds this task (it was submitted already, by
        another tab or app process). A claim that expired while the worker was away still counts: the task
        was done. `counts` False: the place is released instead (a flagged worker's task)."""
        c, p = t.study_claims.c, t.study_participants.c
        with self.write() as conn:
            row = conn.execute(
                sa.select(p.data)
                .where(p.study_id == participant.study_id, p.pseudonym == participant.pseudonym)
                .with_for_update()
            ).first()
            if row is None or (json.loads(row.data).get("task") or {}).get("claim") != claim_id:
                return False
            state = DONE if counts else RELEASED
            done = conn.execute(sa.update(t.study_claims).where(c.claim_id == claim_id).values(state=state))
            if done.rowcount == 0:
                conn.execute(
                    sa.insert(t.study_claims).values(
                        claim_id=claim_id,
                        study_id=participant.study_id,
                        cell=cell,
                        pseudonym=participant.pseudonym,
                        state=state,
                        expires_at=now_key(),
                    )
                )
            _put_participant(conn, participant)
        return True

    def release_cell(self, claim_id: str) -> None:
        c = t.study_claims.c
        with self.write() as conn:
            conn.execute(sa.delete(t.study_claims).where(c.claim_id == claim_id, c.state == RESERVED))

    def cell_fill(self, study: Study) -> dict[str, dict[str, int]]:
        """cell -> {"done", "reserved", "quota"} (expired reservations not counted)."""
        c = t.study_claims.c
        now = now_key()
        out = {cell: {"done": 0, "reserved": 0, "quota": study.quota(cell)} for cell in study.cells()}
        with self.read() as conn:
            rows = conn.execute(
                sa.select(c.cell, c.state, sa.func.count())
                .where(
                    c.study_id == study.id,
                    sa.or_(c.state == DONE, sa.and_(c.state == RESERVED, c.expires_at >= now)),
                )
                .group_by(c.cell, c.state)
            ).all()
        for cell, state, n in rows:
            out.setdefault(cell, {"done": 0, "reserved": 0, "quota": 0})[state] = n
        return out

    # -- platform ids (researcher-only, for the payment sheet) --------------------------------
    def keep_platform_ids(self, study_id: str, pseudonym: str, worker_id: str, session_id: str) -> None:
        """The worker's platform ids, for approving or rejecting their submission; the first ones stay."""
        with self.write() as conn:
            conn.execute(insert_for(conn, t.study_platform_ids).values(
                study_id=study_id, pseudonym=pseudonym, worker_id=worker_id, session_id=session_id,
            ).on_conflict_do_nothing(index_elements=["study_id", "pseudonym"]))

    def platform_ids(self, study_id: str) -> dict[str, tuple[str, str]]:
        """pseudonym -> (worker id, session id) of the study's workers (empty once the study is closed)."""
        i = t.study_platform_ids.c
        with self.read() as conn:
            rows = conn.execute(
                sa.select(i.pseudonym, i.worker_id, i.session_id).where(i.study_id == study_id)
            ).all()
        return {r.pseudonym: (r.worker_id, r.session_id) for r in rows}

    def forget_platform_ids(self, study_id: str) -> int:
        """Delete the study's platform ids (when it is closed); returns how many workers' ids went."""
        i = t.study_platform_ids.c
        with self.write() as conn:
            return conn.execute(sa.delete(t.study_platform_ids).where(i.study_id == study_id)).rowcount

    # -- running state: open, paused or closed (set from the Studies tab) -----------------------
    def study_state(self, study_id: str) -> str:
        return self.get_meta(f"study-state:{study_id}") or "open"

    def set_study_state(self, study_id: str, state: str) -> None:
        if state not in ("open", "paused", "closed"):
            raise ValueError(f"study state must be open, paused or closed, not {state!r}")
        self.set_meta(f"study-state:{study_id}", state)

    def released_places(self, study_id: str) -> int:
        """How many finished or held places were released (flagged workers' work that fills no quota)."""
        c = t.study_claims.c
        with self.read() as conn:
            return conn.execute(sa.select(sa.func.count()).where(c.study_id == study_id, c.state == RELEASED)
                                ).scalar() or 0
