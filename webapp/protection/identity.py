"""Who a browser session is, as the server decides it.

Gradio names a session by a `session_hash` that the client itself sends: a
script may pick any value, for instance another person's, to spend their
limits, or vary it at will to look like many people. The arena never keys
anything on that value. The server derives the session's identity from it
with a keyed hash (HMAC) whose secret is kept in the database; limits,
flags, the rater test and the stored user ids use that identity. A client can
still open a fresh session (as a new browser tab does) and get a fresh
identity, but never choose one; the per-address limits bound what fresh
sessions buy.

Nothing of it lives in one process's memory: every app process sharing the
database derives the same identity for a session, so any replica behind a
load balancer serves any request of it, and a restart forgets nothing. The
app's `SessionIdentities` is a field of `webapp.services.Services`.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Any, Optional

# The database secret (`Store.get_or_create_secret`) the identities are derived with.
IDENTITY_SECRET_KEY = "session_identity_secret"


class SessionIdentities:
    """session hash -> identity issued by the server: the same in every process holding `secret`."""

    def __init__(self, secret: str):
        if not secret:
            raise ValueError("session identities need a secret")
        self._key = secret.encode("utf-8")

    def identity(self, session_hash: Optional[str]) -> Optional[str]:
        if not session_hash:
            return None
        return hmac.new(self._key, str(session_hash).encode("utf-8"), hashlib.sha256).hexdigest()[:24]


def server_session_id(request: Any, identities: SessionIdentities) -> Optional[str]:
    """The server-issued identity of the request's session, or None when the request has no session."""
    session = getattr(request, "session_hash", None) if request is not None else None
    return identities.identity(session)
