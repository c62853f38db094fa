"""Whole tables at once: what a Hub mirror reads to push and writes back on a restore
(`arena.corpus.shards`), in one transaction each.

`BulkRows` is a part of `arena.store.Store`.
"""

from __future__ import annotations

from typing import Any, Iterable, Optional

import sqlalchemy as sa

from arena.dialogue import Dialogue, Score, Vote
from arena.store import schema as t
from arena.store.part import StorePart
from arena.store.statements import insert_for, utc_key

# Tables whose rows say that the store holds a corpus (the scoring queue, settings and runs do not).
_CORPUS_TABLES = (t.dialogues, t.votes, t.moderation_log, t.study_files, t.study_participants)


def _table(name: str) -> sa.Table:
    try:
        return t.metadata.tables[name]
    except KeyError:
        raise ValueError(f"the store has no table {name!r}") from None


class BulkRows(StorePart):
    """Reading and restoring whole tables (a part of `Store`)."""

    def is_empty(self) -> bool:
        """Whether the store holds no dialogue, vote, moderation entry, study file nor study worker."""
        with self.read() as conn:
            return not any(conn.execute(sa.select(table).limit(1)).first() for table in _CORPUS_TABLES)

    def table_rows(self, names: Iterable[str]) -> dict[str, list[dict[str, Any]]]:
        """Every row of the named tables (column -> value, in primary-key order), read in one snapshot."""
        out: dict[str, list[dict[str, Any]]] = {}
        with self.read() as conn:
            for name in names:
                table = _table(name)
                query = sa.select(table).order_by(*table.primary_key.columns)
                out[name] = [dict(row._mapping) for row in conn.execute(query)]
        return out

    def restore_rows(self, *, dialogues: list[Dialogue], scores: dict[str, dict[str, Score]],
                     votes: list[tuple[Vote, Optional[str]]], hidden: list[dict[str, Any]],
                     moderation: list[dict[str, Any]], tables: dict[str, list[dict[str, Any]]]) -> None:
        """Write a corpus back in one transaction: dialogues, their scores (dialogue id -> metric -> score),
        votes with why each was flagged (or None), hidden dialogues, moderation log entries (without their
        ids), and rows of other tables given by name, inserted as they are."""
        with self.write() as conn:
            for d in dialogues:
                self._put_dialogue(conn, d)
            for dialogue_id, by_metric in scores.items():
                self._put_scores(conn, dialogue_id, by_metric)
            for vote, flag in votes:
                self._put_vote(conn, vote)
                if flag:
                    conn.execute(insert_for(conn, t.vote_flags).values(vote_id=vote.vote_id, reason=flag,
                                                                       flagged_at=utc_key(vote.timestamp))
                                 .on_conflict_do_nothing(index_elements=["vote_id"]))
            for row in hidden:
                conn.execute(insert_for(conn, t.hidden_dialogues).values(**row)
                             .on_conflict_do_nothing(index_elements=["dialogue_id"]))
            for entry in moderation:
                conn.execute(sa.insert(t.moderation_log).values(**entry))
            for name, rows in tables.items():
                if rows:
                    conn.execute(sa.insert(_table(name)), rows)
