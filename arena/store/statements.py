"""SQL pieces every part of the store shares: time keys, and inserts and upserts written for the backend.

SQLite and PostgreSQL spell "insert, or update on conflict" alike but each
through its own dialect's `insert`, so the statement is built for the
connection's dialect.
"""

from __future__ import annotations

from datetime import datetime, timezone
from functools import lru_cache
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import Connection

from arena.dialogue import utc_now


def utc_key(dt: datetime) -> str:
    """A sortable UTC text form (naive times are taken as UTC)."""
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def now_key() -> str:
    """`utc_key` of the present moment."""
    return utc_key(utc_now())


def insert_for(conn: Connection, table: sa.Table) -> Any:
    """An INSERT of the connection's dialect, which has `on_conflict_do_nothing` / `_do_update`."""
    return insert_for_dialect(conn.dialect.name, table)


def insert_for_dialect(dialect: str, table: sa.Table) -> Any:
    """`insert_for` by the dialect's name."""
    return (pg_insert if dialect == "postgresql" else sqlite_insert)(table)


@lru_cache(maxsize=64)
def _upsert_statement(dialect: str, table: sa.Table, columns: tuple[str, ...], keys: tuple[str, ...]) -> Any:
    # Built once per shape: building SQLAlchemy statements costs more than running them on SQLite.
    stmt = (pg_insert if dialect == "postgresql" else sqlite_insert)(table)
    return stmt.on_conflict_do_update(index_elements=list(keys),
                                      set_={c: stmt.excluded[c] for c in columns if c not in keys})


def upsert(conn: Connection, table: sa.Table, row: dict[str, Any], keys: list[str]) -> None:
    """Insert `row`, or update the row with the same `keys`."""
    conn.execute(_upsert_statement(conn.dialect.name, table, tuple(row), tuple(keys)), row)
