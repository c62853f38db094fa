"""Battles and their votes: one vote per battle, where a vote came from, why it looks automated, and the
claims that let every app process pair systems from one count (tables `votes`, `vote_origins`,
`vote_flags`, `battle_claims` of `arena.store.schema`), each vote numbered within its participant's
session (`arena.store.session_order`).

`Votes` is a part of `arena.store.Store`: its methods run on the store's own
engine, each in one transaction.
"""

from __future__ import annotations

import time
import uuid
from datetime import datetime, timedelta
from typing import Any, Callable, Optional, Sequence, Union

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from arena.dialogue import Dialogue, UserKind, Vote, utc_now
from arena.conversation.self_naming import void_reason
from arena.store import schema as t
from arena.store.part import StorePart
from arena.store.session_order import VOTE_ORDER_SCOPE, next_order
from arena.store.statements import upsert, utc_key

PairCounts = dict[frozenset, int]
_PAIRING_LOCK = 0x4152454E41_02  # PostgreSQL advisory lock of battle pairing


class BattleAlreadyVoted(ValueError):
    """A second vote for one battle."""


def _check_battle(dialogue_a: Dialogue, dialogue_b: Dialogue, vote: Vote) -> None:
    if (vote.dialogue_a, vote.dialogue_b) != (dialogue_a.dialogue_id, dialogue_b.dialogue_id):
        raise ValueError("vote.dialogue_a/dialogue_b must be the ids of dialogue_a/dialogue_b")
    if (vote.crs_a, vote.crs_b) != (dialogue_a.crs_id, dialogue_b.crs_id):
        raise ValueError("vote.crs_a/crs_b must be the systems of dialogue_a/dialogue_b")


