"""Queries for a public deployment: scoring jobs, vote origins and flags, hidden
dialogues and the moderation log (tables of Alembic revision 0003, see
`arena.store.schema`).

Each function is one transaction on the store's own engine, written in
SQLAlchemy Core so it runs the same on SQLite and PostgreSQL.

* `scoring_jobs`: the scoring queue. A crash leaves it in the database, so a
  restart resumes it (`requeue_interrupted`, `enqueue_unscored`).
* `vote_origins`, `vote_flags`: who cast a vote (keyed hashes, never raw
  addresses), one vote per battle, and why a vote looks automated.
* `hidden_dialogues`, `moderation_log`: researchers' moderation, logged in the
  same transaction as the change.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Iterable, Optional

import sqlalchemy as sa

from arena.store import schema as t
from arena.dialogue import Dialogue, Vote, utc_now
from arena.llm.redaction import redact_optional
from arena.self_naming import void_reason

if TYPE_CHECKING:
    from arena.store.engine import Store

JOB_STATES = ("queued", "running", "done", "failed")


class BattleAlreadyVoted(ValueError):
    """A second vote for one battle."""


def _key(dt: datetime) -> str:
    from arena.store.engine import _utc_key

    return _utc_key(dt)


def _now() -> str:
    return _key(utc_now())


# -- scoring jobs -----------------------------------------------------------------


def enqueue_scoring(store: "Store", dialogue_ids: Iterable[str], *, force: bool = False) -> int:
    """Queue dialogues for scoring (again, if done or failed); returns how many were queued."""
    now, n = _now(), 0
    j = t.scoring_jobs.c
    with store._write() as conn:
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


def claim_scoring_job(store: "Store", max_attempts: int = 3) -> Optional[tuple[str, bool, int]]:
    """Take the oldest queued job, mark it running; (dialogue id, force, attempt number), or None."""
    j = t.scoring_jobs.c
    with store._write() as conn:
        query = (sa.select(j.dialogue_id, j.force, j.attempts).where(j.state == "queued", j.attempts < max_attempts)
                 .order_by(j.queued_at, j.dialogue_id).limit(1))
        if conn.dialect.name == "postgresql":
            query = query.with_for_update(skip_locked=True)
        row = conn.execute(query).first()
        if row is None:
            return None
        conn.execute(sa.update(t.scoring_jobs).where(j.dialogue_id == row.dialogue_id)
                     .values(state="running", attempts=j.attempts + 1, updated_at=_now()))
        return row.dialogue_id, bool(row.force), row.attempts + 1


def finish_scoring_job(store: "Store", dialogue_id: str, error: Optional[str] = None, *,
                       retry: bool = False) -> None:
    """Mark a running job done, failed, or (`retry`) queued again. A job re-queued meanwhile stays queued."""
    state = "done" if error is None else ("queued" if retry else "failed")
    j = t.scoring_jobs.c
    with store._write() as conn:
        conn.execute(sa.update(t.scoring_jobs).where(j.dialogue_id == dialogue_id, j.state == "running")
                     .values(state=state, error=redact_optional(error), force=0 if state == "done" else j.force,
                             updated_at=_now()))


def requeue_interrupted(store: "Store") -> int:
    """Jobs left running by a process that died go back to the queue."""
    j = t.scoring_jobs.c
    with store._write() as conn:
        return conn.execute(sa.update(t.scoring_jobs).where(j.state == "running")
                            .values(state="queued", updated_at=_now())).rowcount


def enqueue_unscored(store: "Store", metric: str) -> int:
    """Queue every ended dialogue with no value for `metric` that is not queued or running already."""
    d, s, j = t.dialogues.c, t.scores.c, t.scoring_jobs.c
    with store._read() as conn:
        ids = conn.execute(sa.select(d.dialogue_id).where(
            d.ended == 1,
            ~sa.exists().where(s.dialogue_id == d.dialogue_id, s.metric == metric, s.value.is_not(None)),
            ~sa.exists().where(j.dialogue_id == d.dialogue_id, j.state.in_(("queued", "running"))),
        )).scalars().all()
    return enqueue_scoring(store, ids) if ids else 0


def scoring_counts(store: "Store") -> dict[str, int]:
    j = t.scoring_jobs.c
    with store._read() as conn:
        rows = conn.execute(sa.select(j.state, sa.func.count()).group_by(j.state)).all()
    counts = {state: 0 for state in JOB_STATES}
    counts.update({state: n for state, n in rows})
    return counts


def failed_jobs(store: "Store", limit: int = 50) -> list[tuple[str, str]]:
    j = t.scoring_jobs.c
    with store._read() as conn:
        rows = conn.execute(sa.select(j.dialogue_id, j.error).where(j.state == "failed")
                            .order_by(j.updated_at.desc()).limit(limit)).all()
    return [(r.dialogue_id, r.error or "") for r in rows]


# -- votes: one per battle, origins and flags ------------------------------------------


def save_battle_once(store: "Store", dialogue_a: Dialogue, dialogue_b: Dialogue, vote: Vote, *,
                     user_key: str, ip_key: str, started_at: Optional[datetime],
                     burst_votes: int, burst_window_s: float, min_battle_s: float,
                     claim_id: Optional[str] = None) -> Optional[str]:
    """Store a battle's dialogues, its vote and where it came from, in one transaction.

    A second vote for the same battle raises BattleAlreadyVoted. Returns why the
    vote was flagged, or None: more than `burst_votes` votes from one IP or one
    user within `burst_window_s` (this one included), a vote cast less than
    `min_battle_s` after the battle started, or a battle voided because a reply
    named its own system (`arena.self_naming`). A flagged vote is kept, left out
    of the leaderboard.
    """
    if (vote.dialogue_a, vote.dialogue_b) != (dialogue_a.dialogue_id, dialogue_b.dialogue_id):
        raise ValueError("vote.dialogue_a/dialogue_b must be the ids of dialogue_a/dialogue_b")
    if (vote.crs_a, vote.crs_b) != (dialogue_a.crs_id, dialogue_b.crs_id):
        raise ValueError("vote.crs_a/crs_b must be the systems of dialogue_a/dialogue_b")
    o = t.vote_origins.c
    since = _key(vote.timestamp - timedelta(seconds=burst_window_s))
    with store._write() as conn:
        taken = conn.execute(sa.select(t.votes.c.vote_id).where(t.votes.c.battle_id == vote.battle_id)).first()
        if taken is not None:
            raise BattleAlreadyVoted(f"battle {vote.battle_id} already has a vote")
        store._put_dialogue(conn, dialogue_a)
        store._put_dialogue(conn, dialogue_b)
        store._put_vote(conn, vote)
        if claim_id is not None:
            conn.execute(sa.delete(t.battle_claims).where(t.battle_claims.c.claim_id == claim_id))
        conn.execute(sa.insert(t.vote_origins).values(
            vote_id=vote.vote_id, battle_id=vote.battle_id, user_key=user_key, ip_key=ip_key,
            started_at=_key(started_at) if started_at else None, cast_at=_key(vote.timestamp)))
        reasons = [void] if (void := void_reason(dialogue_a, dialogue_b)) else []
        for column, key, who in ((o.ip_key, ip_key, "address"), (o.user_key, user_key, "session")):
            recent = conn.execute(sa.select(sa.func.count()).select_from(t.vote_origins)
                                  .where(column == key, o.cast_at >= since)).scalar()
            if recent > burst_votes:
                reasons.append(f"burst: {recent} votes from one {who} within {burst_window_s:g} s")
        if started_at is not None:
            seconds = (vote.timestamp - started_at).total_seconds()
            if seconds < min_battle_s:
                reasons.append(f"fast: voted {seconds:.1f} s after the battle started")
        if not reasons:
            return None
        reason = "; ".join(reasons)
        conn.execute(sa.insert(t.vote_flags).values(vote_id=vote.vote_id, reason=reason,
                                                    flagged_at=_key(vote.timestamp)))
        return reason


def flagged_votes(store: "Store") -> dict[str, str]:
    """vote id -> why it was flagged."""
    with store._read() as conn:
        return {r.vote_id: r.reason for r in conn.execute(sa.select(t.vote_flags)).all()}


# -- moderation ------------------------------------------------------------------------


def hidden_dialogue_ids(store: "Store") -> set[str]:
    with store._read() as conn:
        return set(conn.execute(sa.select(t.hidden_dialogues.c.dialogue_id)).scalars())


def _log(conn: sa.Connection, action: str, target: str, actor: str, reason: str, detail: dict[str, Any]) -> None:
    conn.execute(sa.insert(t.moderation_log).values(
        action=action, target=target, actor=actor, reason=reason,
        detail=json.dumps(detail, ensure_ascii=False), created_at=_now()))


def hide_dialogues(store: "Store", dialogue_ids: list[str], *, actor: str, reason: str,
                   hide: bool = True) -> list[str]:
    """Hide (or show again) stored dialogues; returns the ids found. Logged in the same transaction."""
    h = t.hidden_dialogues.c
    with store._write() as conn:
        found = sorted(set(conn.execute(sa.select(t.dialogues.c.dialogue_id)
                                        .where(t.dialogues.c.dialogue_id.in_(dialogue_ids))).scalars()))
        for dialogue_id in found:
            conn.execute(sa.delete(t.hidden_dialogues).where(h.dialogue_id == dialogue_id))
            if hide:
                conn.execute(sa.insert(t.hidden_dialogues).values(
                    dialogue_id=dialogue_id, reason=reason, actor=actor, hidden_at=_now()))
            _log(conn, "hide" if hide else "unhide", dialogue_id, actor, reason, {})
    return found


def delete_dialogues(store: "Store", dialogue_ids: list[str], *, actor: str, reason: str,
                     target: Optional[str] = None) -> dict[str, int]:
    """Delete dialogues with their scores, jobs and battle votes; one logged transaction."""
    ids = sorted(set(dialogue_ids))
    v = t.votes.c
    counts = {"dialogues": 0, "votes": 0}
    with store._write() as conn:
        vote_ids = list(conn.execute(sa.select(v.vote_id).where(
            sa.or_(v.dialogue_a.in_(ids), v.dialogue_b.in_(ids)))).scalars())
        for table, column in ((t.vote_flags, t.vote_flags.c.vote_id), (t.vote_origins, t.vote_origins.c.vote_id),
                              (t.votes, v.vote_id)):
            result = conn.execute(sa.delete(table).where(column.in_(vote_ids)))
            if table is t.votes:
                counts["votes"] = result.rowcount
        for table in (t.scores, t.scoring_jobs, t.hidden_dialogues):
            conn.execute(sa.delete(table).where(table.c.dialogue_id.in_(ids)))
        counts["dialogues"] = conn.execute(sa.delete(t.dialogues)
                                           .where(t.dialogues.c.dialogue_id.in_(ids))).rowcount
        _log(conn, "delete", target or ",".join(ids), actor, reason, {**counts, "ids": ids})
    return counts


def stored_user_ids(store: "Store") -> list[str]:
    with store._read() as conn:
        return list(conn.execute(sa.select(t.dialogues.c.user_id).distinct()).scalars())


def dialogue_ids_of_users(store: "Store", user_ids: list[str]) -> list[str]:
    d = t.dialogues.c
    with store._read() as conn:
        return list(conn.execute(sa.select(d.dialogue_id).where(d.user_id.in_(user_ids))
                                 .order_by(d.created_at)).scalars())


def moderation_entries(store: "Store", limit: int = 100) -> list[dict[str, Any]]:
    m = t.moderation_log.c
    with store._read() as conn:
        rows = conn.execute(sa.select(t.moderation_log).order_by(m.entry_id.desc()).limit(limit)).all()
    return [dict(r._mapping) for r in rows]
