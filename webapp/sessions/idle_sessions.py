"""Forgetting browser sessions that went idle, so memory follows the visitors present, not all who came.

Gradio keeps, per browser session, a copy of the page's configuration and the
values of its `gr.State`s (`StateHolder.session_data`), and drops one only when
10,000 newer sessions have arrived: a probe's 1,000 one-turn sessions added
228 MB that an idle minute did not give back. `IdleSessionReaper` removes, every
`every_s`, each session untouched for `idle_s` (ARENA_SESSION_IDLE, an hour by
default) from every app served, running its States' delete callbacks as Gradio
does, with the server-issued
identity (`webapp.protection.identity`) and the turn guard's entry
(`webapp.sessions.turn_guard`); then the `releases` let caches go (the app's:
SQLite's idle pooled connections, a page cache each) and the freed memory goes
back to the system (`webapp.memory_allocator.release_free_memory`). How much comes back depends on
the allocator, which is why the server's start switches to the C library's
(`webapp.memory_allocator`; BENCHMARKS.md, Security and memory). Gradio's queue
bounds its own per-session records (a fixed-size cache of message queues, event
ids dropped as events end, a capped analytics log), so they are left to it.

Why not Gradio's own expiry alone: `gr.State(time_to_live=...)` and the closing of
a page drop a State's value and run its delete callback, and `delete_cache` ages
files, but the session's entry in `Blocks.state_holder` (a copy of the page's
configuration, the memory measured above) stays until `state_session_capacity`
newer sessions arrived. The reaper therefore drops that entry itself, through
`Blocks.state_holder`'s `lock`, `time_last_used`, `delete_state` and
`session_data`, never an underscore name or a private Gradio module
(`tests/architecture/test_no_gradio_internals.py`); a Gradio upgrade is checked
by `tests/safety/test_idle_sessions.py`.

A page that was closed is forgotten much sooner: its session's heartbeat (the
stream every Gradio page, and gradio_client, keeps open at
`<app>/gradio_api/heartbeat/<session>`) has ended. Gradio itself only marks such
a session closed and keeps its copy of the page's configuration (about 420 KiB
for the public page, 235 KiB for the study page) until 10,000 newer sessions
came: a replica grew from 240 MB to 1.4 GB in 45 minutes of mixed use.
`OpenPages`, an ASGI middleware, watches those streams begin and end, and the
reaper forgets a session whose last heartbeat ended `closed_grace_s` ago
(ARENA_CLOSED_SESSION_GRACE, 60 s by default: a heartbeat dropped by the network
comes back within seconds, well inside it) with none open since, unless a turn
of that session is still being answered (`in_flight`, from
`webapp.sessions.turns_in_flight`): such a session is kept until its turn ends or
times out, then goes at the next sweep. The grace used to be at least twice
ARENA_TURN_TIMEOUT, to cover a turn sent just before the page closed; at about
0.4 MB a session, those four minutes of closed pages were what a replica's
memory followed as the visit rate rose.

Nothing a participant stored is lost: conversations live in the store, and a
browser that comes back after its session was forgotten reloads the page, is
identified by its token again (`webapp.ui.parts.participant`) and resumes an
open conversation from the store (`webapp.sessions.participants`).
"""

from __future__ import annotations

import datetime
import gc
import logging
import re
import threading
import time
from typing import Any, Awaitable, Callable, Iterable, Optional

from arena.store.jobs_scheduler import Periodic
from webapp.memory_allocator import release_free_memory
from webapp.sessions.gradio_sessions import session_store

log = logging.getLogger(__name__)


_HEARTBEAT = re.compile(r"/gradio_api/heartbeat/(?P<session>[^/]+)/?$")


class OpenPages:
    """Which sessions have a page open: their heartbeat streams, watched as ASGI requests."""

    def __init__(self, app: Optional[Callable[..., Awaitable[None]]] = None):
        self.app = app
        self._open: dict[str, int] = {}
        self._closed_at: dict[str, float] = {}  # session -> when its last heartbeat ended (monotonic)
        self._lock = threading.Lock()

    def middleware(self, app: Callable[..., Awaitable[None]]) -> "OpenPages":
        """This watcher in front of `app` (for `FastAPI.add_middleware`)."""
        self.app = app
        return self

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        match = _HEARTBEAT.search(scope.get("path", "")) if scope.get("type") == "http" else None
        if match is None:
            await self.app(scope, receive, send)
            return
        session = match["session"][:128]
        with self._lock:
            self._open[session] = self._open.get(session, 0) + 1
            self._closed_at.pop(session, None)
        try:
            await self.app(scope, receive, send)
        finally:
            with self._lock:
                left = self._open.get(session, 1) - 1
                if left > 0:
                    self._open[session] = left
                else:
                    self._open.pop(session, None)
                    self._closed_at[session] = time.monotonic()

    def closed_for(self, grace_s: float) -> set[str]:
        """Sessions whose last heartbeat ended `grace_s` ago or more, with none open since."""
        cutoff = time.monotonic() - grace_s
        with self._lock:
            return {sid for sid, at in self._closed_at.items() if at <= cutoff}

    def forget(self, session: str) -> None:
        with self._lock:
            self._closed_at.pop(session, None)

    def prune(self, older_than_s: float) -> None:
        """Drop the closing times of sessions no app holds any more (they never came back)."""
        cutoff = time.monotonic() - older_than_s
        with self._lock:
            for sid in [sid for sid, at in self._closed_at.items() if at <= cutoff]:
                del self._closed_at[sid]


