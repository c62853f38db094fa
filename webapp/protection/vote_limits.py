"""Per-user and per-IP limits on battles and votes, over a moving time window.

A "user" is the browser session, by the identity the server issued it
(`webapp.protection.identity`; people are anonymous); the IP address is the
one Gradio's request reports (behind a proxy, make the proxy set it). Keys are
hashed before they are kept, so raw addresses live only in memory, and only as
hashes. The counting is the `limits` library's moving window in memory: limits
hold per app process, which is how the arena is served. Votes are also recorded
with their origin in the store (`arena.store.votes`), where bursts are
flagged durably.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Callable, Optional

from limits import RateLimitItemPerSecond, storage, strategies

from webapp.protection.identity import SessionIdentities, server_session_id


class LimitReached(RuntimeError):
    """Too many battles or votes from one user or address; the message says when to come back."""


def origin_key(kind: str, value: Optional[str], salt: str = "") -> str:
    """A short keyed hash of a session id or IP address (never the raw value)."""
    digest = hashlib.sha256(f"{salt}\x00{kind}\x00{value or 'unknown'}".encode("utf-8")).hexdigest()
    return f"{kind}:{digest[:16]}"


def request_origin(request: Any, identities: SessionIdentities) -> tuple[Optional[str], Optional[str]]:
    """(server-issued session identity, IP address) of a Gradio request; None where unknown.

    Never the client's own `session_hash` (see `webapp.protection.identity`)."""
    if request is None:
        return None, None
    session = server_session_id(request, identities)
    client = getattr(request, "client", None)
    host = getattr(client, "host", None) if client is not None else None
    return session, host


@dataclass(frozen=True)
class Limits:
    window_s: float
    battles_per_user: int
    battles_per_ip: int
    votes_per_user: int
    votes_per_ip: int

    @classmethod
    def from_settings(cls, settings: Any) -> "Limits":
        return cls(settings.limit_window_s, settings.max_battles_per_user, settings.max_battles_per_ip,
                   settings.max_votes_per_user, settings.max_votes_per_ip)


class VoteLimiter:
    """`check("battle" | "vote", user_key, ip_key)` raises LimitReached when either limit is spent."""

    def __init__(self, limits: Limits):
        self.limits = limits
        self._storage = storage.MemoryStorage()
        self._window = strategies.MovingWindowRateLimiter(self._storage)
        window = max(1, int(round(limits.window_s)))
        self._items = {
            ("battle", "user"): RateLimitItemPerSecond(max(0, limits.battles_per_user), window),
            ("battle", "ip"): RateLimitItemPerSecond(max(0, limits.battles_per_ip), window),
            ("vote", "user"): RateLimitItemPerSecond(max(0, limits.votes_per_user), window),
            ("vote", "ip"): RateLimitItemPerSecond(max(0, limits.votes_per_ip), window),
        }

    def check(self, action: str, user_key: str, ip_key: str) -> None:
        """Count one `action` for both keys, or raise without counting it."""
        self.admit(action, user_key, ip_key).count()

    def admit(self, action: str, user_key: str, ip_key: str) -> "Admission":
        """Raise LimitReached when either limit is spent; else an admission that counts the `action` once
        its caller calls `count` (after the write it stands for succeeded: a write the store refused, on a
        full disk, must not count twice when the person tries again)."""
        pairs = [(self._items[(action, "user")], user_key), (self._items[(action, "ip")], ip_key)]
        for item, key in pairs:
            if not self._window.test(item, action, key):
                minutes = max(1, round(self.limits.window_s / 60))
                noun = ("battle" if action == "battle" else "vote") + ("" if item.amount == 1 else "s")
                raise LimitReached(
                    f"You have reached the limit of {item.amount} {noun} per {minutes} minutes"
                    f"{' from this network' if key == ip_key else ''}. Thank you for taking part; "
                    "please come back later."
                )
        return Admission(lambda: [self._window.hit(item, action, key) for item, key in pairs])


class Admission:
    """An action let through a limit but not counted yet: `count` counts it, once."""

    def __init__(self, count: Callable[[], Any]):
        self._count: Optional[Callable[[], Any]] = count

    def count(self) -> None:
        if self._count is not None:
            self._count, count = None, self._count
            count()


def origin_keys_of(services: Any, request: Any, user: Optional[str] = None) -> tuple[str, str]:
    """Hashed (user, IP) keys of a request, salted with the database's own secret. The user is `user`
    when given (a participant known across reloads), else the request's server-issued session."""
    salt = services.origin_salt
    session, host = request_origin(request, services.identities)
    return origin_key("user", user or session, salt), origin_key("ip", host, salt)
