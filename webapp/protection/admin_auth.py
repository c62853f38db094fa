"""Who may open the researcher app (Evaluate, raw Download, moderation).

Credentials come from Settings (environment): `ARENA_ADMIN_USERS` names the
accounts, and one password for them is given either as a PBKDF2 hash
(`ARENA_ADMIN_PASSWORD_HASH`, preferred: make one with
`python -m webapp.protection.admin_auth hash`) or in plain text (`ARENA_ADMIN_PASSWORD`).
The check is a coroutine function for Gradio's `auth=`: the hash runs on a
worker thread, never on the event loop; it compares in constant time and
never logs the password.

    python -m webapp.protection.admin_auth hash      # prompts for a password, prints the hash
"""

from __future__ import annotations

import asyncio
import getpass
import hashlib
import hmac
import logging
import secrets
import sys
from typing import Any, Awaitable, Callable, Optional

log = logging.getLogger(__name__)

HASH_SCHEME = "pbkdf2_sha256"
HASH_ITERATIONS = 200_000


class AdminNotConfigured(RuntimeError):
    pass


def hash_password(password: str, *, iterations: int = HASH_ITERATIONS, salt: Optional[str] = None) -> str:
    """`pbkdf2_sha256$ITERATIONS$SALT$HEX`, the form ARENA_ADMIN_PASSWORD_HASH takes."""
    salt = salt or secrets.token_hex(16)
    digest = hashlib.pbkdf2_hmac("sha256", password.encode("utf-8"), salt.encode("ascii"), iterations)
    return f"{HASH_SCHEME}${iterations}${salt}${digest.hex()}"


def verify_password(password: str, encoded: str) -> bool:
    try:
        scheme, iterations, salt, expected = encoded.split("$")
        if scheme != HASH_SCHEME:
            return False
        digest = hashlib.pbkdf2_hmac("sha256", password.encode("utf-8"), salt.encode("ascii"), int(iterations))
    except (ValueError, UnicodeEncodeError):
        return False
    return hmac.compare_digest(digest.hex(), expected)


def admin_checker(settings: Any) -> Callable[[str, str], Awaitable[bool]]:
    """Gradio's `auth` callable for the settings, or AdminNotConfigured saying what is missing.

    The callable is a coroutine function: Gradio awaits it, and the PBKDF2 hash (a tenth of a second of
    CPU on purpose) runs on a worker thread, so a burst of guesses never stalls other requests."""
    users = tuple(settings.admin_users or ())
    hashed, plain = settings.admin_password_hash, settings.admin_password
    if not users:
        raise AdminNotConfigured("the researcher app needs ARENA_ADMIN_USERS (comma-separated user names)")
    if not hashed and not plain:
        raise AdminNotConfigured(
            "the researcher app needs ARENA_ADMIN_PASSWORD_HASH (python -m webapp.protection.admin_auth hash) "
            "or ARENA_ADMIN_PASSWORD"
        )
    if hashed and not hashed.startswith(HASH_SCHEME + "$"):
        raise AdminNotConfigured(f"ARENA_ADMIN_PASSWORD_HASH must start with {HASH_SCHEME}$")

    def verify(username: str, password: str) -> bool:
        known = any(hmac.compare_digest(str(username), u) for u in users)
        if hashed:
            ok = verify_password(str(password), hashed)
        else:
            ok = hmac.compare_digest(str(password).encode("utf-8"), plain.encode("utf-8"))
        if not (known and ok):
            log.warning("researcher login refused for user %r", str(username)[:64])
        return known and ok

    async def check(username: str, password: str) -> bool:
        return await asyncio.to_thread(verify, username, password)

    return check


def main(argv: Optional[list[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] != ["hash"]:
        print("usage: python -m webapp.protection.admin_auth hash", file=sys.stderr)
        return 2
    password = getpass.getpass("password: ")
    if not password or password != getpass.getpass("again: "):
        print("error: the passwords are empty or differ", file=sys.stderr)
        return 2
    print(hash_password(password))
    return 0


if __name__ == "__main__":
    sys.exit(main())
