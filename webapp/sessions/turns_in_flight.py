"""Which browser sessions have a turn being answered right now, so a closed page's session waits for it.

A page closed while its reply is still being written leaves a turn running on the
server; when it ends, Gradio writes the turn's outputs into that session's state.
Forgetting the session meanwhile would run its States' delete callbacks under the
turn and let Gradio make a fresh copy of the page's configuration once the turn
returns, one that no closed heartbeat names any more. The send handlers (Chat,
Battle, Study) therefore hold `turn(session_hash)` around the system's answer, and
the idle sweep (`webapp.sessions.idle_sessions`) keeps a closed page's session
while `busy(session_hash)` says a turn is in flight. A turn counts for at most
`stale_s` (twice the turn timeout: the runner gives up on a system by then), so a
handler that never returned cannot keep a session for ever.
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import Any, Iterator, Optional


def session_of(request: Any) -> Optional[str]:
    """The Gradio session a request belongs to (`gr.Request.session_hash`), or None outside a page."""
    session = getattr(request, "session_hash", None) if request is not None else None
    return session if isinstance(session, str) and session else None


class TurnsInFlight:
    def __init__(self, stale_s: float = 240.0):
        self.stale_s = float(stale_s)
        self._started: dict[str, list[float]] = {}  # session -> when each of its running turns began
        self._lock = threading.Lock()

    @contextmanager
    def turn(self, session: Optional[str]) -> Iterator[None]:
        """Count a turn of `session` as in flight while the block runs (nothing for a request without one)."""
        if session is None:
            yield
            return
        began = time.monotonic()
        with self._lock:
            self._started.setdefault(session, []).append(began)
        try:
            yield
        finally:
            with self._lock:
                started = self._started.get(session, [])
                if began in started:
                    started.remove(began)
                if not started:
                    self._started.pop(session, None)

    def busy(self, session: str) -> bool:
        """Whether `session` has a turn that began less than `stale_s` ago and has not ended."""
        cutoff = time.monotonic() - self.stale_s
        with self._lock:
            return any(began > cutoff for began in self._started.get(session, ()))
