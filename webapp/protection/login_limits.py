"""Failed researcher logins, limited per client address.

Gradio checks a login in its own `POST .../login` route and hands the auth
callable only the user name and password, so the limit sits in front of that
route as ASGI middleware: it sees the client's address and the route's answer
(200 accepted, 400 refused). The first `free_failures` failures of an address
cost nothing; each later attempt waits `base_delay_s`, doubling per failure up
to `max_delay_s`, before it is checked; `max_failures` failures lock the
address out for `lockout_s` (answered 429 at once, logged once). A success,
or `lockout_s` without a failure, forgets the address's failures.

This module is self-contained on purpose (the login check itself is
`webapp.protection.admin_auth`): `LoginLimiter` is the policy, `LoginLimitMiddleware`
applies it to the login paths of one ASGI app.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Iterable, Optional

log = logging.getLogger(__name__)

MAX_TRACKED = 10_000  # addresses remembered at most; the oldest quiet ones are forgotten first


@dataclass
class _Record:
    failures: int = 0
    last_failure: float = 0.0
    locked_until: float = 0.0


class LoginLimiter:
    def __init__(self, *, max_failures: int = 10, lockout_s: float = 900.0, free_failures: int = 3,
                 base_delay_s: float = 1.0, max_delay_s: float = 30.0,
                 clock: Callable[[], float] = time.monotonic):
        self.max_failures = max_failures
        self.lockout_s = lockout_s
        self.free_failures = free_failures
        self.base_delay_s = base_delay_s
        self.max_delay_s = max_delay_s
        self.clock = clock
        self._records: dict[str, _Record] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_settings(cls, settings: Any) -> "LoginLimiter":
        return cls(max_failures=settings.login_max_failures, lockout_s=settings.login_lockout_s)

    def _current(self, address: str) -> Optional[_Record]:
        record = self._records.get(address)
        if record is None:
            return None
        now = self.clock()
        if record.locked_until <= now and now - record.last_failure >= self.lockout_s:
            del self._records[address]  # quiet long enough: start afresh
            return None
        return record

    def locked_for(self, address: str) -> float:
        """Seconds the address stays locked out (0: it may try)."""
        with self._lock:
            record = self._current(address)
            return max(0.0, record.locked_until - self.clock()) if record else 0.0

    def delay_for(self, address: str) -> float:
        """Seconds this address's next attempt waits before it is checked."""
        with self._lock:
            record = self._current(address)
            extra = (record.failures if record else 0) - self.free_failures
            return 0.0 if extra < 0 else min(self.max_delay_s, self.base_delay_s * 2 ** extra)

    def failed(self, address: str) -> None:
        with self._lock:
            record = self._current(address) or self._records.setdefault(address, _Record())
            now = self.clock()
            record.failures += 1
            record.last_failure = now
            if record.failures >= self.max_failures and record.locked_until <= now:
                record.locked_until = now + self.lockout_s
                log.warning("researcher login locked out for address %s for %.0f s after %d failed attempts",
                            address, self.lockout_s, record.failures)
            if len(self._records) > MAX_TRACKED:
                oldest = min(self._records, key=lambda a: max(self._records[a].last_failure,
                                                              self._records[a].locked_until))
                self._records.pop(oldest, None)

    def succeeded(self, address: str) -> None:
        with self._lock:
            self._records.pop(address, None)


Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


class LoginLimitMiddleware:
    """Applies a LoginLimiter to `POST <path>` for each of `login_paths` of the wrapped ASGI app."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]], *, limiter: LoginLimiter,
                 login_paths: Iterable[str]):
        self.app = app
        self.limiter = limiter
        self.login_paths = {p.rstrip("/") or "/" for p in login_paths}

    def _is_login(self, scope: Scope) -> bool:
        if scope.get("type") != "http" or scope.get("method") != "POST":
            return False
        return (scope.get("path", "").rstrip("/") or "/") in self.login_paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self._is_login(scope):
            await self.app(scope, receive, send)
            return
        client = scope.get("client")
        address = str(client[0]) if client else "unknown"
        locked = self.limiter.locked_for(address)
        if locked > 0:
            await _refuse(send, locked)
            return
        delay = self.limiter.delay_for(address)
        if delay > 0:
            await asyncio.sleep(delay)

        async def watch(message: dict[str, Any]) -> None:
            # Counted before the answer leaves, so the client's next attempt already sees this one.
            if message["type"] == "http.response.start":
                status = int(message["status"])
                if status < 300:
                    self.limiter.succeeded(address)
                elif status in (400, 401, 403):
                    self.limiter.failed(address)
            await send(message)

        await self.app(scope, receive, watch)


async def _refuse(send: Send, locked_s: float) -> None:
    body = json.dumps({"detail": f"Too many failed logins; try again in {locked_s:.0f} s."}).encode()
    await send({"type": "http.response.start", "status": 429,
                "headers": [(b"content-type", b"application/json"), (b"retry-after", str(int(locked_s) + 1).encode()),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
