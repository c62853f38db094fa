"""Hard limits and the researcher login lockout, counted in the store.

A limit kept in one process's memory holds for that process only: two app
processes sharing the database each let the configured number through, and
a burst of simultaneous requests to one process can pass a "test, then
count" check together. Here an admission is one transaction that locks the
row of each key it counts (`limit_keys`; SQLite's write lock serialises the
whole transaction anyway), counts that key's admitted actions within the
moving window (`limit_hits`), and records the new action only when every
cap has room. So N simultaneous requests, on any number of processes, get
exactly the configured number through.

Times are wall-clock seconds since the epoch, shared by every process (a
monotonic clock is not). Methods take `now` so tests can move time.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass
from typing import Iterable, Optional, Sequence

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from arena.store import schema as t
from arena.store.part import StorePart
from arena.store.statements import insert_for

LOGIN_SCOPE = "login"


@dataclass(frozen=True)
class Cap:
    """At most `limit` admitted actions of `key` in `scope` within `window_s` seconds; `limit` None counts
    them without refusing (to flag bursts)."""

    scope: str
    key: str
    limit: Optional[int]
    window_s: float


class CapReached(Exception):
    """An admission refused because `cap` has no room; nothing was recorded."""

    def __init__(self, cap: Cap):
        super().__init__(f"{cap.scope} limit of {cap.limit} per {cap.window_s:g} s reached")
        self.cap = cap


@dataclass(frozen=True)
class Admitted:
    """What `admit_capped` recorded: the new actions' ids (to take back) and, per cap, how many actions
    of its key its window now holds, this one included."""

    hit_ids: tuple[str, ...]
    counts: tuple[int, ...]


@dataclass(frozen=True)
class LoginTry:
    """One login attempt as `begin_login` counted it: `locked_s` > 0 refuses it (nothing counted); else
    `earlier_failures` were counted before this one, and `locks` says this attempt started a lockout."""

    locked_s: float
    earlier_failures: int
    locks: bool = False


def _now(now: Optional[float]) -> float:
    return time.time() if now is None else float(now)


class LimitCounters(StorePart):
    """The store's limit counters (a part of `arena.store.Store`)."""

    def _lock_keys(self, conn: Connection, keys: Iterable[tuple[str, str]], now: float) -> dict:
        """Create (if new) and lock each (scope, key) row, in one order so that transactions never wait on
        each other in a circle; their rows by key."""
        ordered = sorted(set(keys))
        for scope, key in ordered:
            conn.execute(insert_for(conn, t.limit_keys)
                         .values(scope=scope, key=key, failures=0, last_at=now, blocked_until=0.0)
                         .on_conflict_do_nothing(index_elements=["scope", "key"]))
        rows = {}
        for scope, key in ordered:
            query = (sa.select(t.limit_keys).where(t.limit_keys.c.scope == scope, t.limit_keys.c.key == key)
                     .with_for_update())
            rows[(scope, key)] = conn.execute(query).one()
        return rows

    def admit_capped(self, caps: Sequence[Cap], *, now: Optional[float] = None) -> Admitted:
        """Record one action for each distinct (scope, key) of `caps` when every cap has room, in one
        transaction; else raise CapReached (for the first full cap) and record nothing."""
        now = _now(now)
        keys = list(dict.fromkeys((c.scope, c.key) for c in caps))
        longest = {k: max(c.window_s for c in caps if (c.scope, c.key) == k) for k in keys}
        h = t.limit_hits.c
        with self.write() as conn:
            self._lock_keys(conn, keys, now)
            for (scope, key), window in longest.items():  # what no window of this key can count again
                conn.execute(
                    sa.delete(t.limit_hits).where(h.scope == scope, h.key == key, h.at <= now - window)
                )
            counts = []
            for cap in caps:
                held = conn.execute(sa.select(sa.func.count()).select_from(t.limit_hits).where(
                    h.scope == cap.scope, h.key == cap.key, h.at > now - cap.window_s)).scalar_one()
                if cap.limit is not None and held >= cap.limit:
                    raise CapReached(cap)  # rolls the transaction back: nothing recorded
                counts.append(held + 1)
            ids = tuple(secrets.token_hex(12) for _ in keys)
            conn.execute(
                sa.insert(t.limit_hits),
                [
                    {"hit_id": hit, "scope": scope, "key": key, "at": now}
                    for hit, (scope, key) in zip(ids, keys)
                ],
            )
        return Admitted(ids, tuple(counts))

    def take_back(self, hit_ids: Iterable[str]) -> None:
        """Forget admitted actions whose write failed (a full disk), so a retry is not counted twice."""
        ids = list(hit_ids)
        if ids:
            with self.write() as conn:
                conn.execute(sa.delete(t.limit_hits).where(t.limit_hits.c.hit_id.in_(ids)))

    def capped_count(self, scope: str, key: str, window_s: float, *, now: Optional[float] = None) -> int:
        """How many actions of `key` in `scope` were admitted within the last `window_s` seconds."""
        now, h = _now(now), t.limit_hits.c
        with self.read() as conn:
            return conn.execute(sa.select(sa.func.count()).select_from(t.limit_hits).where(
                h.scope == scope, h.key == key, h.at > now - window_s)).scalar_one()

    # -- the researcher login -------------------------------------------------------------
    def begin_login(self, key: str, *, max_failures: int, lockout_s: float,
                    now: Optional[float] = None) -> LoginTry:
        """Count a login attempt of `key` as a failure before its password is checked (`login_succeeded`
        forgets it when the password was right), in one transaction: N simultaneous attempts get at most
        `max_failures` checks. A locked-out key is refused and nothing is counted. Failures end with a
        lockout, or after `lockout_s` without one."""
        now = _now(now)
        with self.write() as conn:
            row = self._lock_keys(conn, [(LOGIN_SCOPE, key)], now)[(LOGIN_SCOPE, key)]
            if row.blocked_until > now:
                return LoginTry(locked_s=row.blocked_until - now, earlier_failures=row.failures)
            earlier = row.failures if now - row.last_at < lockout_s else 0  # quiet long enough: afresh
            failures = earlier + 1
            locks = failures >= max_failures
            blocked_until = now + lockout_s if locks else 0.0
            conn.execute(sa.update(t.limit_keys)
                         .where(t.limit_keys.c.scope == LOGIN_SCOPE, t.limit_keys.c.key == key)
                         .values(failures=0 if locks else failures, last_at=now, blocked_until=blocked_until))
        return LoginTry(locked_s=0.0, earlier_failures=earlier, locks=locks)

    def login_succeeded(self, key: str) -> None:
        """A right password: the key's failures are forgotten."""
        with self.write() as conn:
            conn.execute(sa.delete(t.limit_keys).where(t.limit_keys.c.scope == LOGIN_SCOPE,
                                                       t.limit_keys.c.key == key))

    def login_state(self, key: str, *, lockout_s: float, now: Optional[float] = None) -> tuple[int, float]:
        """(failures counted now, seconds the key stays locked out) of `key`."""
        now = _now(now)
        with self.read() as conn:
            row = conn.execute(sa.select(t.limit_keys).where(t.limit_keys.c.scope == LOGIN_SCOPE,
                                                             t.limit_keys.c.key == key)).first()
        if row is None:
            return 0, 0.0
        if row.blocked_until > now:
            return row.failures, row.blocked_until - now
        return (row.failures if now - row.last_at < lockout_s else 0), 0.0
