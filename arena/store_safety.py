"""Store tables for a public deployment (schema version 2): scoring jobs, vote
flags, hidden dialogues and the moderation log.

Kept apart from `arena.store` so that the schema change is one block: the
migration `migrate_v2` (registered as `MIGRATIONS[2]` there) and the queries
below, each a single transaction on the store's own connection.

* `scoring_jobs`: one row per dialogue to score; survives a crash, so a restart
  resumes the queue. States: queued, running, done, failed.
* `vote_origins` and `vote_flags`: who cast a vote (pseudonymous session and IP
  keys, never raw addresses) and why a vote is suspicious. Flagged votes are
  kept and exported for researchers but left out of the leaderboard by default.
* `hidden_dialogues`: dialogues a researcher took off the leaderboard and the
  exports (deleting removes the dialogue itself).
* `moderation_log`: every hide, unhide and delete, with who and why.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Iterable, Optional

from arena.dialogue import Dialogue, Vote, utc_now

if TYPE_CHECKING:
    from arena.store import Store

SCHEMA_V2 = """
CREATE TABLE IF NOT EXISTS scoring_jobs (
    dialogue_id TEXT PRIMARY KEY,
    state TEXT NOT NULL,
    force INTEGER NOT NULL DEFAULT 0,
    attempts INTEGER NOT NULL DEFAULT 0,
    error TEXT,
    queued_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS scoring_jobs_state ON scoring_jobs (state, queued_at);
CREATE TABLE IF NOT EXISTS vote_origins (
    vote_id TEXT PRIMARY KEY,
    battle_id TEXT NOT NULL UNIQUE,
    user_key TEXT NOT NULL,
    ip_key TEXT NOT NULL,
    started_at TEXT,
    cast_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS vote_origins_ip ON vote_origins (ip_key, cast_at);
CREATE INDEX IF NOT EXISTS vote_origins_user ON vote_origins (user_key, cast_at);
CREATE TABLE IF NOT EXISTS vote_flags (
    vote_id TEXT PRIMARY KEY,
    reason TEXT NOT NULL,
    flagged_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS hidden_dialogues (
    dialogue_id TEXT PRIMARY KEY,
    reason TEXT NOT NULL,
    actor TEXT NOT NULL,
    hidden_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS moderation_log (
    entry_id INTEGER PRIMARY KEY AUTOINCREMENT,
    action TEXT NOT NULL,
    target TEXT NOT NULL,
    actor TEXT NOT NULL,
    reason TEXT NOT NULL,
    detail TEXT NOT NULL,
    created_at TEXT NOT NULL
);
"""

JOB_STATES = ("queued", "running", "done", "failed")


class BattleAlreadyVoted(ValueError):
    """A second vote for one battle."""


def migrate_v2(conn: sqlite3.Connection) -> None:
    for statement in SCHEMA_V2.split(";"):
        if statement.strip():
            conn.execute(statement)


def _now() -> str:
    from arena.store import _utc_key

    return _utc_key(utc_now())


def _key(dt: datetime) -> str:
    from arena.store import _utc_key

    return _utc_key(dt)


# -- scoring jobs -----------------------------------------------------------------


def enqueue_scoring(store: "Store", dialogue_ids: Iterable[str], *, force: bool = False) -> int:
    """Queue dialogues for scoring (again, if done); returns how many rows were queued."""
    now, n = _now(), 0
    with store._write() as conn:
        for dialogue_id in dialogue_ids:
            conn.execute(
                """INSERT INTO scoring_jobs (dialogue_id, state, force, attempts, queued_at, updated_at)
                   VALUES (?, 'queued', ?, 0, ?, ?)
                   ON CONFLICT (dialogue_id) DO UPDATE SET
                       state = 'queued', force = MAX(scoring_jobs.force, excluded.force), error = NULL,
                       attempts = CASE WHEN scoring_jobs.state = 'running' THEN scoring_jobs.attempts ELSE 0 END,
                       updated_at = excluded.updated_at
                   WHERE scoring_jobs.state != 'queued'""",
                (dialogue_id, int(force), now, now),
            )
            n += 1
    return n


def claim_scoring_job(store: "Store", max_attempts: int = 3) -> Optional[tuple[str, bool]]:
    """Take the oldest queued job (dialogue id, force) and mark it running; None when idle."""
    with store._write() as conn:
        row = conn.execute(
            "SELECT dialogue_id, force FROM scoring_jobs WHERE state = 'queued' AND attempts < ? "
            "ORDER BY queued_at, rowid LIMIT 1", (max_attempts,),
        ).fetchone()
        if row is None:
            return None
        conn.execute("UPDATE scoring_jobs SET state = 'running', attempts = attempts + 1, updated_at = ? "
                     "WHERE dialogue_id = ?", (_now(), row[0]))
        return row[0], bool(row[1])


def finish_scoring_job(store: "Store", dialogue_id: str, error: Optional[str] = None, *,
                       retry: bool = False) -> None:
    """Mark a job done, failed, or (with `retry`) queued again after a failure."""
    state = "done" if error is None else ("queued" if retry else "failed")
    with store._write() as conn:
        conn.execute("UPDATE scoring_jobs SET state = ?, error = ?, force = CASE WHEN ? = 'done' THEN 0 "
                     "ELSE force END, updated_at = ? WHERE dialogue_id = ?",
                     (state, error, state, _now(), dialogue_id))


def requeue_interrupted(store: "Store") -> int:
    """Jobs left running by a process that died go back to the queue."""
    with store._write() as conn:
        return conn.execute("UPDATE scoring_jobs SET state = 'queued', updated_at = ? WHERE state = 'running'",
                            (_now(),)).rowcount


def enqueue_unscored(store: "Store", metric: str) -> int:
    """Queue every finished dialogue that has no job yet and no value for `metric`."""
    now = _now()
    with store._write() as conn:
        return conn.execute(
            """INSERT INTO scoring_jobs (dialogue_id, state, force, attempts, queued_at, updated_at)
               SELECT d.dialogue_id, 'queued', 0, 0, ?, ? FROM dialogues d
               WHERE d.ended = 1
                 AND NOT EXISTS (SELECT 1 FROM scoring_jobs j WHERE j.dialogue_id = d.dialogue_id
                                 AND j.state != 'done')
                 AND NOT EXISTS (SELECT 1 FROM scores s WHERE s.dialogue_id = d.dialogue_id
                                 AND s.metric = ? AND s.value IS NOT NULL)
               ON CONFLICT (dialogue_id) DO UPDATE SET state = 'queued', attempts = 0, error = NULL,
                   updated_at = excluded.updated_at""",
            (now, now, metric),
        ).rowcount


def scoring_counts(store: "Store") -> dict[str, int]:
    rows = store._conn().execute("SELECT state, COUNT(*) FROM scoring_jobs GROUP BY state").fetchall()
    counts = {state: 0 for state in JOB_STATES}
    counts.update({r[0]: r[1] for r in rows})
    return counts


def failed_jobs(store: "Store", limit: int = 50) -> list[tuple[str, str]]:
    rows = store._conn().execute("SELECT dialogue_id, error FROM scoring_jobs WHERE state = 'failed' "
                                 "ORDER BY updated_at DESC LIMIT ?", (limit,)).fetchall()
    return [(r[0], r[1] or "") for r in rows]


# -- votes: one per battle, origins and flags ------------------------------------------


def save_battle_once(store: "Store", dialogue_a: Dialogue, dialogue_b: Dialogue, vote: Vote, *,
                     user_key: str, ip_key: str, started_at: Optional[datetime],
                     burst_votes: int, burst_window_s: float, min_battle_s: float) -> Optional[str]:
    """Store a battle's dialogues, its vote and where it came from, in one transaction.

    Refuses a second vote for the same battle (BattleAlreadyVoted). Returns the
    reason the vote was flagged, or None: more than `burst_votes` votes from one
    IP or user within `burst_window_s` (this one included), or a vote cast less
    than `min_battle_s` after the battle started.
    """
    if (vote.dialogue_a, vote.dialogue_b) != (dialogue_a.dialogue_id, dialogue_b.dialogue_id):
        raise ValueError("vote.dialogue_a/dialogue_b must be the ids of dialogue_a/dialogue_b")
    if (vote.crs_a, vote.crs_b) != (dialogue_a.crs_id, dialogue_b.crs_id):
        raise ValueError("vote.crs_a/crs_b must be the systems of dialogue_a/dialogue_b")
    cast_at = vote.timestamp
    since = _key(cast_at - timedelta(seconds=burst_window_s))
    with store._write() as conn:
        taken = conn.execute("SELECT 1 FROM votes WHERE battle_id = ?", (vote.battle_id,)).fetchone()
        if taken is not None:
            raise BattleAlreadyVoted(f"battle {vote.battle_id} already has a vote")
        store._put_dialogue(conn, dialogue_a)
        store._put_dialogue(conn, dialogue_b)
        store._put_vote(conn, vote)
        conn.execute(
            "INSERT INTO vote_origins (vote_id, battle_id, user_key, ip_key, started_at, cast_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (vote.vote_id, vote.battle_id, user_key, ip_key, _key(started_at) if started_at else None,
             _key(cast_at)),
        )
        reasons = []
        for column, key in (("ip_key", ip_key), ("user_key", user_key)):
            recent = conn.execute(f"SELECT COUNT(*) FROM vote_origins WHERE {column} = ? AND cast_at >= ?",
                                  (key, since)).fetchone()[0]
            if recent > burst_votes:
                reasons.append(f"burst: {recent} votes from one {column.split('_')[0]} within "
                               f"{burst_window_s:g} s")
        if started_at is not None and (cast_at - started_at).total_seconds() < min_battle_s:
            reasons.append(f"fast: voted {(cast_at - started_at).total_seconds():.1f} s after the start")
        if reasons:
            conn.execute("INSERT OR REPLACE INTO vote_flags (vote_id, reason, flagged_at) VALUES (?, ?, ?)",
                         (vote.vote_id, "; ".join(reasons), _key(cast_at)))
            return "; ".join(reasons)
    return None


def flagged_votes(store: "Store") -> dict[str, str]:
    """vote id -> why it was flagged."""
    return {r[0]: r[1] for r in store._conn().execute("SELECT vote_id, reason FROM vote_flags").fetchall()}


def flag_vote(store: "Store", vote_id: str, reason: str) -> None:
    with store._write() as conn:
        conn.execute("INSERT OR REPLACE INTO vote_flags (vote_id, reason, flagged_at) VALUES (?, ?, ?)",
                     (vote_id, reason, _now()))


# -- moderation ------------------------------------------------------------------------


def hidden_dialogue_ids(store: "Store") -> set[str]:
    return {r[0] for r in store._conn().execute("SELECT dialogue_id FROM hidden_dialogues").fetchall()}


def _log(conn: sqlite3.Connection, action: str, target: str, actor: str, reason: str,
         detail: dict[str, Any]) -> None:
    conn.execute("INSERT INTO moderation_log (action, target, actor, reason, detail, created_at) "
                 "VALUES (?, ?, ?, ?, ?, ?)",
                 (action, target, actor, reason, json.dumps(detail, ensure_ascii=False), _now()))


def hide_dialogues(store: "Store", dialogue_ids: list[str], *, actor: str, reason: str,
                   hide: bool = True) -> list[str]:
    """Hide (or unhide) stored dialogues; returns the ids that exist. Logged in the same transaction."""
    found = []
    with store._write() as conn:
        for dialogue_id in dialogue_ids:
            if conn.execute("SELECT 1 FROM dialogues WHERE dialogue_id = ?", (dialogue_id,)).fetchone() is None:
                continue
            found.append(dialogue_id)
            if hide:
                conn.execute("INSERT OR REPLACE INTO hidden_dialogues (dialogue_id, reason, actor, hidden_at) "
                             "VALUES (?, ?, ?, ?)", (dialogue_id, reason, actor, _now()))
            else:
                conn.execute("DELETE FROM hidden_dialogues WHERE dialogue_id = ?", (dialogue_id,))
            _log(conn, "hide" if hide else "unhide", dialogue_id, actor, reason, {})
    return found


def delete_dialogues(store: "Store", dialogue_ids: list[str], *, actor: str, reason: str,
                     target: Optional[str] = None) -> dict[str, int]:
    """Delete dialogues with their scores, jobs and the votes of their battles; one logged transaction."""
    counts = {"dialogues": 0, "votes": 0}
    with store._write() as conn:
        for dialogue_id in dialogue_ids:
            counts["votes"] += conn.execute(
                "DELETE FROM votes WHERE dialogue_a = ? OR dialogue_b = ?", (dialogue_id, dialogue_id)
            ).rowcount
            conn.execute("DELETE FROM scores WHERE dialogue_id = ?", (dialogue_id,))
            conn.execute("DELETE FROM scoring_jobs WHERE dialogue_id = ?", (dialogue_id,))
            conn.execute("DELETE FROM hidden_dialogues WHERE dialogue_id = ?", (dialogue_id,))
            counts["dialogues"] += conn.execute("DELETE FROM dialogues WHERE dialogue_id = ?",
                                                (dialogue_id,)).rowcount
        conn.execute("DELETE FROM vote_origins WHERE vote_id NOT IN (SELECT vote_id FROM votes)")
        conn.execute("DELETE FROM vote_flags WHERE vote_id NOT IN (SELECT vote_id FROM votes)")
        _log(conn, "delete", target or ",".join(dialogue_ids), actor, reason, {**counts, "ids": dialogue_ids})
    return counts


def dialogue_ids_of_user(store: "Store", user_id: str) -> list[str]:
    rows = store._conn().execute("SELECT dialogue_id FROM dialogues WHERE user_id = ? ORDER BY created_at",
                                 (user_id,)).fetchall()
    return [r[0] for r in rows]


def moderation_entries(store: "Store", limit: int = 100) -> list[dict[str, Any]]:
    rows = store._conn().execute(
        "SELECT entry_id, action, target, actor, reason, detail, created_at FROM moderation_log "
        "ORDER BY entry_id DESC LIMIT ?", (limit,),
    ).fetchall()
    return [dict(r) for r in rows]
