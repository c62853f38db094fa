"""Researcher logins kept in the store, so that every app process sharing the database knows them.

Gradio's own login route remembers the token it hands out in its process's
memory: behind a load balancer, a researcher logged in on one replica would be
a stranger to the next. The server's own login (`webapp.protection.shared_login`)
keeps these rows instead. A row holds a digest of the token (SHA-256:
the database never holds a usable cookie), the user name and an expiry; a
token past its expiry reads as unknown and is dropped at the next login.

`ResearcherLogins` is a part of `arena.store.Store`.
"""

from __future__ import annotations

import hashlib
import time
from typing import Optional

import sqlalchemy as sa

from arena.store import schema as t


def token_digest(token: str) -> str:
    return hashlib.sha256(str(token).encode("utf-8")).hexdigest()


class ResearcherLogins:
    """Researcher login tokens (a part of `Store`)."""

    def add_researcher_login(self, digest: str, username: str, *, ttl_s: float,
                             now: Optional[float] = None) -> None:
        """Remember the token of `digest` as a login of `username` for `ttl_s` seconds; expired ones go."""
        now = time.time() if now is None else now
        with self.write() as conn:
            conn.execute(sa.delete(t.researcher_logins).where(t.researcher_logins.c.expires_at <= now))
            conn.execute(sa.delete(t.researcher_logins).where(t.researcher_logins.c.digest == digest))
            conn.execute(sa.insert(t.researcher_logins).values(digest=digest, username=username,
                                                               expires_at=now + ttl_s))

    def researcher_login(self, digest: str, *, now: Optional[float] = None) -> Optional[str]:
        """The user name logged in with the token of `digest`, or None (unknown or expired)."""
        now = time.time() if now is None else now
        r = t.researcher_logins.c
        with self.read() as conn:
            return conn.execute(sa.select(r.username).where(r.digest == digest, r.expires_at > now)).scalar()

    def researcher_login_digests(self, *, now: Optional[float] = None) -> list[tuple[str, str]]:
        """(digest, user name) of every login still valid."""
        now = time.time() if now is None else now
        r = t.researcher_logins.c
        with self.read() as conn:
            return [(d, u) for d, u in conn.execute(sa.select(r.digest, r.username).where(r.expires_at > now))]

    def end_researcher_login(self, digest: str) -> bool:
        """Forget the login of `digest` (a logout); whether there was one."""
        with self.write() as conn:
            return conn.execute(sa.delete(t.researcher_logins)
                                .where(t.researcher_logins.c.digest == digest)).rowcount > 0
