"""Per-user and per-IP limits on battles and votes, over a moving time window.

A "user" is the browser session, by the identity the server issued it
(`webapp.protection.identity`; people are anonymous); the IP address is the
one the server's connection reports, or a trusted proxy's forwarding header
(`ARENA_TRUSTED_PROXIES`, `webapp.one_port.proxy_options`); nothing else a
client sends is believed. Keys are hashed (salted with the database's own
secret) before they are counted.

The counting is in the store (`arena.store.limits`): an admission is one
transaction that checks both caps and records the action together, so
simultaneous requests, and several app processes sharing one database,
admit exactly the configured numbers. Votes are also recorded with their
origin in the store (`arena.store.votes`), where bursts are flagged durably.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from typing import Any, Optional, Sequence

from arena.store import Admitted, Cap, CapReached, Store, StoreError
from webapp.protection.identity import SessionIdentities, server_session_id

log = logging.getLogger(__name__)


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

    def __init__(self, limits: Limits, store: Store):
        self.limits = limits
        self.store = store
        self._amounts = {
            ("battle", "user"): limits.battles_per_user, ("battle", "ip"): limits.battles_per_ip,
            ("vote", "user"): limits.votes_per_user, ("vote", "ip"): limits.votes_per_ip,
        }

    def check(self, action: str, user_key: str, ip_key: str) -> None:
        """Count one `action` for both keys, or raise without counting it."""
        self.admit(action, user_key, ip_key).count()

    def admit(self, action: str, user_key: str, ip_key: str) -> "Admission":
        """Count one `action` for both keys at once, or raise LimitReached counting nothing. The caller
        keeps the admission (`count`) once the write it stands for succeeded, or gives it back
        (`take_back`, or leaving `with admission:` by an exception): a write the store refused, on a
        full disk, must not count twice when the person tries again."""
        caps = [Cap(f"{action}:{who}", key, max(0, self._amounts[(action, who)]), self.limits.window_s)
                for who, key in (("user", user_key), ("ip", ip_key))]
        try:
            return Admission(self.store, self.store.admit_capped(caps))
        except CapReached as exc:
            minutes = max(1, round(self.limits.window_s / 60))
            amount = exc.cap.limit
            noun = ("battle" if action == "battle" else "vote") + ("" if amount == 1 else "s")
            raise LimitReached(
                f"You have reached the limit of {amount} {noun} per {minutes} minutes"
                f"{' from this network' if exc.cap.scope.endswith(':ip') else ''}. Thank you for taking part; "
                "please come back later."
            ) from None


class Admission:
    """An action counted toward its limits, kept unless given back: `count` keeps it, `take_back` (or an
    exception leaving `with admission:`) frees its places. `counts` says how many actions each cap's
    window holds, this one included."""

    def __init__(self, store: Store, admitted: Admitted):
        self.store = store
        self.counts: Sequence[int] = admitted.counts
        self._hits: Optional[tuple[str, ...]] = admitted.hit_ids

    def count(self) -> None:
        self._hits = None

    def take_back(self) -> None:
        hits, self._hits = self._hits, None
        if hits:
            try:
                self.store.take_back(hits)
            except StoreError:  # a full disk may refuse even this; the places then stay counted
                log.warning("could not give back %d counted action(s)", len(hits))
            except Exception as exc:  # the database itself failing must not hide the caller's error
                log.warning("could not give back %d counted action(s): %s", len(hits), type(exc).__name__)

    def __enter__(self) -> "Admission":
        return self

    def __exit__(self, kind: Any, *_: Any) -> None:
        if kind is None:
            self.count()
        else:
            self.take_back()


def origin_keys_of(services: Any, request: Any, user: Optional[str] = None) -> tuple[str, str]:
    """Hashed (user, IP) keys of a request, salted with the database's own secret. The user is `user`
    when given (a participant known across reloads), else the request's server-issued session."""
    salt = services.origin_salt
    session, host = request_origin(request, services.identities)
    return origin_key("user", user or session, salt), origin_key("ip", host, salt)
