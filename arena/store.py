"""Persistent storage for dialogues, scores, battle votes and evaluation runs.

One SQLite file in WAL mode. Each thread (and each process) uses its own
connection; every write is a single ``BEGIN IMMEDIATE`` transaction, so a
crash or kill leaves either the whole write or none of it, and concurrent
writers queue on SQLite's lock (``busy_timeout``) instead of failing.

A dialogue row holds the full Dialogue JSON except its scores, which live in
the ``scores`` table (one row per metric) so that scorers can add results
without rewriting dialogues; reads merge the two back together.
"""

from __future__ import annotations

import json
import os
import secrets
import sqlite3
import threading
import weakref
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator, Optional, Union

from arena.dialogue import Dialogue, Score, UserKind, Vote, utc_now

DB_SCHEMA_VERSION = 2
BUSY_TIMEOUT_S = 30.0

_SCHEMA_V1 = """
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS dialogues (
    dialogue_id TEXT PRIMARY KEY,
    crs_id TEXT NOT NULL,
    user_kind TEXT NOT NULL,
    user_id TEXT NOT NULL,
    ended INTEGER NOT NULL,
    sentiment TEXT,
    num_turns INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS dialogues_crs ON dialogues (crs_id, created_at);
CREATE INDEX IF NOT EXISTS dialogues_kind ON dialogues (user_kind, created_at);
CREATE INDEX IF NOT EXISTS dialogues_created ON dialogues (created_at);
CREATE TABLE IF NOT EXISTS scores (
    dialogue_id TEXT NOT NULL REFERENCES dialogues (dialogue_id) ON DELETE CASCADE,
    metric TEXT NOT NULL,
    value REAL,
    scorer TEXT NOT NULL,
    version TEXT NOT NULL,
    model TEXT,
    error TEXT,
    details TEXT NOT NULL,
    scored_at TEXT NOT NULL,
    PRIMARY KEY (dialogue_id, metric)
);
CREATE INDEX IF NOT EXISTS scores_metric ON scores (metric);
CREATE TABLE IF NOT EXISTS votes (
    vote_id TEXT PRIMARY KEY,
    battle_id TEXT NOT NULL,
    dialogue_a TEXT NOT NULL,
    dialogue_b TEXT NOT NULL,
    crs_a TEXT NOT NULL,
    crs_b TEXT NOT NULL,
    choice TEXT NOT NULL,
    user_kind TEXT NOT NULL,
    created_at TEXT NOT NULL,
    data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS votes_created ON votes (created_at);
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    state TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
"""

# Migration hook: MIGRATIONS[n] upgrades a database from version n-1 to n,
# inside the opening transaction. Add an entry and bump DB_SCHEMA_VERSION.
MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {}


def _migrate_to_v2(conn: sqlite3.Connection) -> None:
    # Public deployment tables (scoring jobs, vote flags, moderation): see arena.store_safety.
    from arena.store_safety import migrate_v2

    migrate_v2(conn)


MIGRATIONS[2] = _migrate_to_v2


class StoreError(RuntimeError):
    pass


def _utc_key(dt: datetime) -> str:
    """A sortable UTC text form (naive times are taken as UTC)."""
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class _Handle:
    """Owns one thread's connection; closing it when the thread's locals go away."""

    __slots__ = ("conn", "pid", "__weakref__")

    def __init__(self, conn: sqlite3.Connection):
        self.conn, self.pid = conn, os.getpid()

    def close(self) -> None:
        try:
            self.conn.close()
        except sqlite3.Error:
            pass

    def __del__(self) -> None:
        # Not in a forked child: the parent still owns that connection.
        if self.pid == os.getpid():
            self.close()


