"""Failed researcher logins, limited per client address.

Gradio checks a login in its own `POST .../login` route and hands the auth
callable only the user name and password, so the limit sits in front of that
route as ASGI middleware: it sees the client's address (the connection's, or
a trusted proxy's forwarding header: `ARENA_TRUSTED_PROXIES`) and the route's
answer. Every attempt is counted as a failure BEFORE its password is checked,
in one atomic step, and forgotten when the route accepts it (2xx): so N
simultaneous guesses from one address get at most `max_failures` checks, and
the rest are answered 429 at once. The first `free_failures` failures of an
address cost nothing; each later attempt waits `base_delay_s`, doubling per
failure up to `max_delay_s`, before it is checked (the wait and the counting
never hold the event loop); `max_failures` failures lock the address out for
`lockout_s` (logged once). A success, or `lockout_s` without a failure,
forgets the address's failures. A refusal during a lockout, and the refused
check that starts one, answer 429 with one line saying how long to wait, which
the login page shows (`webapp.protection.login_page` adds that line and its
script to the researcher app's page).

With a store (`LoginLimiter.from_settings(settings, store)`, as the app runs),
the failures are counted in it (`arena.store.limits`), so every app process
sharing the database enforces one count per address; without one, in this
process's memory. Addresses are kept only as salted hashes.

This module is self-contained on purpose (the password check itself is
`webapp.protection.admin_auth`): `LoginLimiter` is the policy, `LoginLimitMiddleware`
applies it to the login paths of one ASGI app.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import math
import threading
import time
from typing import Any, Awaitable, Callable, Iterable, Optional

from arena.store import LoginTry, Store
from webapp.protection.login_page import lockout_line, page_script

log = logging.getLogger(__name__)

MAX_TRACKED = 10_000  # addresses kept in memory at most (records, known lockouts); the quietest go first


class ProcessLoginRecords:
    """Login failures of one process, in memory (`arena.store.limits` keeps them for every process):
    the same three steps, each atomic under one lock."""

    def __init__(self) -> None:
        self._records: dict[str, list[float]] = {}  # key -> [failures, last attempt, blocked until]
        self._lock = threading.Lock()

    def begin_login(self, key: str, *, max_failures: int, lockout_s: float, now: float) -> LoginTry:
        with self._lock:
            failures, last, blocked = self._records.get(key, (0, now, 0.0))
            if blocked > now:
                return LoginTry(locked_s=blocked - now, earlier_failures=int(failures))
            earlier = int(failures) if now - last < lockout_s else 0
            locks = earlier + 1 >= max_failures
            self._records[key] = [0 if locks else earlier + 1, now, now + lockout_s if locks else 0.0]
            if len(self._records) > MAX_TRACKED:
                quietest = min(self._records, key=lambda k: max(self._records[k][1], self._records[k][2]))
                self._records.pop(quietest, None)
            return LoginTry(locked_s=0.0, earlier_failures=earlier, locks=locks)

    def login_succeeded(self, key: str) -> None:
        with self._lock:
            self._records.pop(key, None)

    def login_state(self, key: str, *, lockout_s: float, now: float) -> tuple[int, float]:
        with self._lock:
            failures, last, blocked = self._records.get(key, (0, now, 0.0))
        if blocked > now:
            return int(failures), blocked - now
        return (int(failures) if now - last < lockout_s else 0), 0.0


class LoginLimiter:
    def __init__(self, *, max_failures: int = 10, lockout_s: float = 900.0, free_failures: int = 3,
                 base_delay_s: float = 1.0, max_delay_s: float = 30.0, store: Optional[Store] = None,
                 clock: Callable[[], float] = time.time):
        self.max_failures = max_failures
        self.lockout_s = lockout_s
        self.free_failures = free_failures
        self.base_delay_s = base_delay_s
        self.max_delay_s = max_delay_s
        self.clock = clock
        self.store = store
        self._records: Any = store if store is not None else ProcessLoginRecords()
        self._salt: Optional[str] = None
        # Lockouts this process has seen end at a known time and nothing shortens them: while one runs,
        # the burst that caused it is refused from memory, without a transaction per guess.
        self._locked: dict[str, float] = {}
        self._locked_guard = threading.Lock()

    @classmethod
    def from_settings(cls, settings: Any, store: Optional[Store] = None) -> "LoginLimiter":
        return cls(max_failures=settings.login_max_failures, lockout_s=settings.login_lockout_s, store=store)

    def _key(self, address: str) -> str:
        if self._salt is None:  # the database's own secret, as the vote and label keys use
            self._salt = self.store.get_or_create_secret("origin_salt") if self.store is not None else ""
        return "login:" + hashlib.sha256(f"{self._salt}\x00login\x00{address}".encode("utf-8")).hexdigest()[:32]

    def attempt(self, address: str) -> LoginTry:
        """Count an attempt of `address` as a failure before its password is checked (`succeeded` forgets
        it), or refuse it (`locked_s` > 0) while the address is locked out."""
        key, now = self._key(address), self.clock()
        with self._locked_guard:
            until = self._locked.get(key, 0.0)
        if until > now:
            return LoginTry(locked_s=until - now, earlier_failures=0)
        tried = self._records.begin_login(key, max_failures=self.max_failures, lockout_s=self.lockout_s, now=now)
        until = now + (tried.locked_s if tried.locked_s > 0 else self.lockout_s if tried.locks else 0.0)
        if until > now:
            with self._locked_guard:
                if len(self._locked) >= MAX_TRACKED:  # only running lockouts are worth keeping
                    self._locked = {k: v for k, v in self._locked.items() if v > now}
                if len(self._locked) < MAX_TRACKED:
                    self._locked[key] = until
        if tried.locks:
            log.warning("researcher login locked out for address %s for %.0f s after %d failed attempts",
                        address, self.lockout_s, tried.earlier_failures + 1)
        return tried

    def failed(self, address: str) -> None:
        """Count one failed attempt (what `attempt` does; the middleware needs no more)."""
        self.attempt(address)

    def succeeded(self, address: str) -> None:
        self._records.login_succeeded(self._key(address))

    def locked_for(self, address: str) -> float:
        """Seconds the address stays locked out (0: it may try), as the records say."""
        return self._records.login_state(self._key(address), lockout_s=self.lockout_s, now=self.clock())[1]

    def delay_after(self, failures: int) -> float:
        """Seconds an attempt waits before it is checked, after `failures` counted failures."""
        extra = failures - self.free_failures
        return 0.0 if extra < 0 else min(self.max_delay_s, self.base_delay_s * 2 ** extra)

    def delay_for(self, address: str) -> float:
        """Seconds this address's next attempt waits before it is checked."""
        failures, _ = self._records.login_state(self._key(address), lockout_s=self.lockout_s, now=self.clock())
        return self.delay_after(failures)


Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


