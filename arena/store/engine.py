"""The `Store` class: connections, schema migrations on open, dialogues with their scores, evaluation
runs and small settings. The rest of its methods come from the package's other modules (`votes`,
`scoring_queue`, `moderation`, `studies`, `bulk`, `limits`, `conversation_starts`, ...), which `Store`
inherits.

One code path over SQLAlchemy Core for two backends, chosen by location:
a file path is a SQLite database (WAL mode, the default for one machine), a
``postgresql://`` URL a PostgreSQL database that several app processes can
share. Every write is one transaction (SQLite: ``BEGIN IMMEDIATE``, so
concurrent writers queue on its lock instead of failing), so a crash or kill
leaves either the whole write or none of it. The schema is versioned by the
Alembic revisions in ``arena/store/migrations``; opening a store upgrades the
database in place, including a SQLite file made before Alembic was used.

A dialogue row holds the full Dialogue JSON except its scores, which live in
the ``scores`` table (one row per metric) so that scorers can add results
without rewriting dialogues; reads merge the two back together.
"""

from __future__ import annotations

import errno
import json
import os
import secrets
import threading
from contextlib import contextmanager
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator, Optional, Union

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine

from arena.runtime.config import db_location
from arena.dialogue import Dialogue, Score, UserKind, copy_acts
from arena.llm.redaction import redact_optional, redact_strings, redact_text
from arena.store import schema as t
from arena.store.board_rows import BoardRowsStore
from arena.store.bulk import BulkRows
from arena.store.conversation_starts import ConversationStarts
from arena.store.limits import LimitCounters
from arena.store.dialogue_versions import DialogueVersions
from arena.store.researcher_logins import ResearcherLogins
from arena.store.run_leases import RunLeases
from arena.store.moderation import Moderation
from arena.store.platform_payments import PlatformPayments
from arena.store.platform_studies import PlatformStudies
from arena.store.scoring_queue import ScoringQueue
from arena.store.statements import insert_for, insert_for_dialect, now_key, upsert, utc_key
from arena.store.studies import Studies
from arena.store.votes import Votes

BUSY_TIMEOUT_S = 30.0
MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
LEGACY_SCHEMA_REVISION = "0001"  # what a database with the old `schema_version` table (version 1) holds
# Keys of PostgreSQL advisory locks (any fixed 64-bit numbers unique to this application).
_MIGRATION_LOCK = 0x4152454E41_01

Location = Union[str, Path]


class StoreError(RuntimeError):
    pass


class StoreFull(StoreError):
    """A write refused because the disk (or the database's size cap) is full; its transaction was rolled back,
    so nothing of the write was kept."""


# errno values of a write the disk cannot take: no space, over a quota, over the file-size limit
_FULL_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


def is_disk_full(exc: BaseException) -> bool:
    """Whether `exc` (a driver error wrapped by SQLAlchemy or not, or an OSError) says the disk is full."""
    cause = getattr(exc, "orig", None) or exc
    if isinstance(cause, OSError):
        return cause.errno in _FULL_ERRNOS
    if getattr(cause, "pgcode", None) == "53100":  # PostgreSQL's disk_full
        return True
    text = str(cause).lower()
    return "database or disk is full" in text or "no space left on device" in text


# -- locations ------------------------------------------------------------------------


def is_database_url(location: Location) -> bool:
    """True for `scheme://...` (a server or an explicit sqlite URL), False for a file path."""
    return isinstance(db_location(location), str)


def engine_url(location: Location) -> sa.URL:
    """The SQLAlchemy URL for a file path or a database URL (PostgreSQL through psycopg 3)."""
    if not is_database_url(location):
        return sa.URL.create("sqlite", database=str(Path(location)))
    url = sa.make_url(str(location))
    if url.drivername in ("postgresql", "postgres", "postgresql+psycopg2"):
        url = url.set(drivername="postgresql+psycopg")
    if url.get_backend_name() not in ("sqlite", "postgresql"):
        raise ValueError(f"unsupported database {url.get_backend_name()!r}: use a file path or postgresql://")
    return url


def describe_location(location: Location) -> str:
    """The location without its password, for messages and logs."""
    if not is_database_url(location):
        return str(location)
    return engine_url(location).render_as_string(hide_password=True)


# -- migrations ------------------------------------------------------------------------