class Votes(StorePart):
    """Battle votes and pairing claims (a part of `Store`)."""

    def save_battle(self, dialogue_a: Dialogue, dialogue_b: Dialogue, vote: Vote, *,
                    claim_id: Optional[str] = None) -> None:
        """Both dialogues of a side-by-side battle and its vote, in one transaction.

        `claim_id` (from `claim_pair`) is released in the same transaction, so
        the battle is never counted twice nor not at all.
        """
        _check_battle(dialogue_a, dialogue_b, vote)
        with self.write() as conn:
            self._put_battle(conn, dialogue_a, dialogue_b, vote, claim_id)

    def save_battle_once(self, dialogue_a: Dialogue, dialogue_b: Dialogue, vote: Vote, *,
                         user_key: str, ip_key: str, started_at: Optional[datetime],
                         burst_votes: int, burst_window_s: float, min_battle_s: float,
                         claim_id: Optional[str] = None,
                         versions: Optional[tuple[int, int]] = None) -> Optional[str]:
        """Store a battle's dialogues, its vote and where it came from, in one transaction.

        With `versions` (each side's stored version, read by the step) the vote is stored only while both
        rows are still at them: a side written or deleted by another app process meanwhile raises
        `DialogueChanged` (arena.store.dialogue_versions), and nothing is stored.

        A second vote for the same battle raises BattleAlreadyVoted. Returns why the
        vote was flagged, or None: more than `burst_votes` votes from one IP or one
        user within `burst_window_s` (this one included), a vote cast less than
        `min_battle_s` after the battle started, or a battle voided because a reply
        named its own system (`arena.conversation.self_naming`). A flagged vote is kept, left out
        of the leaderboard.
        """
        _check_battle(dialogue_a, dialogue_b, vote)
        o = t.vote_origins.c
        since = utc_key(vote.timestamp - timedelta(seconds=burst_window_s))
        with self.write() as conn:
            # Votes of one address or session are counted one after another (on PostgreSQL, two at once
            # would each miss the other's row and a burst could pass unflagged; SQLite's lock does this).
            self._lock_keys(conn, [("vote-burst:ip", ip_key), ("vote-burst:user", user_key)], time.time())
            taken = conn.execute(
                sa.select(t.votes.c.vote_id).where(t.votes.c.battle_id == vote.battle_id)
            ).first()
            if taken is not None:
                raise BattleAlreadyVoted(f"battle {vote.battle_id} already has a vote")
            if versions is not None:
                self._check_versions(conn, ((dialogue_a.dialogue_id, versions[0]),
                                            (dialogue_b.dialogue_id, versions[1])))
            self._put_battle(conn, dialogue_a, dialogue_b, vote, claim_id)
            conn.execute(sa.insert(t.vote_origins).values(
                vote_id=vote.vote_id, battle_id=vote.battle_id, user_key=user_key, ip_key=ip_key,
                started_at=utc_key(started_at) if started_at else None, cast_at=utc_key(vote.timestamp)))
            reasons = [void] if (void := void_reason(dialogue_a, dialogue_b)) else []
            for column, key, who in ((o.ip_key, ip_key, "address"), (o.user_key, user_key, "session")):
                recent = conn.execute(sa.select(sa.func.count()).select_from(t.vote_origins)
                                      .where(column == key, o.cast_at >= since)).scalar_one()
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
                                                        flagged_at=utc_key(vote.timestamp)))
            return reason

    def _put_battle(self, conn: Connection, dialogue_a: Dialogue, dialogue_b: Dialogue, vote: Vote,
                    claim_id: Optional[str]) -> None:
        self._put_dialogue(conn, dialogue_a)
        self._put_dialogue(conn, dialogue_b)
        self._put_vote(conn, vote)
        if claim_id is not None:
            conn.execute(sa.delete(t.battle_claims).where(t.battle_claims.c.claim_id == claim_id))

    def _put_vote(self, conn: Connection, vote: Vote) -> None:
        order = next_order(conn, self._lock_keys, scope=VOTE_ORDER_SCOPE, table=t.votes, key="vote_id",
                           key_value=vote.vote_id, user_id=vote.user_id, column="session_order")
        upsert(conn, t.votes, {
            "vote_id": vote.vote_id, "battle_id": vote.battle_id, "dialogue_a": vote.dialogue_a,
            "dialogue_b": vote.dialogue_b, "crs_a": vote.crs_a, "crs_b": vote.crs_b, "choice": vote.choice,
            "user_kind": vote.user_kind.value, "created_at": utc_key(vote.timestamp),
            "data": vote.model_dump_json(), "study": vote.study, "user_id": vote.user_id,
            "session_order": order,
        }, ["vote_id"])

    def list_votes(self, user_kind: Optional[Union[str, UserKind]] = None) -> list[Vote]:
        """Votes in the order they were cast (equal times by id)."""
        query = sa.select(t.votes.c.data).order_by(t.votes.c.created_at, t.votes.c.vote_id)
        if user_kind is not None:
            query = query.where(t.votes.c.user_kind == UserKind(user_kind).value)
        with self.read() as conn:
            return [Vote.model_validate_json(data) for data in conn.execute(query).scalars()]

    def vote_orders(self) -> dict[str, int]:
        """vote id -> its order within its participant's session (`arena.store.session_order`; votes of a
        pooled id have none and are left out)."""
        v = t.votes.c
        with self.read() as conn:
            return {r[0]: int(r[1]) for r in conn.execute(
                sa.select(v.vote_id, v.session_order).where(v.session_order.is_not(None))).all()}

    def battle_voted(self, battle_id: str) -> bool:
        """Whether a vote for this battle is stored."""
        with self.read() as conn:
            return conn.execute(sa.select(t.votes.c.vote_id).where(t.votes.c.battle_id == battle_id)
                                .limit(1)).first() is not None

    def flagged_votes(self) -> dict[str, str]:
        """vote id -> why it was flagged."""
        with self.read() as conn:
            return {r.vote_id: r.reason for r in conn.execute(sa.select(t.vote_flags)).all()}

    # -- pairing ------------------------------------------------------------------------
    def pair_counts(self, user_kind: Optional[Union[str, UserKind]] = None) -> PairCounts:
        """How many battles each unordered pair of systems has had so far in the open arena (a crowdsourced
        study assigns its own pairs, `arena.store.studies`)."""
        v = t.votes.c
        query = (
            sa.select(v.crs_a, v.crs_b, sa.func.count()).where(v.study.is_(None)).group_by(v.crs_a, v.crs_b)
        )
        if user_kind is not None:
            query = query.where(v.user_kind == UserKind(user_kind).value)
        with self.read() as conn:
            return _by_pair(conn.execute(query).all())

    def claim_pair(self, choose: Callable[[PairCounts], tuple[str, str]], *,
                   user_kind: Union[str, UserKind] = UserKind.HUMAN,
                   ttl_s: float = 1800.0) -> tuple[tuple[str, str], str]:
        """Choose the pair of a new battle from the counts every process shares, and claim it.

        `choose` gets stored battles plus battles claimed and not yet stored
        (claims expire after `ttl_s`: a person may leave without voting) and
        returns (system A, system B). Choosing and claiming happen under one
        lock, so two app processes never both take the last least-played pair.
        Returns (the pair, the claim id for `save_battle` or `release_claim`).
        """
        kind = UserKind(user_kind).value
        now = utc_now()
        with self.write() as conn:
            if self.backend == "postgresql":
                conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PAIRING_LOCK})
            c, v = t.battle_claims.c, t.votes.c
            conn.execute(sa.delete(t.battle_claims).where(c.expires_at < utc_key(now)))
            # Stored and claimed battles in ONE statement: on PostgreSQL (read committed) each statement
            # has its own snapshot, and a battle saved between two reads would be counted in neither.
            both = sa.union_all(
                sa.select(v.crs_a, v.crs_b, sa.func.count()).where(v.user_kind == kind, v.study.is_(None))
                .group_by(v.crs_a, v.crs_b),
                sa.select(c.crs_low, c.crs_high, sa.func.count()).where(c.user_kind == kind)
                .group_by(c.crs_low, c.crs_high))
            pair = choose(_by_pair(conn.execute(both).all()))
            claim_id = uuid.uuid4().hex
            low, high = sorted(pair)
            conn.execute(sa.insert(t.battle_claims).values(
                claim_id=claim_id, crs_low=low, crs_high=high, user_kind=kind,
                expires_at=utc_key(now + timedelta(seconds=ttl_s))))
        return (pair[0], pair[1]), claim_id

    def release_claim(self, claim_id: str) -> None:
        """The claimed battle was abandoned (or stored elsewhere): stop counting it."""
        with self.write() as conn:
            conn.execute(sa.delete(t.battle_claims).where(t.battle_claims.c.claim_id == claim_id))

    def open_claims(self, user_kind: Union[str, UserKind] = UserKind.HUMAN) -> int:
        """Claims not yet stored nor expired."""
        c = t.battle_claims.c
        with self.read() as conn:
            return conn.execute(sa.select(sa.func.count()).select_from(t.battle_claims).where(
                c.user_kind == UserKind(user_kind).value, c.expires_at >= utc_key(utc_now()))).scalar_one()


def _by_pair(rows: Sequence[Any]) -> PairCounts:
    """(system, system, count) rows -> counts per unordered pair (A-B and B-A together)."""
    counts: PairCounts = {}
    for a, b, n in rows:
        key = frozenset((a, b))
        counts[key] = counts.get(key, 0) + n
    return counts
