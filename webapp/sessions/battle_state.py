"""A battle under way, and each participant's current one: the state `webapp.sessions.battle` works on.

Apart from the rules so that `Services` can hold the `BattleBook` (the rules
take the services).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import datetime
from typing import Optional

from cachetools import LRUCache

from arena.dialogue import Dialogue, Vote, utc_now

SIDES = ("A", "B")
# Battles kept in memory at most (one per participant); the least recently used are forgotten first
# (their dialogues are in the store, so a later visit rebuilds them).
MAX_BATTLES_KEPT = 10_000


@dataclass
class BattleSession:
    battle_id: str
    ticket: Optional[str]
    dialogues: dict[str, Dialogue]  # side -> dialogue
    vote: Optional[Vote] = None
    started_at: datetime = field(default_factory=utc_now)
    user_key: str = "user:unknown"  # hashed participant (or session) and IP (webapp.protection.vote_limits.origin_key)
    ip_key: str = "ip:unknown"
    flagged: Optional[str] = None  # why the stored vote was flagged, if it was
    lock: threading.Lock = field(default_factory=threading.Lock)
    busy: dict[str, threading.Lock] = field(default_factory=lambda: {s: threading.Lock() for s in SIDES})

    def rated(self, side: str) -> bool:
        return self.dialogues[side].feedback is not None

    def both_rated(self) -> bool:
        return all(self.rated(s) for s in SIDES)

    def answering(self, side: str) -> bool:
        return self.busy[side].locked()


class BattleBook:
    """Each participant's battle under way (the latest they started), shared by their tabs and reloads."""

    def __init__(self, limit: int = MAX_BATTLES_KEPT):
        self._lock = threading.Lock()  # cachetools' caches are not thread-safe
        self._sessions: LRUCache[str, BattleSession] = LRUCache(maxsize=limit)

    def get(self, user_id: str) -> Optional[BattleSession]:
        with self._lock:
            return self._sessions.get(user_id)

    def put(self, user_id: str, session: BattleSession) -> BattleSession:
        """Keep `session` as the participant's battle (a new battle replaces the one before)."""
        with self._lock:
            self._sessions[user_id] = session
            return session

    def forget(self, user_id: str) -> None:
        with self._lock:
            self._sessions.pop(user_id, None)
