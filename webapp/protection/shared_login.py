"""The researcher login shared by every app process: Gradio's login tokens kept in the store.

Gradio's login route (`/admin/login`) names its cookie after a random id of the
process and remembers the tokens it hands out in that process's memory, so a
researcher logged in through one replica is asked to log in again by the
next, and a restart logs everybody out. `share_researcher_login` gives the
mounted researcher app a cookie name derived from a secret kept in the
database (the same in every process) and a token table that reads and writes
the store (`arena.store.researcher_logins`: digests only, with an expiry). The
password check, the lockout (`webapp.protection.login_limits`) and Gradio's own
login and logout routes are unchanged.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import MutableMapping
from typing import Any, Iterator

from arena.store import Store
from arena.store.researcher_logins import token_digest

# The database secret the login cookie's name is derived from.
LOGIN_COOKIE_SECRET_KEY = "researcher_login_cookie_secret"
_HANDLE = "#"  # keys this table lists are digests, marked so; Gradio's tokens never start with it


class StoredLoginTokens(MutableMapping):
    """Gradio's `App.tokens` (token -> user name) over the store. Listing gives digests (marked handles,
    which the other methods also take), as Gradio's logout of all of a user's sessions needs."""

    def __init__(self, store: Store, ttl_s: float):
        self.store, self.ttl_s = store, ttl_s

    @staticmethod
    def _digest(key: Any) -> str:
        key = str(key)
        return key[len(_HANDLE):] if key.startswith(_HANDLE) else token_digest(key)

    def __getitem__(self, key: Any) -> str:
        if not key:
            raise KeyError(key)
        user = self.store.researcher_login(self._digest(key))
        if user is None:
            raise KeyError(key)
        return user

    def __setitem__(self, key: Any, username: str) -> None:
        self.store.add_researcher_login(self._digest(key), str(username), ttl_s=self.ttl_s)

    def __delitem__(self, key: Any) -> None:
        if not self.store.end_researcher_login(self._digest(key)):
            raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter([_HANDLE + digest for digest, _user in self.store.researcher_login_digests()])

    def __len__(self) -> int:
        return len(self.store.researcher_login_digests())


def shared_cookie_id(store: Store) -> str:
    """The login cookie's name suffix: the same in every process sharing the database."""
    secret = store.get_or_create_secret(LOGIN_COOKIE_SECRET_KEY).encode("utf-8")
    return hmac.new(secret, b"researcher login cookie", hashlib.sha256).hexdigest()[:32]


def share_researcher_login(gradio_app: Any, store: Store, ttl_s: float) -> None:
    """Make the mounted researcher app (a `gradio.routes.App`) keep its logins in `store`."""
    gradio_app.tokens = StoredLoginTokens(store, ttl_s)
    gradio_app.cookie_id = shared_cookie_id(store)