def alembic_config(connection: Optional[Connection] = None) -> Any:
    """An Alembic configuration for the store's revisions (run on `connection` when given)."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


@lru_cache(maxsize=1)
def migration_scripts() -> Any:
    """The store's Alembic revisions (read once; `cache_clear` reads them again)."""
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config())


def head_revision() -> str:
    """The newest schema revision this code knows."""
    return migration_scripts().get_current_head()


def _current_revision(conn: Connection) -> Optional[str]:
    from alembic.runtime.migration import MigrationContext

    return MigrationContext.configure(conn).get_current_revision()


# -- SQLite connection set-up ----------------------------------------------------------


def _sqlite_connect(dbapi_conn: Any, _record: Any) -> None:
    # Transactions are begun by `_sqlite_begin`, not by the driver.
    dbapi_conn.isolation_level = None
    cursor = dbapi_conn.cursor()
    cursor.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
    _enable_wal(cursor)
    # NORMAL is durable across process crashes in WAL mode; only power loss can drop the last commits.
    cursor.execute("PRAGMA synchronous = NORMAL")
    cursor.execute("PRAGMA foreign_keys = ON")
    cursor.close()


def _sqlite_foreign_keys(conn: Connection, state: str) -> None:
    """Turn SQLite's foreign keys ON or OFF on the driver's connection, outside any transaction (inside one
    SQLite ignores the pragma)."""
    dbapi_conn = conn.connection.dbapi_connection
    # None once a failed statement invalidated the connection: the pool's next one starts with them ON
    # (`_sqlite_connect`), and the failure itself is what the caller must see.
    if dbapi_conn is not None:
        dbapi_conn.execute(f"PRAGMA foreign_keys = {state}")


def _enable_wal(cursor: Any) -> None:
    import sqlite3

    # Switching a brand-new file to WAL needs a brief exclusive lock that the
    # busy handler does not always wait for, so retry a few times.
    for attempt in range(50):
        try:
            if cursor.execute("PRAGMA journal_mode = WAL").fetchone()[0].lower() == "wal":
                return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise
        threading.Event().wait(0.02 * (attempt + 1))
    raise StoreError("could not switch the SQLite database to WAL mode")


def _sqlite_begin(conn: Connection) -> None:
    # A writer takes the write lock up front: a deferred transaction that later
    # tries to write can fail at once instead of waiting for the lock.
    write = conn.get_execution_options().get("arena_write", False)
    conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")


# Frequent reads, built once (values are bound at execution).
_DIALOGUE_DATA = sa.select(t.dialogues.c.data).where(t.dialogues.c.dialogue_id == sa.bindparam("id"))
_DIALOGUE_DATA_LOCKED = _DIALOGUE_DATA.with_for_update()  # read-modify-write of one dialogue row
# A row lock on PostgreSQL; SQLite holds the write lock already.
_SCORE_TIME = (sa.select(t.scores.c.scored_at)
               .where(t.scores.c.dialogue_id == sa.bindparam("id"),
                      t.scores.c.metric == sa.bindparam("metric"))
               .with_for_update())
_SCORES_OF = (sa.select(t.scores).where(t.scores.c.dialogue_id.in_(sa.bindparam("ids", expanding=True)))
              .order_by(t.scores.c.metric))


@lru_cache(maxsize=2)
def _dialogue_upsert(dialect: str) -> Any:
    """Insert a dialogue at version 1, or replace it and bump its version (built once per dialect)."""
    stmt = insert_for_dialect(dialect, t.dialogues)
    columns = [c.name for c in t.dialogues.columns if c.name not in ("dialogue_id", "version")]
    return stmt.on_conflict_do_update(index_elements=["dialogue_id"],
                                      set_={**{c: stmt.excluded[c] for c in columns},
                                            "version": t.dialogues.c.version + 1})


def _redact_errors(d: Dialogue) -> None:
    """Credentials out of everything a dialogue stores as an error (an endpoint may echo its headers)."""
    for u in d.utterances:
        if u.error:
            u.error = redact_text(u.error)
    for r in d.ratings:
        if r.error:
            r.error = redact_text(r.error)
    if d.metadata:
        d.metadata = redact_strings(d.metadata)