class IdleSessionReaper:
    def __init__(self, blocks: Iterable[Any], idle_s: float, every_s: Optional[float] = None,
                 forget: Iterable[Callable[[str], None]] = (), sweeps: Iterable[Callable[[float], Any]] = (),
                 releases: Iterable[Callable[[], Any]] = (), pages: Optional[OpenPages] = None,
                 closed_grace_s: Optional[float] = None, in_flight: Optional[Callable[[str], bool]] = None):
        self.blocks = [b for b in blocks if b is not None]
        self.forget = list(forget)  # also told each forgotten session hash (the server's own session maps)
        self.sweeps = list(sweeps)  # also run on each sweep with `idle_s` (maps keyed otherwise: the turn guard)
        self.releases = list(releases)  # run once sessions were forgotten, before the memory goes back (caches)
        self.idle_s = float(idle_s)
        self.pages = pages
        self.in_flight = in_flight  # whether a session's turn is being answered: it keeps the session
        self.closed_grace_s = float(closed_grace_s) if closed_grace_s is not None and pages is not None else None
        shortest = min(self.idle_s, self.closed_grace_s or self.idle_s)
        self.every_s = float(every_s if every_s is not None else min(60.0, max(1.0, shortest / 4)))
        self.evicted = 0
        self._job: Optional[Periodic] = None  # the sweeps, a job on the process's scheduler

    def sweep(self) -> int:
        """Forget every session idle for `idle_s`, and every closed page's after `closed_grace_s`, except those
        with a turn in flight; returns how many were forgotten."""
        cutoff = datetime.datetime.now() - datetime.timedelta(seconds=self.idle_s)
        closed = self.pages.closed_for(self.closed_grace_s) if self.closed_grace_s is not None else set()
        gone = 0
        for blocks in self.blocks:
            holder = session_store(blocks)
            if holder is None:  # not served yet
                continue
            with holder.lock:
                idle = [sid for sid, used in holder.time_last_used.items()
                        if (used < cutoff or sid in closed) and not self._busy(sid)]
                for sid in idle:
                    try:
                        holder.delete_state(sid)  # the States' delete callbacks, as Gradio runs them
                    except Exception as exc:  # a callback's failure must not keep the session
                        log.warning("a session's state callback failed while it was forgotten: %s", exc)
                    holder.session_data.pop(sid, None)
                    holder.time_last_used.pop(sid, None)
                    for hook in self.forget:
                        hook(sid)
                    if self.pages is not None:
                        self.pages.forget(sid)
                gone += len(idle)
        if self.pages is not None:
            self.pages.prune(self.idle_s)
        for sweep in self.sweeps:
            sweep(self.idle_s)
        if gone:
            for release in self.releases:
                try:
                    release()
                except Exception as exc:  # the memory stays held; sessions are forgotten all the same
                    log.warning("could not release memory after forgetting sessions: %s", exc)
            gc.collect()
            release_free_memory()
            self.evicted += gone
            log.info("forgot %d browser session(s), closed or idle for %.0f s or more", gone, self.idle_s)
        return gone

    def _busy(self, session: str) -> bool:
        return self.in_flight is not None and self.in_flight(session)

    def start(self) -> "IdleSessionReaper":
        """Sweep every `every_s`, a job on the process's scheduler, until `stop`."""
        if self._job is None or not self._job.active:
            self._job = Periodic("idle-sessions", self._sweep_step).start(self.every_s)
        return self

    def _sweep_step(self) -> float:
        try:
            self.sweep()
        except Exception as exc:  # keep serving; try again next time
            log.warning("could not forget idle sessions: %s", exc)
        return self.every_s

    def stop(self) -> None:
        if self._job is not None:
            self._job.cancel(wait=False)
