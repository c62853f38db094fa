"""Conversation starts: one conversation per first message, however many app processes receive it.

A conversation is created by its first message (the Chat stores nothing before it). When that message
reaches two processes at once (a client retrying through a load balancer without stickiness, the page's
event sent twice), each would make a conversation of its own with its own id, and both writes succeed:
the compare-and-set of `dialogue_versions` guards one id, not "the same start". So a process claims the
start first: a row keyed by a digest of the participant and the message's id (`start_key`), inserted or
not as one statement. The process whose row it is creates the conversation; any other one adopts the
conversation named in the row (`webapp.sessions.first_message`).

A claim holds for a bounded time (as long as the first turn may take), after which it is gone: the key
only has to outlive the retries of one message. A claim whose conversation is over (rated or ended) is
free again, so a client that reuses its message ids for each new conversation still starts a new one; a
deleted conversation's claims are deleted with it (`Moderation.delete_dialogues`).

`ConversationStarts` is a part of `arena.store.Store`.
"""

from __future__ import annotations

import time
from typing import Optional

import sqlalchemy as sa

from arena.store import schema as t
from arena.store.part import StorePart
from arena.store.statements import insert_for

_HOLDER = (sa.select(t.conversation_starts.c.dialogue_id)
           .where(t.conversation_starts.c.start_key == sa.bindparam("key")).with_for_update())
_OVER = sa.select(t.dialogues.c.ended, t.dialogues.c.sentiment).where(
    t.dialogues.c.dialogue_id == sa.bindparam("id"))


class ConversationStarts(StorePart):
    """Claims on the first message of a conversation (a part of `Store`)."""

    def claim_conversation_start(self, key: str, dialogue_id: str, *, hold_s: float,
                                 now: Optional[float] = None) -> str:
        """Claim `key` for the conversation `dialogue_id` for `hold_s` seconds; returns the conversation
        the key belongs to: `dialogue_id` when the claim is this one's (new, renewed, or taken over from
        an expired or finished conversation), else the other conversation's id."""
        now = time.time() if now is None else now
        s = t.conversation_starts.c
        with self.write() as conn:
            conn.execute(sa.delete(t.conversation_starts).where(s.expires_at <= now))
            # Inserted or not in one statement: of two processes claiming at once, one wins (on PostgreSQL
            # the second waits for the first's transaction and then finds its row).
            # (Whether it was inserted is read from RETURNING: PostgreSQL's driver reports no row count here.)
            inserted = conn.execute(insert_for(conn, t.conversation_starts).values(
                start_key=key, dialogue_id=dialogue_id, expires_at=now + hold_s)
                .on_conflict_do_nothing(index_elements=["start_key"])
                .returning(t.conversation_starts.c.start_key)).first()
            if inserted is not None:
                return dialogue_id
            holder = conn.execute(_HOLDER, {"key": key}).scalar()
            if holder is not None and holder != dialogue_id:
                over = conn.execute(_OVER, {"id": holder}).first()
                if over is None or not (over.ended or over.sentiment is not None):
                    return holder  # being created, or stored and under way: that is the conversation
            conn.execute(insert_for(conn, t.conversation_starts).values(
                start_key=key, dialogue_id=dialogue_id, expires_at=now + hold_s)
                .on_conflict_do_update(index_elements=["start_key"],
                                       set_={"dialogue_id": dialogue_id, "expires_at": now + hold_s}))
            return dialogue_id

    def conversation_start_holder(self, key: str, *, now: Optional[float] = None) -> Optional[str]:
        """The conversation holding `key` now (None: nobody, or the claim expired)."""
        now = time.time() if now is None else now
        s = t.conversation_starts.c
        with self.read() as conn:
            return conn.execute(sa.select(s.dialogue_id)
                                .where(s.start_key == key, s.expires_at > now)).scalar()

    def release_conversation_start(self, key: str, dialogue_id: str) -> None:
        """Give up the claim of `dialogue_id` on `key` (its first turn was refused, nothing was stored)."""
        s = t.conversation_starts.c
        with self.write() as conn:
            conn.execute(sa.delete(t.conversation_starts)
                         .where(s.start_key == key, s.dialogue_id == dialogue_id))
