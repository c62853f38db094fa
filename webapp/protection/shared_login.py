"""The researcher login shared by every app process, kept in the store and served by the app's own routes.

Gradio's own login (`mount_gradio_app(auth=...)`) names its cookie after a random
id of the process and remembers the tokens it hands out in that process's
memory, so a researcher logged in through one replica would be asked to log in
again by the next, and a restart would log everybody out; changing that would
mean reaching into the app Gradio mounts. `ResearcherLogin` does the login on
the FastAPI app the project owns instead: `POST <admin>/login` checks the
password (the lockout, `webapp.protection.login_limits`, still wraps it) and
sets a cookie whose name is derived from a secret kept in the database (the
same in every process), `GET <admin>/logout` ends the user's logins, and the
page at `<admin>/` shows a login form until a login is made. Gradio is told who
is logged in through its public `auth_dependency`, which reads that cookie from
the store (`arena.store.researcher_logins`: digests only, with an expiry).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import inspect
import secrets
from collections.abc import MutableMapping
from typing import Any, Awaitable, Callable, Iterator, Optional, Union

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse

from arena.store import Store
from arena.store.researcher_logins import token_digest
from webapp.protection.login_page import AUTH_MESSAGE

# The database secret the login cookie's name is derived from.
LOGIN_COOKIE_SECRET_KEY = "researcher_login_cookie_secret"
_HANDLE = "#"  # keys this table lists are digests, marked so; the tokens handed out never start with it


class StoredLoginTokens(MutableMapping):
    """The researchers' login tokens (token -> user name) over the store. Listing gives digests (marked
    handles, which the other methods also take), as a logout of all of a user's sessions needs."""

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


PasswordCheck = Callable[[str, str], Union[bool, Awaitable[bool]]]


class ResearcherLogin:
    """The researcher app's login on the server's own routes, shared through the store (see the module doc)."""

    def __init__(self, store: Store, ttl_s: float, check: PasswordCheck):
        self.tokens = StoredLoginTokens(store, ttl_s)
        self.check = check
        suffix = shared_cookie_id(store)
        # Two cookies, as Gradio's login sets them: the `Secure` one for HTTPS pages embedded elsewhere (a
        # Space), the other for plain HTTP on 127.0.0.1.
        self.cookie, self.plain_cookie = f"access-token-{suffix}", f"access-token-unsecure-{suffix}"

    def _token(self, request: Request) -> Optional[str]:
        return request.cookies.get(self.cookie) or request.cookies.get(self.plain_cookie) or None

    async def user_of(self, request: Request) -> Optional[str]:
        """Who is logged in on `request`, or None: Gradio's `auth_dependency` for the researcher app."""
        token = self._token(request)
        if token is None:
            return None
        return await asyncio.to_thread(self.tokens.get, token)

    async def _login(self, request: Request) -> JSONResponse:
        form = await request.form()
        username, password = str(form.get("username", "")).strip(), str(form.get("password", ""))
        allowed = self.check(username, password)
        if inspect.isawaitable(allowed):
            allowed = await allowed
        if not (username and allowed):
            return JSONResponse({"detail": "Incorrect credentials."}, status_code=400)
        token = secrets.token_urlsafe(24)
        await asyncio.to_thread(self.tokens.__setitem__, token, username)
        answer = JSONResponse({"success": True})
        answer.set_cookie(self.cookie, token, httponly=True, samesite="none", secure=True)
        answer.set_cookie(self.plain_cookie, token, httponly=True)
        return answer

    def _logout_to(self, page: str) -> Callable[[Request], Awaitable[RedirectResponse]]:
        async def logout(request: Request) -> RedirectResponse:
            user = await self.user_of(request)
            if user is not None:  # every session of that user ends, as with Gradio's own logout
                await asyncio.to_thread(self._end_all, user)
            answer = RedirectResponse(page, status_code=302)
            answer.delete_cookie(self.cookie, path="/")
            answer.delete_cookie(self.plain_cookie, path="/")
            return answer
        return logout

    def _end_all(self, user: str) -> None:
        for handle in list(self.tokens):
            if self.tokens.get(handle) == user:
                self.tokens.pop(handle, None)

    def add_routes(self, app: FastAPI, path: str) -> None:
        """The login and logout routes of the researcher app mounted at `path`; add them before the mount,
        which would otherwise take these paths."""
        base = path.rstrip("/")
        for login in (base + "/login", base + "/login/"):
            app.add_api_route(login, self._login, methods=["POST"], include_in_schema=False)
        app.add_api_route(base + "/logout", self._logout_to(base + "/"), methods=["GET"], include_in_schema=False)

    def page_middleware(self, path: str) -> Callable[[Any], LoginPageMiddleware]:
        """For `FastAPI.add_middleware`: the login form in place of the researcher page until a login is made."""
        return lambda app: LoginPageMiddleware(app, login=self, page=path.rstrip("/") + "/")


class LoginPageMiddleware:
    """`GET <admin>/` without a login answers the login form; everything else goes on (Gradio itself answers
    401 to its configuration and API until the login is made)."""

    def __init__(self, app: Callable[..., Awaitable[None]], *, login: ResearcherLogin, page: str):
        self.app, self.login, self.page = app, login, page

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        page = scope.get("type") == "http" and scope.get("method") in ("GET", "HEAD") and scope.get("path") == self.page
        if page and await self.login.user_of(Request(scope)) is None:
            await HTMLResponse(LOGIN_FORM, headers={"Cache-Control": "no-store"})(scope, receive, send)
            return
        await self.app(scope, receive, send)


# The login form: plain HTML and ES5, posting to `login` beside the page. The lockout's line
# (`AUTH_MESSAGE`) and its script (`webapp.protection.login_page.page_script`, added to this page by
# the lockout's middleware) work on it as they do on any page of the researcher app.
LOGIN_FORM = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>CRS Arena: researcher login</title>
<style>
body{font-family:system-ui,sans-serif;margin:0;min-height:100vh;display:flex;align-items:center;
justify-content:center;background:#f6f6f7;color:#1f2328}
form{background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:24px;width:min(360px,90vw);
display:flex;flex-direction:column;gap:12px}
h1{font-size:1.3rem;margin:0}label{display:flex;flex-direction:column;gap:4px;font-size:.95rem}
input{font-size:1rem;padding:8px;border:1px solid #8c959f;border-radius:6px}
button{font-size:1rem;padding:10px;border:0;border-radius:6px;background:#ea580c;color:#fff;cursor:pointer}
#login-error{color:#b42318;margin:0;min-height:1.2em}
</style></head><body>
<form id="login" novalidate><h1>Login</h1><!--message-->
<label>Username<input type="text" name="username" autocomplete="username" required></label>
<label>Password<input type="password" name="password" autocomplete="current-password" required></label>
<p id="login-error" role="alert"></p><button type="submit">Login</button></form>
<script>(function () {
  var form = document.getElementById("login"), error = document.getElementById("login-error");
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    error.textContent = "";
    var to = window.location.pathname.replace(/\\/?$/, "/") + "login";  // beside the page, its path whole
    window.fetch(to, {method: "POST", body: new URLSearchParams(new FormData(form)),
                      credentials: "same-origin"}).then(function (answer) {
      if (answer.ok) { window.location.reload(); return; }
      if (answer.status === 400) { error.textContent = "Incorrect credentials."; }
    });
  });
})();</script></body></html>""".replace("<!--message-->", AUTH_MESSAGE)
