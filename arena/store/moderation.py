"""Researchers' moderation: hidden dialogues, deletions and the moderation log (tables `hidden_dialogues`
and `moderation_log` of `arena.store.schema`). Each change is logged in the same transaction as the change.

`Moderation` is a part of `arena.store.Store`.
"""

from __future__ import annotations

import json
from typing import Any, Optional

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from arena.store import schema as t
from arena.store.part import StorePart
from arena.store.statements import now_key


def _log(conn: Connection, action: str, target: str, actor: str, reason: str, detail: dict[str, Any]) -> None:
    conn.execute(sa.insert(t.moderation_log).values(
        action=action, target=target, actor=actor, reason=reason,
        detail=json.dumps(detail, ensure_ascii=False), created_at=now_key()))


class Moderation(StorePart):
    """Hiding, deleting and the log of both (a part of `Store`)."""

    def hidden_dialogue_ids(self) -> set[str]:
        with self.read() as conn:
            return set(conn.execute(sa.select(t.hidden_dialogues.c.dialogue_id)).scalars())

    def hide_dialogues(
        self, dialogue_ids: list[str], *, actor: str, reason: str, hide: bool = True
    ) -> list[str]:
        """Hide (or show again) stored dialogues; returns the ids found. Logged in the same transaction."""
        h = t.hidden_dialogues.c
        with self.write() as conn:
            found = sorted(set(conn.execute(sa.select(t.dialogues.c.dialogue_id)
                                            .where(t.dialogues.c.dialogue_id.in_(dialogue_ids))).scalars()))
            for dialogue_id in found:
                conn.execute(sa.delete(t.hidden_dialogues).where(h.dialogue_id == dialogue_id))
                if hide:
                    conn.execute(sa.insert(t.hidden_dialogues).values(
                        dialogue_id=dialogue_id, reason=reason, actor=actor, hidden_at=now_key()))
                _log(conn, "hide" if hide else "unhide", dialogue_id, actor, reason, {})
        return found

    def delete_dialogues(self, dialogue_ids: list[str], *, actor: str, reason: str,
                         target: Optional[str] = None) -> dict[str, int]:
        """Delete dialogues with their scores, jobs, battle votes and start claims; one logged transaction."""
        ids = sorted(set(dialogue_ids))
        v = t.votes.c
        counts = {"dialogues": 0, "votes": 0}
        with self.write() as conn:
            vote_ids = list(conn.execute(sa.select(v.vote_id).where(
                sa.or_(v.dialogue_a.in_(ids), v.dialogue_b.in_(ids)))).scalars())
            for table, column in ((t.vote_flags, t.vote_flags.c.vote_id),
                                  (t.vote_origins, t.vote_origins.c.vote_id), (t.votes, v.vote_id)):
                result = conn.execute(sa.delete(table).where(column.in_(vote_ids)))
                if table is t.votes:
                    counts["votes"] = result.rowcount
            for table in (t.scores, t.scoring_jobs, t.hidden_dialogues, t.board_dialogues,
                          t.conversation_starts):
                conn.execute(sa.delete(table).where(table.c.dialogue_id.in_(ids)))
            counts["dialogues"] = conn.execute(sa.delete(t.dialogues)
                                               .where(t.dialogues.c.dialogue_id.in_(ids))).rowcount
            _log(conn, "delete", target or ",".join(ids), actor, reason, {**counts, "ids": ids})
        return counts

    def stored_user_ids(self) -> list[str]:
        with self.read() as conn:
            return list(conn.execute(sa.select(t.dialogues.c.user_id).distinct()).scalars())

    def dialogue_ids_of_users(self, user_ids: list[str]) -> list[str]:
        d = t.dialogues.c
        with self.read() as conn:
            return list(conn.execute(sa.select(d.dialogue_id).where(d.user_id.in_(user_ids))
                                     .order_by(d.created_at)).scalars())

    def moderation_entries(self, limit: int = 100) -> list[dict[str, Any]]:
        """The latest entries of the moderation log, newest first."""
        m = t.moderation_log.c
        with self.read() as conn:
            rows = conn.execute(sa.select(t.moderation_log).order_by(m.entry_id.desc()).limit(limit)).all()
        return [dict(r._mapping) for r in rows]

    def last_moderation_entry_id(self) -> Optional[int]:
        """The id of the newest moderation log entry (None while the log is empty): it changes whenever
        a researcher hides or deletes something."""
        with self.read() as conn:
            return conn.execute(sa.select(sa.func.max(t.moderation_log.c.entry_id))).scalar()
