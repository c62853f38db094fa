"""Who a browser session is, as the server decides it.

Gradio names a session by a `session_hash` that the client itself sends: a
script may pick any value, for instance another person's, to spend their
limits, or vary it at will to look like many people. The arena never keys
anything on that value. The first time a session hash is seen, the server
issues a random identity (`secrets`) and keeps the mapping in memory; limits,
flags, the rater test and the stored user ids use that identity. A client can
still open a fresh session (as a new browser tab does) and get a fresh
identity, but never choose one; the per-address limits bound what fresh
sessions buy.
"""

from __future__ import annotations

import secrets
import threading
from typing import Any, Optional

from cachetools import LRUCache


class SessionIdentities:
    """session hash -> identity issued by the server; the oldest are forgotten past `capacity`."""

    def __init__(self, capacity: int = 200_000):
        self.capacity = capacity
        self._ids: LRUCache[str, str] = LRUCache(maxsize=capacity)
        self._lock = threading.Lock()

    def identity(self, session_hash: Optional[str]) -> Optional[str]:
        if not session_hash:
            return None
        with self._lock:
            issued = self._ids.get(session_hash)  # a hit counts as a use
            if issued is None:
                issued = self._ids[session_hash] = secrets.token_hex(12)
            return issued


    def forget(self, session_hash: str) -> None:
        """The session ended (idle past `ARENA_SESSION_IDLE`): a later request under its hash is a new session."""
        with self._lock:
            self._ids.pop(session_hash, None)


# One per process, like Gradio's own session table: a session is served by one process (sticky sessions).
IDENTITIES = SessionIdentities()


def server_session_id(request: Any) -> Optional[str]:
    """The server-issued identity of the request's session, or None when the request has no session."""
    session = getattr(request, "session_hash", None) if request is not None else None
    return IDENTITIES.identity(session)