class LoginLimitMiddleware:
    """Applies a LoginLimiter to `POST <path>` for each of `login_paths` of the wrapped ASGI app, and gives
    the page each login path belongs to the lockout's line (`webapp.protection.login_page`)."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]], *, limiter: LoginLimiter,
                 login_paths: Iterable[str]):
        self.app = app
        self.limiter = limiter
        self.login_paths = {p.rstrip("/") or "/" for p in login_paths}
        self.page_paths = {p[: -len("/login")] or "/" for p in self.login_paths if p.endswith("/login")}

    def _is_login(self, scope: Scope) -> bool:
        if scope.get("type") != "http" or scope.get("method") != "POST":
            return False
        return (scope.get("path", "").rstrip("/") or "/") in self.login_paths

    def _is_page(self, scope: Scope) -> bool:
        # The page itself (`/admin/`), not the bare address (redirected) nor anything below it.
        path = scope.get("path", "")
        return scope.get("type") == "http" and scope.get("method") == "GET" and path.endswith("/") \
            and (path.rstrip("/") or "/") in self.page_paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._is_page(scope):
            await self._page(scope, receive, send)
            return
        if not self._is_login(scope):
            await self.app(scope, receive, send)
            return
        address = _address(scope)
        # Counted (as a failure) before the password is checked, off the event loop: a burst of
        # simultaneous guesses gets at most `max_failures` checks, and public requests keep flowing.
        tried = await asyncio.to_thread(self.limiter.attempt, address)
        if tried.locked_s > 0:
            await _refuse(send, tried.locked_s)
            return
        delay = self.limiter.delay_after(tried.earlier_failures)
        if delay > 0:
            await asyncio.sleep(delay)
        refused = False

        async def watch(message: dict[str, Any]) -> None:
            nonlocal refused
            if message["type"] == "http.response.start":
                status = int(message["status"])
                # Forgotten before the answer leaves, so the client's next attempt starts afresh.
                if status < 300:
                    await asyncio.to_thread(self.limiter.succeeded, address)
                # The wrong password that starts a lockout says so at once, not at the next try.
                refused = tried.locks and status == 400
                if refused:
                    await _refuse(send, self.limiter.lockout_s)
                    return
            if not refused:
                await send(message)

        await self.app(scope, receive, watch)

    async def _page(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The researcher app's page, with the lockout line's script (and the wait, when one runs now)."""
        locked_s = await asyncio.to_thread(self.limiter.locked_for, _address(scope))
        start: dict[str, Any] = {}
        body: list[bytes] = []

        async def edit(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                headers = {k.lower(): v for k, v in message.get("headers", [])}
                if not headers.get(b"content-type", b"").startswith(b"text/html") or b"content-encoding" in headers:
                    start["pass"] = True
                    await send(message)
                    return
                start.update(message)
                return
            if start.get("pass") or message["type"] != "http.response.body":
                await send(message)
                return
            body.append(message.get("body", b""))
            if message.get("more_body"):
                return
            page = b"".join(body).replace(b"</head>", page_script(locked_s) + b"</head>", 1)
            headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
            await send({**start, "headers": headers + [(b"content-length", str(len(page)).encode())]})
            await send({"type": "http.response.body", "body": page})

        await self.app(scope, receive, edit)


def _address(scope: Scope) -> str:
    client = scope.get("client")
    return str(client[0]) if client else "unknown"


async def _refuse(send: Send, locked_s: float) -> None:
    body = json.dumps({"detail": lockout_line(locked_s)}).encode()
    await send({"type": "http.response.start", "status": 429,
                "headers": [(b"content-type", b"application/json"), (b"retry-after", str(math.ceil(locked_s)).encode()),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
