"""Which files the public pages serve, and how long a participant's download link lives.

Gradio serves a handler's output file at `<app>/gradio_api/file=<path>`, and its
file route accepts any file under its shared cache folder, whichever app made it:
a researcher's corpus export, made behind the login at `/admin`, could be fetched
through the public app by anyone holding its URL. `PrivateFileMiddleware` lets a
public mount (`/`, `/study`) serve only the files the app's own record says it
handed to a participant (`DownloadLinks`: the public apps' one file output is
the "Your data" download; they take no uploads) and the folders the server
itself declares public (`public_paths`: none today); every other path answers
404 there, so researcher exports are served only by `/admin`, behind its login.
The record is the app's, not Gradio's (its per-app sets of cached files are not
part of its documented API): a public handler that starts handing out another
kind of file must name it through `DownloadLinks` too.

A participant's own download ("Your data") gets a file name carrying a random
token (`DownloadLinks.name_for`); the link works for `DOWNLOAD_TTL_S` seconds and
stops at once when that participant deletes their data (`revoke`): the file is
removed and its URL answers 404. A restart forgets every link.
"""

from __future__ import annotations

import re
import secrets
import threading
import time
from pathlib import Path
from typing import Any, Awaitable, Callable, Iterable, Optional
from urllib.parse import unquote

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

DOWNLOAD_TTL_S = 15 * 60.0
_OWN_FILE = re.compile(r"^my-dialogues-(?P<token>[A-Za-z0-9_-]{22,64})\.jsonl$")
_FILE_ROUTE = re.compile(r"/file=(?P<path>.+)$")
NOT_FOUND = b'{"detail": "Not found."}'


class DownloadLinks:
    """The participants' download files this process handed out: token -> (participant id, expiry)."""

    def __init__(self, ttl_s: float = DOWNLOAD_TTL_S):
        self.ttl_s = ttl_s
        self._links: dict[str, tuple[str, float]] = {}
        self._served: dict[str, set[Path]] = {}  # token -> files of that name seen on the file route
        self._lock = threading.Lock()

    def name_for(self, user_id: str) -> str:
        """A file name for `user_id`'s download, valid for `ttl_s` from now."""
        token = secrets.token_urlsafe(24)
        with self._lock:
            self._prune()
            self._links[token] = (user_id, time.monotonic() + self.ttl_s)
        return f"my-dialogues-{token}.jsonl"

    def written(self, path: Path) -> None:
        """`path` holds a download named by `name_for`: removed with the link."""
        match = _OWN_FILE.match(path.name)
        if match is not None:
            with self._lock:
                if match["token"] in self._links:
                    self._served.setdefault(match["token"], set()).add(path)

    def revoke(self, user_id: str) -> int:
        """End every link of `user_id` (their data is deleted); returns how many."""
        with self._lock:
            tokens = [t for t, (uid, _) in self._links.items() if uid == user_id]
            for token in tokens:
                self._forget(token)
        return len(tokens)

    def allowed(self, path: Path) -> Optional[bool]:
        """None: not a participant download; else whether its link still works (a dead one is removed)."""
        match = _OWN_FILE.match(path.name)
        if match is None:
            return None
        token = match["token"]
        with self._lock:
            self._prune()
            if token not in self._links:
                path.unlink(missing_ok=True)
                return False
            self._served.setdefault(token, set()).add(path)
            return True

    def _prune(self) -> None:
        now = time.monotonic()
        for token in [t for t, (_, expiry) in self._links.items() if expiry <= now]:
            self._forget(token)

    def _forget(self, token: str) -> None:
        self._links.pop(token, None)
        for path in self._served.pop(token, ()):
            path.unlink(missing_ok=True)


LINKS = DownloadLinks()  # this process's links (the server is one process)


class PrivateFileMiddleware:
    """On the public mounts, serve only the public apps' own files and public paths (see the module doc)."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]], *,
                 private_prefixes: Iterable[str] = (), links: DownloadLinks = LINKS,
                 public_paths: Iterable[str | Path] = ()):
        self.app = app
        # Folders served whole (what `mount_gradio_app(allowed_paths=...)` would be given); kept here, not
        # read back from Gradio's own records of static paths, which are not part of its public API.
        self.public_paths = tuple(Path(p).resolve() for p in public_paths)
        self.private_prefixes = tuple(p.rstrip("/") + "/" for p in private_prefixes if p.rstrip("/"))
        self.links = links

    def _served_publicly(self, target: str) -> bool:
        path = Path(target).resolve()
        own = self.links.allowed(path)
        if own is not None:
            return own
        return any(path.is_relative_to(folder) for folder in self.public_paths)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        route = _FILE_ROUTE.search(scope.get("path", "")) if scope.get("type") == "http" else None
        if route is None or scope["path"].startswith(self.private_prefixes):
            await self.app(scope, receive, send)
            return
        target = unquote(route["path"])
        if "://" in target:  # Gradio proxies URLs here itself, by its own rules
            await self.app(scope, receive, send)
            return
        if not self._served_publicly(target):
            await send({"type": "http.response.start", "status": 404,
                        "headers": [(b"content-type", b"application/json"),
                                    (b"content-length", str(len(NOT_FOUND)).encode())]})
            await send({"type": "http.response.body", "body": NOT_FOUND})
            return
        await self.app(scope, receive, send)