class Store:
    """Thread- and process-safe SQLite store. Cheap to create; open lazily per thread."""

    def __init__(self, path: Union[str, Path]):
        if str(path) in ("", ":memory:") or str(path).startswith("file::memory:"):
            raise ValueError("Store needs a file path (each thread opens its own connection)")
        self.path = Path(path)
        if self.path.is_dir():
            raise StoreError(f"{self.path} is a directory, not a database file")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the folder of {self.path}: {exc.strerror or exc}") from None
        self._local = threading.local()
        self._handles: "weakref.WeakSet[_Handle]" = weakref.WeakSet()
        self._lock = threading.Lock()
        try:
            with self._write() as conn:
                self._migrate(conn)
        except sqlite3.DatabaseError as exc:
            self.close()
            raise StoreError(f"{self.path} is not a usable SQLite database ({exc})") from None

    # -- connections ----------------------------------------------------------
    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["path"])

    def _conn(self) -> sqlite3.Connection:
        handle = getattr(self._local, "handle", None)
        if handle is not None and handle.pid == os.getpid():
            return handle.conn
        conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None,
                               check_same_thread=False)
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        self._enable_wal(conn)
        # NORMAL is durable across process crashes in WAL mode; only power loss
        # can drop the last commits.
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        handle = _Handle(conn)
        self._local.handle = handle
        with self._lock:
            self._handles.add(handle)
        return conn

    @staticmethod
    def _enable_wal(conn: sqlite3.Connection) -> None:
        # Switching a brand-new file to WAL needs a brief exclusive lock that the
        # busy handler does not always wait for, so retry a few times.
        for attempt in range(50):
            try:
                mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
                if mode.lower() == "wal":
                    return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc):
                    raise
            threading.Event().wait(0.02 * (attempt + 1))
        raise StoreError(f"could not switch {conn} to WAL mode")

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        conn = self._conn()
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        """A consistent snapshot across several SELECTs."""
        conn = self._conn()
        conn.execute("BEGIN")
        try:
            yield conn
        finally:
            conn.execute("COMMIT")

    def close(self) -> None:
        """Close every connection this Store opened (in any thread)."""
        with self._lock:
            handles = list(self._handles)
            self._handles = weakref.WeakSet()
        for handle in handles:
            handle.close()
        self._local = threading.local()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- schema -----------------------------------------------------------------
    def _migrate(self, conn: sqlite3.Connection) -> None:
        conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        row = conn.execute("SELECT version FROM schema_version").fetchone()
        if row is None:
            for statement in _SCHEMA_V1.split(";"):
                if statement.strip():
                    conn.execute(statement)
            conn.execute("INSERT INTO schema_version (version) VALUES (1)")
            version = 1
        else:
            version = row[0]
        if version > DB_SCHEMA_VERSION:
            raise StoreError(f"{self.path} has schema version {version}, newer than this code "
                             f"({DB_SCHEMA_VERSION}); upgrade the application")
        for target in range(version + 1, DB_SCHEMA_VERSION + 1):
            MIGRATIONS[target](conn)
            conn.execute("UPDATE schema_version SET version = ?", (target,))

    def schema_version(self) -> int:
        return self._conn().execute("SELECT version FROM schema_version").fetchone()[0]

    def integrity_check(self) -> str:
        return self._conn().execute("PRAGMA integrity_check").fetchone()[0]

    # -- dialogues ----------------------------------------------------------------
    def save_dialogue(self, d: Dialogue) -> None:
        """Insert or replace the dialogue (feedback included) and merge its scores."""
        with self._write() as conn:
            self._put_dialogue(conn, d)

    def save_dialogues(self, dialogues: list[Dialogue]) -> None:
        """Save many dialogues in one transaction: all of them or none."""
        with self._write() as conn:
            for d in dialogues:
                self._put_dialogue(conn, d)

    def _put_dialogue(self, conn: sqlite3.Connection, d: Dialogue) -> None:
        conn.execute(
            """INSERT INTO dialogues (dialogue_id, crs_id, user_kind, user_id, ended, sentiment, num_turns,
                                      created_at, updated_at, data)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
               ON CONFLICT (dialogue_id) DO UPDATE SET
                   crs_id = excluded.crs_id, user_kind = excluded.user_kind, user_id = excluded.user_id,
                   ended = excluded.ended, sentiment = excluded.sentiment, num_turns = excluded.num_turns,
                   created_at = excluded.created_at, updated_at = excluded.updated_at,
                   data = excluded.data""",
            (
                d.dialogue_id, d.crs_id, d.user.kind.value, d.user.id, int(d.ended),
                d.feedback.sentiment if d.feedback else None, d.num_turns,
                _utc_key(d.created_at), _utc_key(utc_now()), d.model_dump_json(exclude={"scores"}),
            ),
        )
        self._put_scores(conn, d.dialogue_id, d.scores)

    def save_scores(self, dialogue_id: str, scores: dict[str, Score]) -> None:
        """Merge scores into a stored dialogue; re-saving the same scores changes nothing.

        Per metric the most recent result (by Score.timestamp) wins, so a stale
        copy of a dialogue cannot overwrite a newer score. Metrics not named
        are left alone.
        """
        with self._write() as conn:
            found = conn.execute("SELECT 1 FROM dialogues WHERE dialogue_id = ?", (dialogue_id,)).fetchone()
            if found is None:
                raise KeyError(f"no dialogue {dialogue_id!r} in {self.path}")
            self._put_scores(conn, dialogue_id, scores)

    @staticmethod
    def _put_scores(conn: sqlite3.Connection, dialogue_id: str, scores: dict[str, Score]) -> None:
        for metric, score in scores.items():
            row = conn.execute("SELECT scored_at FROM scores WHERE dialogue_id = ? AND metric = ?",
                               (dialogue_id, metric)).fetchone()
            if row is not None and _utc_key(datetime.fromisoformat(row[0])) > _utc_key(score.timestamp):
                continue
            conn.execute(
                """INSERT OR REPLACE INTO scores (dialogue_id, metric, value, scorer, version, model, error,
                                                  details, scored_at)
                   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                (dialogue_id, metric, score.value, score.scorer, score.version, score.model, score.error,
                 json.dumps(score.details, ensure_ascii=False), score.timestamp.isoformat()),
            )

    def get_dialogue(self, dialogue_id: str) -> Optional[Dialogue]:
        with self._read() as conn:
            row = conn.execute("SELECT data FROM dialogues WHERE dialogue_id = ?", (dialogue_id,)).fetchone()
            if row is None:
                return None
            d = Dialogue.model_validate_json(row["data"])
            d.scores = self._scores_for(conn, [dialogue_id]).get(dialogue_id, {})
            return d

    @staticmethod
    def _filters(crs_id: Optional[Union[str, list[str]]], user_kind: Optional[Union[str, UserKind]],
                 ended: Optional[bool], sentiment: Optional[str],
                 missing_score: Optional[str]) -> tuple[str, list[Any]]:
        clauses, args = [], []
        if isinstance(crs_id, str):
            clauses.append("crs_id = ?")
            args.append(crs_id)
        elif crs_id is not None:
            clauses.append(f"crs_id IN ({','.join('?' * len(crs_id))})")
            args.extend(crs_id)
        if user_kind is not None:
            clauses.append("user_kind = ?")
            args.append(UserKind(user_kind).value)
        if ended is not None:
            clauses.append("ended = ?")
            args.append(int(ended))
        if sentiment is not None:
            clauses.append("sentiment = ?")
            args.append(sentiment)
        if missing_score is not None:
            clauses.append("NOT EXISTS (SELECT 1 FROM scores s WHERE s.dialogue_id = dialogues.dialogue_id "
                           "AND s.metric = ? AND s.value IS NOT NULL)")
            args.append(missing_score)
        return (" WHERE " + " AND ".join(clauses)) if clauses else "", args

    def list_dialogues(self, crs_id: Optional[Union[str, list[str]]] = None,
                       user_kind: Optional[Union[str, UserKind]] = None, ended: Optional[bool] = None,
                       limit: Optional[int] = None, *, offset: int = 0, sentiment: Optional[str] = None,
                       missing_score: Optional[str] = None) -> list[Dialogue]:
        """Dialogues oldest first, with their scores.

        `crs_id` may be one id or a list; `missing_score` keeps only dialogues
        with no value yet for that metric (unscored or failed).
        """
        where, args = self._filters(crs_id, user_kind, ended, sentiment, missing_score)
        sql = f"SELECT dialogue_id, data FROM dialogues{where} ORDER BY created_at, rowid"
        if limit is not None or offset:
            sql += " LIMIT ? OFFSET ?"
            args += [-1 if limit is None else int(limit), int(offset)]
        with self._read() as conn:
            rows = conn.execute(sql, args).fetchall()
            scores = self._scores_for(conn, [r["dialogue_id"] for r in rows])
        out = []
        for r in rows:
            d = Dialogue.model_validate_json(r["data"])
            d.scores = scores.get(d.dialogue_id, {})
            out.append(d)
        return out

    def count_dialogues(self, crs_id: Optional[Union[str, list[str]]] = None,
                        user_kind: Optional[Union[str, UserKind]] = None, ended: Optional[bool] = None, *,
                        sentiment: Optional[str] = None, missing_score: Optional[str] = None) -> int:
        where, args = self._filters(crs_id, user_kind, ended, sentiment, missing_score)
        return self._conn().execute(f"SELECT COUNT(*) FROM dialogues{where}", args).fetchone()[0]

    @staticmethod
    def _scores_for(conn: sqlite3.Connection, ids: list[str]) -> dict[str, dict[str, Score]]:
        out: dict[str, dict[str, Score]] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            rows = conn.execute(
                f"SELECT * FROM scores WHERE dialogue_id IN ({','.join('?' * len(chunk))}) ORDER BY metric",
                chunk,
            ).fetchall()
            for r in rows:
                out.setdefault(r["dialogue_id"], {})[r["metric"]] = Score(
                    value=r["value"], scorer=r["scorer"], version=r["version"], model=r["model"],
                    error=r["error"], details=json.loads(r["details"]),
                    timestamp=datetime.fromisoformat(r["scored_at"]),
                )
        return out

    # -- battles ------------------------------------------------------------------
    def save_vote(self, vote: Vote) -> None:
        with self._write() as conn:
            self._put_vote(conn, vote)

    def save_battle(self, dialogue_a: Dialogue, dialogue_b: Dialogue, vote: Vote) -> None:
        """Both dialogues of a side-by-side battle and its vote, in one transaction."""
        if (vote.dialogue_a, vote.dialogue_b) != (dialogue_a.dialogue_id, dialogue_b.dialogue_id):
            raise ValueError("vote.dialogue_a/dialogue_b must be the ids of dialogue_a/dialogue_b")
        if (vote.crs_a, vote.crs_b) != (dialogue_a.crs_id, dialogue_b.crs_id):
            raise ValueError("vote.crs_a/crs_b must be the systems of dialogue_a/dialogue_b")
        with self._write() as conn:
            self._put_dialogue(conn, dialogue_a)
            self._put_dialogue(conn, dialogue_b)
            self._put_vote(conn, vote)

    @staticmethod
    def _put_vote(conn: sqlite3.Connection, vote: Vote) -> None:
        conn.execute(
            """INSERT OR REPLACE INTO votes (vote_id, battle_id, dialogue_a, dialogue_b, crs_a, crs_b, choice,
                                             user_kind, created_at, data)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
            (vote.vote_id, vote.battle_id, vote.dialogue_a, vote.dialogue_b, vote.crs_a, vote.crs_b,
             vote.choice, vote.user_kind.value, _utc_key(vote.timestamp), vote.model_dump_json()),
        )

    def list_votes(self, user_kind: Optional[Union[str, UserKind]] = None) -> list[Vote]:
        """Votes in the order they were cast."""
        sql, args = "SELECT data FROM votes", []
        if user_kind is not None:
            sql += " WHERE user_kind = ?"
            args.append(UserKind(user_kind).value)
        rows = self._conn().execute(sql + " ORDER BY created_at, rowid", args).fetchall()
        return [Vote.model_validate_json(r["data"]) for r in rows]

    def pair_counts(self, user_kind: Optional[Union[str, UserKind]] = None) -> dict[frozenset, int]:
        """How many battles each unordered pair of systems has had so far."""
        sql, args = "SELECT crs_a, crs_b, COUNT(*) FROM votes", []
        if user_kind is not None:
            sql += " WHERE user_kind = ?"
            args.append(UserKind(user_kind).value)
        counts: dict[frozenset, int] = {}
        for a, b, n in self._conn().execute(sql + " GROUP BY crs_a, crs_b", args).fetchall():
            key = frozenset((a, b))
            counts[key] = counts.get(key, 0) + n
        return counts

    # -- evaluation runs ---------------------------------------------------------
    def save_run(self, run_id: str, state: dict[str, Any]) -> None:
        with self._write() as conn:
            conn.execute(
                """INSERT INTO runs (run_id, state, updated_at) VALUES (?, ?, ?)
                   ON CONFLICT (run_id) DO UPDATE SET
                       state = excluded.state, updated_at = excluded.updated_at""",
                (run_id, json.dumps(state, ensure_ascii=False, default=str), _utc_key(utc_now())),
            )

    def get_run(self, run_id: str) -> Optional[dict[str, Any]]:
        row = self._conn().execute("SELECT state FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        return json.loads(row["state"]) if row else None

    def list_runs(self) -> list[tuple[str, dict[str, Any]]]:
        """(run_id, state) pairs, most recently updated first."""
        rows = self._conn().execute("SELECT run_id, state FROM runs ORDER BY updated_at DESC, rowid DESC")
        return [(r["run_id"], json.loads(r["state"])) for r in rows.fetchall()]

    # -- small settings ------------------------------------------------------------
    def get_meta(self, key: str) -> Optional[str]:
        row = self._conn().execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row["value"] if row else None

    def get_or_create_secret(self, key: str) -> str:
        """A random secret kept in the database; the first caller (of any process) creates it."""
        with self._write() as conn:
            conn.execute("INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)",
                         (key, secrets.token_hex(32)))
            return conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()["value"]