class Store(Votes, ScoringQueue, DialogueVersions, RunLeases, Moderation, Studies, BulkRows, LimitCounters,
            BoardRowsStore, ResearcherLogins, ConversationStarts, PlatformPayments, PlatformStudies):
    """Thread- and process-safe store. Cheap to create; connects lazily (a pool per process).

    Every method is one transaction. `read` and `write` open such a transaction for a query the store
    has no method for (the parts of the store in this package, and tests that look at raw rows).
    """

    def __init__(self, location: Location):
        text = str(location)
        if text in ("", ":memory:") or ":memory:" in text:
            raise ValueError(
                "Store needs a file path or a database URL (each thread opens its own connection)"
            )
        self.location = text
        self.url = engine_url(location)
        self.backend = self.url.get_backend_name()
        database = self.url.database
        if self.backend == "sqlite" and not database:  # `sqlite://` names SQLite's in-memory database
            raise ValueError(
                "Store needs a file path or a database URL (each thread opens its own connection)"
            )
        self.path: Optional[Path] = Path(database) if self.backend == "sqlite" and database else None
        if self.path is not None:
            if self.path.is_dir():
                raise StoreError(f"{self.path} is a directory, not a database file")
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"cannot create the folder of {self.path}: {exc.strerror or exc}") from None
        self._engine: Optional[Engine] = None
        self._pid = 0
        self._engine_lock = threading.Lock()
        try:
            self._migrate()
        except sa.exc.DBAPIError as exc:  # not a database, unreadable, server unreachable: one clear line
            self.close()
            cause = " ".join(str(exc.orig).split()) if exc.orig is not None else type(exc).__name__
            raise StoreError(
                f"{describe_location(self.location)} is not a usable database ({cause})"
            ) from None

    def __repr__(self) -> str:
        return f"Store({describe_location(self.location)!r})"

    # -- connections ----------------------------------------------------------
    def __getstate__(self) -> dict[str, Any]:
        return {"location": self.location}

    def __setstate__(self, state: dict[str, Any]) -> None:
        type(self).__init__(self, state["location"])

    def sql_engine(self) -> Engine:
        """The SQLAlchemy engine of this process (made on first use; a forked child makes its own)."""
        if self._engine is None or self._pid != os.getpid():
            with self._engine_lock:
                if self._engine is None or self._pid != os.getpid():
                    if self._engine is not None:  # in a forked child: the parent owns those connections
                        self._engine.dispose(close=False)
                    self._engine, self._pid = self._make_engine(), os.getpid()
        return self._engine

    def _make_engine(self) -> Engine:
        if self.backend == "sqlite":
            engine = sa.create_engine(self.url, pool_size=8, max_overflow=56,
                                      connect_args={"timeout": BUSY_TIMEOUT_S, "check_same_thread": False})
            event.listen(engine, "connect", _sqlite_connect)
            event.listen(engine, "begin", _sqlite_begin)
            return engine
        return sa.create_engine(self.url, pool_size=8, max_overflow=24, pool_pre_ping=True)

    @contextmanager
    def write(self) -> Iterator[Connection]:
        """One write transaction, committed at the end of the block, rolled back if it raises (a full disk
        raises StoreFull). On SQLite it takes the write lock at once, so writers queue instead of failing."""
        try:
            with self.sql_engine().connect() as conn:
                conn.execution_options(arena_write=True)
                with conn.begin():  # rolled back when anything inside fails
                    yield conn
        except (sa.exc.DBAPIError, OSError) as exc:
            if is_disk_full(exc):  # one kind the app answers in words; the transaction is already undone
                raise StoreFull(
                    f"{describe_location(self.location)} is full; nothing of this write was kept"
                ) from exc
            raise

    @contextmanager
    def read(self) -> Iterator[Connection]:
        """A consistent snapshot across several SELECTs."""
        with self.sql_engine().connect() as conn:
            if self.backend == "postgresql":
                conn.execution_options(isolation_level="REPEATABLE READ")
            with conn.begin():
                yield conn

    def release_idle_connections(self) -> None:
        """SQLite: close the pooled connections no thread is using, with the page cache each keeps in this
        process (up to 2 MB: the rows it read); the next use opens a fresh one. A connection in use finishes
        its work and goes back to the old pool, which nothing else holds: it closes when the garbage collector
        takes that pool. PostgreSQL keeps its pool (its caches live in the server)."""
        engine = self._engine
        if self.backend == "sqlite" and engine is not None and self._pid == os.getpid():
            engine.dispose()  # a fresh pool at once; the old one's idle connections closed

    def close(self) -> None:
        """Close every pooled connection this Store opened (in any thread)."""
        self.stop_renewing_leases()
        with self._engine_lock:
            engine, self._engine = self._engine, None
        if engine is not None:
            engine.dispose()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- schema -----------------------------------------------------------------
    def _migrate(self) -> None:
        """Bring the database to the newest revision; concurrent starters wait for each other."""
        head = head_revision()
        with self.read() as conn:
            if _current_revision(conn) == head:
                return
        with self.sql_engine().connect() as conn:
            if self.backend == "sqlite":
                # Rebuilding a table (Alembic's batch mode) must not fire ON DELETE CASCADE.
                _sqlite_foreign_keys(conn, "OFF")
            try:
                conn.execution_options(arena_write=True)
                with conn.begin():
                    if self.backend == "postgresql":
                        conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _MIGRATION_LOCK})
                    self._upgrade(conn)
                    if self.backend == "sqlite":
                        broken = conn.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
                        if broken:
                            raise StoreError(f"migration left rows with dangling references: {broken[:5]}")
            finally:
                if self.backend == "sqlite":
                    _sqlite_foreign_keys(conn, "ON")

    def _upgrade(self, conn: Connection) -> None:
        from alembic import command
        from alembic.util import CommandError

        config = alembic_config(conn)
        current = _current_revision(conn)
        if current is None and sa.inspect(conn).has_table("schema_version"):
            legacy = conn.execute(sa.text("SELECT version FROM schema_version")).scalar()
            if legacy != 1:
                raise StoreError(f"{self!r} has schema version {legacy}, newer than this code; "
                                 "upgrade the application")
            command.stamp(config, LEGACY_SCHEMA_REVISION)
        elif current is not None:
            try:
                migration_scripts().get_revision(current)
            except CommandError:
                raise StoreError(f"{self!r} has schema revision {current!r}, newer than this code "
                                 f"(head {head_revision()!r}); upgrade the application") from None
        command.upgrade(config, "head")

    def schema_version(self) -> Optional[str]:
        """The Alembic revision the database is at."""
        with self.read() as conn:
            return _current_revision(conn)

    def integrity_check(self) -> str:
        """'ok', or what is wrong (SQLite's own check; on PostgreSQL, rows whose references dangle)."""
        with self.read() as conn:
            if self.backend == "sqlite":
                return conn.exec_driver_sql("PRAGMA integrity_check").scalar_one()
            orphans = conn.execute(
                sa.select(sa.func.count()).select_from(t.scores).where(
                    ~sa.exists().where(t.dialogues.c.dialogue_id == t.scores.c.dialogue_id))).scalar_one()
            return "ok" if not orphans else f"{orphans} scores of missing dialogues"

    # -- dialogues ----------------------------------------------------------------
    def save_dialogue(self, d: Dialogue) -> None:
        """Insert or replace the dialogue (feedback included) and merge its scores."""
        with self.write() as conn:
            self._put_dialogue(conn, d)

    def save_dialogues(self, dialogues: list[Dialogue]) -> None:
        """Save many dialogues in one transaction: all of them or none."""
        with self.write() as conn:
            for d in dialogues:
                self._put_dialogue(conn, d)

    @staticmethod
    def _dialogue_row(d: Dialogue) -> dict[str, Any]:
        """The `dialogues` row of `d` (errors redacted first), without its version."""
        _redact_errors(d)
        return {
            "dialogue_id": d.dialogue_id, "crs_id": d.crs_id, "user_kind": d.user.kind.value,
            "user_id": d.user.id, "ended": int(d.ended),
            "sentiment": d.feedback.sentiment if d.feedback else None, "num_turns": d.num_turns,
            "created_at": utc_key(d.created_at), "updated_at": now_key(),
            "data": d.model_dump_json(exclude={"scores"}),
        }

    def _put_dialogue(self, conn: Connection, d: Dialogue) -> None:
        # Every write bumps the row's version (arena.store.dialogue_versions).
        conn.execute(_dialogue_upsert(conn.dialect.name), {**self._dialogue_row(d), "version": 1})
        self._put_board_row(conn, d)
        self._put_scores(conn, d.dialogue_id, d.scores)

    def save_scores(self, dialogue_id: str, scores: dict[str, Score], *,
                    acts_from: Optional[Dialogue] = None) -> None:
        """Merge scores into a stored dialogue; re-saving the same scores changes nothing.

        Per metric the most recent result (by Score.timestamp) wins, so a stale
        copy of a dialogue cannot overwrite a newer score. Metrics not named
        are left alone. `acts_from`, the scored copy of the dialogue, stores
        the dialogue acts the scores were computed from (and who made them)
        in the same transaction; only the acts are taken from it, and the
        dialogue row is rewritten only when they changed.
        """
        with self.write() as conn:
            self._merge_scores(conn, dialogue_id, scores, acts_from)

    def _merge_scores(self, conn: Connection, dialogue_id: str, scores: dict[str, Score],
                      acts_from: Optional[Dialogue]) -> None:
        """`save_scores` within the caller's transaction."""
        found = conn.execute(_DIALOGUE_DATA if acts_from is None else _DIALOGUE_DATA_LOCKED,
                             {"id": dialogue_id}).first()
        if found is None:
            raise KeyError(f"no dialogue {dialogue_id!r} in {self!r}")
        if acts_from is not None:
            stored = Dialogue.model_validate_json(found[0])
            if copy_acts(acts_from, stored):
                conn.execute(sa.update(t.dialogues).where(t.dialogues.c.dialogue_id == dialogue_id).values(
                    data=stored.model_dump_json(exclude={"scores"}), updated_at=now_key(),
                    version=t.dialogues.c.version + 1))
        self._put_scores(conn, dialogue_id, scores)

    @staticmethod
    def _put_scores(conn: Connection, dialogue_id: str, scores: dict[str, Score]) -> None:
        # Sorted, so that concurrent writers lock rows in one order (no deadlock on PostgreSQL).
        for metric in sorted(scores):
            score = scores[metric]
            row = conn.execute(_SCORE_TIME, {"id": dialogue_id, "metric": metric}).first()
            if row is not None and utc_key(datetime.fromisoformat(row[0])) > utc_key(score.timestamp):
                continue
            upsert(conn, t.scores, {
                "dialogue_id": dialogue_id, "metric": metric, "value": score.value, "scorer": score.scorer,
                "version": score.version, "model": score.model, "error": redact_optional(score.error),
                "details": json.dumps(redact_strings(score.details), ensure_ascii=False),
                "scored_at": score.timestamp.isoformat(),
            }, ["dialogue_id", "metric"])

    def get_dialogue(self, dialogue_id: str) -> Optional[Dialogue]:
        with self.read() as conn:
            data = conn.execute(_DIALOGUE_DATA, {"id": dialogue_id}).scalar()
            if data is None:
                return None
            d = Dialogue.model_validate_json(data)
            d.scores = self._scores_for(conn, [dialogue_id]).get(dialogue_id, {})
            return d

    def dialogue_ids(self, ids: list[str]) -> set[str]:
        """Which of these dialogue ids are stored (to resume a run without redoing its dialogues)."""
        found: set[str] = set()
        with self.read() as conn:
            for start in range(0, len(ids), 500):
                chunk = ids[start:start + 500]
                found.update(conn.execute(sa.select(t.dialogues.c.dialogue_id)
                                          .where(t.dialogues.c.dialogue_id.in_(chunk))).scalars())
        return found

    @staticmethod
    def _filters(crs_id: Optional[Union[str, list[str]]], user_kind: Optional[Union[str, UserKind]],
                 ended: Optional[bool], sentiment: Optional[str],
                 missing_score: Optional[str], user_id: Optional[str] = None) -> list[Any]:
        d, clauses = t.dialogues.c, []
        if user_id is not None:
            clauses.append(d.user_id == user_id)
        if isinstance(crs_id, str):
            clauses.append(d.crs_id == crs_id)
        elif crs_id is not None:
            clauses.append(d.crs_id.in_(list(crs_id)))
        if user_kind is not None:
            clauses.append(d.user_kind == UserKind(user_kind).value)
        if ended is not None:
            clauses.append(d.ended == int(ended))
        if sentiment is not None:
            clauses.append(d.sentiment == sentiment)
        if missing_score is not None:
            clauses.append(~sa.exists().where(t.scores.c.dialogue_id == d.dialogue_id,
                                              t.scores.c.metric == missing_score,
                                              t.scores.c.value.is_not(None)))
        return clauses

    def list_dialogues(self, crs_id: Optional[Union[str, list[str]]] = None,
                       user_kind: Optional[Union[str, UserKind]] = None, ended: Optional[bool] = None,
                       limit: Optional[int] = None, *, offset: int = 0, sentiment: Optional[str] = None,
                       missing_score: Optional[str] = None, user_id: Optional[str] = None) -> list[Dialogue]:
        """Dialogues oldest first (equal times by id), with their scores.

        `crs_id` may be one id or a list; `missing_score` keeps only dialogues
        with no value yet for that metric (unscored or failed); `user_id` only
        those of one user.
        """
        query = (sa.select(t.dialogues.c.dialogue_id, t.dialogues.c.data)
                 .where(*self._filters(crs_id, user_kind, ended, sentiment, missing_score, user_id))
                 .order_by(t.dialogues.c.created_at, t.dialogues.c.dialogue_id))
        if limit is not None:
            query = query.limit(int(limit))
        if offset:
            query = query.offset(int(offset))
        with self.read() as conn:
            rows = conn.execute(query).all()
            scores = self._scores_for(conn, [r.dialogue_id for r in rows])
        out = []
        for r in rows:
            d = Dialogue.model_validate_json(r.data)
            d.scores = scores.get(d.dialogue_id, {})
            out.append(d)
        return out

    def count_dialogues(self, crs_id: Optional[Union[str, list[str]]] = None,
                        user_kind: Optional[Union[str, UserKind]] = None, ended: Optional[bool] = None, *,
                        sentiment: Optional[str] = None, missing_score: Optional[str] = None) -> int:
        query = (sa.select(sa.func.count()).select_from(t.dialogues)
                 .where(*self._filters(crs_id, user_kind, ended, sentiment, missing_score)))
        with self.read() as conn:
            return conn.execute(query).scalar_one()

    @staticmethod
    def _scores_for(conn: Connection, ids: list[str]) -> dict[str, dict[str, Score]]:
        out: dict[str, dict[str, Score]] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            rows = conn.execute(_SCORES_OF, {"ids": chunk}).all()
            for r in rows:
                out.setdefault(r.dialogue_id, {})[r.metric] = Score(
                    value=r.value, scorer=r.scorer, version=r.version, model=r.model,
                    error=r.error, details=json.loads(r.details),
                    timestamp=datetime.fromisoformat(r.scored_at),
                )
        return out

    # -- evaluation runs ---------------------------------------------------------
    def save_run(self, run_id: str, state: dict[str, Any]) -> None:
        with self.write() as conn:
            upsert(conn, t.runs, {"run_id": run_id,
                                   "state": json.dumps(state, ensure_ascii=False, default=str),
                                   "updated_at": now_key()}, ["run_id"])

    def get_run(self, run_id: str) -> Optional[dict[str, Any]]:
        with self.read() as conn:
            state = conn.execute(sa.select(t.runs.c.state).where(t.runs.c.run_id == run_id)).scalar()
        return json.loads(state) if state is not None else None

    def list_runs(self) -> list[tuple[str, dict[str, Any]]]:
        """(run_id, state) pairs, most recently updated first."""
        query = sa.select(t.runs.c.run_id, t.runs.c.state).order_by(t.runs.c.updated_at.desc(),
                                                                    t.runs.c.run_id.desc())
        with self.read() as conn:
            return [(r.run_id, json.loads(r.state)) for r in conn.execute(query).all()]

    # -- small settings ------------------------------------------------------------
    def get_meta(self, key: str) -> Optional[str]:
        with self.read() as conn:
            return conn.execute(sa.select(t.meta.c.value).where(t.meta.c.key == key)).scalar()

    def set_meta(self, key: str, value: str) -> None:
        with self.write() as conn:
            conn.execute(insert_for(conn, t.meta).values(key=key, value=value)
                         .on_conflict_do_update(index_elements=["key"], set_={"value": value}))

    def get_or_create_secret(self, key: str) -> str:
        """A random secret kept in the database; the first caller (of any process) creates it."""
        with self.write() as conn:
            conn.execute(insert_for(conn, t.meta).values(key=key, value=secrets.token_hex(32))
                         .on_conflict_do_nothing(index_elements=["key"]))
            return conn.execute(sa.select(t.meta.c.value).where(t.meta.c.key == key)).scalar_one()
