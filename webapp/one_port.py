"""One server, one port: the public pages at `/` and the researcher pages at `/admin`.

A Space exposes a single port, so `python app.py` serves both Gradio apps from
one FastAPI application (`gr.mount_gradio_app`), the researcher app behind its
login, with failed logins limited per client address (`webapp.protection.login_limits`).
`python app.py --admin` serves the researcher app alone at `/` of its own port
through the same code. When no researcher account is configured, `/admin` is
left out and the log says why.

Client addresses (what every per-address limit counts) are the connection's
own, unless the connection comes from a proxy named in
`ARENA_TRUSTED_PROXIES`: only then is its X-Forwarded-For believed, read from
the right, so an address a client wrote into the header itself is never taken
(`proxy_options`). uvicorn on its own would believe the header from loopback.
"""

from __future__ import annotations

import logging
from contextlib import asynccontextmanager, contextmanager
from typing import Any, AsyncIterator, Callable, Iterator, Optional, Sequence

import gradio as gr
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, RedirectResponse

from webapp.protection.api_guard import ApiGuardMiddleware
from webapp.protection.body_limits import MIN_BODY_BYTES, BodyLimitMiddleware
from webapp.protection.login_limits import LoginLimiter, LoginLimitMiddleware
from webapp.protection.login_page import AUTH_MESSAGE
from webapp.protection.private_files import PrivateFileMiddleware
from webapp.protection.shared_login import ResearcherLogin
from webapp.sessions.idle_sessions import IdleSessionReaper, OpenPages
from webapp.sessions.session_choices import DEFAULT_MAX_SESSIONS, OFFERED

log = logging.getLogger(__name__)

ADMIN_PATH = "/admin"
STUDY_PATH = "/study"
CONCURRENCY = 32
# A study link (`/?study=ID&PROLIFIC_PID=...`) opens the study page with its query intact; without
# `study` in the query the public page loads as ever.
STUDY_REDIRECT = (
    "<script>(function(){var q=new URLSearchParams(window.location.search);"
    "if(q.get('study')){window.location.replace(window.location.pathname.replace(/\\/?$/,'')"
    f"+'{STUDY_PATH}/'+window.location.search);}}}})();</script>"
)


def build_server(public: Optional[gr.Blocks], admin: Optional[gr.Blocks] = None, *,
                 admin_auth: Optional[Callable[[str, str], Any]] = None, limiter: Optional[LoginLimiter] = None,
                 admin_path: str = ADMIN_PATH, css: Optional[str] = None, head: Optional[str] = None,
                 public_upload_bytes: Optional[int] = 0,
                 admin_upload_bytes: Optional[int] = None, study: Optional[gr.Blocks] = None,
                 max_body_bytes: int = MIN_BODY_BYTES, session_idle_s: Optional[float] = None,
                 closed_session_grace_s: Optional[float] = None,
                 idle_sweeps: Sequence[Callable[[float], object]] = (),
                 idle_releases: Sequence[Callable[[], object]] = (),
                 turn_in_flight: Optional[Callable[[str], bool]] = None,
                 readiness: Optional[Callable[[], dict[str, Any]]] = None,
                 researcher_login: Optional[ResearcherLogin] = None,
                 routes: Sequence[Callable[[FastAPI], object]] = ()) -> FastAPI:
    """The ASGI app: `public` at `/` and `admin` behind `admin_auth` at `admin_path` (at `/` when there is
    no public app), its login limited per client address by `limiter`; `css` styles both and `head` goes
    into every page's head (Gradio 6 takes both where an app is served, not where it is built);
    `*_upload_bytes` bound each app's uploads
    (`webapp.protection.upload_limits`: the public app takes none); `study`, the crowdsourced studies' page, is served
    at `/study` beside the public app (it takes no uploads). Every request body above `max_body_bytes` is
    refused before it is read whole (`webapp.protection.body_limits`; the researcher's uploads excepted), and
    the public mounts serve only their own files (`webapp.protection.private_files`); malformed API calls get a
    4xx and one log line, and the development routes are off (`webapp.protection.api_guard`). With `session_idle_s`,
    browser sessions idle that long are forgotten while the server runs (`webapp.sessions.idle_sessions`),
    and, with `closed_session_grace_s`, the sessions of pages closed that long ago (their heartbeat ended),
    then `idle_releases` let go of what caches held for them; a session for which `turn_in_flight` says a turn
    is being answered is kept until it ends.
    `GET /health` (liveness: 200 while the server answers) and `GET /ready` (200 once `readiness()` says
    ready, 503 before) both return `readiness()` as JSON (`add_health_routes`). With `researcher_login`, the
    researcher app's login is the server's own, kept where every replica finds it
    (`webapp.protection.shared_login`); without it, Gradio's login of one process. Each of `routes` adds
    routes of the server's own (the platform's webhook) before the mounts."""
    if admin is not None and admin_auth is None:
        raise ValueError("the researcher app is only served behind a login")
    pages = OpenPages() if session_idle_s and closed_session_grace_s else None
    # The choices each session was given (for the API guard) go when its page closes, when it is idle for
    # `session_idle_s` and when the idle sweep forgets it.
    for blocks in (public, study, admin):
        if blocks is not None:
            OFFERED.forget_on_unload(blocks)
    if session_idle_s:
        OFFERED.configure(DEFAULT_MAX_SESSIONS, session_idle_s)
    reaper = IdleSessionReaper([public, study, admin], session_idle_s, forget=[OFFERED.forget], sweeps=idle_sweeps,
                               releases=idle_releases, pages=pages,
                               closed_grace_s=closed_session_grace_s,
                               in_flight=turn_in_flight) if session_idle_s else None

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        if reaper is not None:
            reaper.start()
        try:
            yield
        finally:
            if reaper is not None:
                reaper.stop()

    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None, lifespan=lifespan)
    app.state.idle_sessions = reaper
    add_health_routes(app, readiness or (lambda: {"ready": True}))  # before the mounts: "/" takes the rest
    for add_routes in routes:
        add_routes(app)
    # ssr_mode=False: server-side rendering would start a Node server per mounted app (and a Space may set
    # GRADIO_SSR_MODE); the pages render in the browser as they do with `launch()` here.
    if admin is not None:
        admin.queue(default_concurrency_limit=CONCURRENCY)
        path = admin_path if public is not None else "/"
        if path != "/":  # the mount answers only below `/admin/`: the bare address the log gives leads there
            bare = path.rstrip("/")
            app.add_api_route(bare, lambda: RedirectResponse(bare + "/", status_code=308), methods=["GET", "HEAD"],
                              include_in_schema=False)
        # Gradio is told who is logged in (`auth_dependency`, its public hook) by the server's own login,
        # whose routes come before the mount, which would otherwise answer them.
        login: dict[str, Any] = {"auth": admin_auth, "auth_message": AUTH_MESSAGE}
        if researcher_login is not None:
            researcher_login.add_routes(app, path)
            login = {"auth_dependency": researcher_login.user_of}
        # Mounted before "/": the first mount whose prefix matches takes the request.
        gr.mount_gradio_app(app, admin, path=path, ssr_mode=False, css=css, head=head,
                            max_file_size=admin_upload_bytes, **login)
        if researcher_login is not None:  # the login form on the page until a login is made
            app.add_middleware(researcher_login.page_middleware(path))
        app.add_middleware(LoginLimitMiddleware, limiter=limiter or LoginLimiter(),
                           login_paths=[path.rstrip("/") + "/login"])
    if public is not None and study is not None:
        # `/study?study=ID&PROLIFIC_PID=...` (no slash, as a researcher may type the link) leads to the page
        # with the worker's query intact; the mount itself answers only below `/study/`.
        app.add_api_route(STUDY_PATH, _to_study_page, methods=["GET", "HEAD"], include_in_schema=False)
        study.queue(default_concurrency_limit=CONCURRENCY)
        gr.mount_gradio_app(app, study, path=STUDY_PATH, ssr_mode=False, css=css, head=head, max_file_size=0)
    if public is not None:
        public.queue(default_concurrency_limit=CONCURRENCY)
        gr.mount_gradio_app(app, public, path="/", ssr_mode=False, css=css, max_file_size=public_upload_bytes,
                            head=(STUDY_REDIRECT if study is not None else "") + (head or "") or None)
        app.add_middleware(PrivateFileMiddleware, private_prefixes=[admin_path] if admin is not None else [])
    admin_root = (admin_path if public is not None else "").rstrip("/")
    if pages is not None:  # which sessions have a page open: their heartbeat streams
        app.add_middleware(pages.middleware)
    # Inside the body limit (added after it runs first): the guard reads JSON bodies whole. The researcher
    # app is not described to it, so its endpoints are not told apart before its login.
    app.add_middleware(ApiGuardMiddleware, apps=[(STUDY_PATH, study if public is not None else None),
                                                 ("", public), (admin_root, None)])
    app.add_middleware(BodyLimitMiddleware, max_bytes=max_body_bytes,
                       exempt_paths=[admin_root + "/gradio_api/upload"] if admin is not None else [])
    return app


def _to_study_page(request: Request) -> RedirectResponse:
    query = request.url.query
    return RedirectResponse(STUDY_PATH + "/" + (f"?{query}" if query else ""), status_code=308)


def add_health_routes(app: FastAPI, readiness: Callable[[], dict[str, Any]]) -> None:
    """`GET /health`: 200 with `{"status": "ok", **readiness()}` while the server answers (a Space's or a
    load balancer's liveness check); `GET /ready`: the same body, 200 once `readiness()["ready"]` and 503
    before (send visitors only to a ready replica). Both are cheap: they read the warm-up's state."""

    def health() -> JSONResponse:
        return JSONResponse({"status": "ok", **readiness()}, headers={"Cache-Control": "no-store"})

    def ready() -> JSONResponse:
        state = readiness()
        return JSONResponse({"status": "ok", **state}, status_code=200 if state.get("ready") else 503,
                            headers={"Cache-Control": "no-store"})

    app.add_api_route("/health", health, methods=["GET", "HEAD"], include_in_schema=False)
    app.add_api_route("/ready", ready, methods=["GET", "HEAD"], include_in_schema=False)


# Where a Space's front proxy connects from: the container sees it on a private network.
SPACE_PROXY_NETWORKS = ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")


def trusted_proxies(settings: Any) -> tuple[str, ...]:
    """The proxies whose forwarding headers are believed: ARENA_TRUSTED_PROXIES when set, else on a Space
    its front proxy's networks, else none (loopback included)."""
    if settings.trusted_proxies is not None:
        return tuple(settings.trusted_proxies)
    return SPACE_PROXY_NETWORKS if settings.space_id else ()


def proxy_options(proxies: Sequence[str]) -> dict[str, Any]:
    """uvicorn's settings for `proxies`: with none, forwarding headers are ignored from every peer;
    with some, X-Forwarded-For is read only from them, right to left, up to the first address that is
    not a trusted proxy (the client as the nearest trusted proxy saw it)."""
    if not proxies:
        return {"proxy_headers": False, "forwarded_allow_ips": ""}
    return {"proxy_headers": True, "forwarded_allow_ips": ",".join(proxies)}


def serve(app: FastAPI, *, host: str, port: int, proxies: Sequence[str] = (),
          on_ready: Optional[Callable[[], None]] = None) -> None:
    """Run the app until interrupted (SIGINT/SIGTERM); `on_ready` is called once the port accepts
    connections. Client addresses come from X-Forwarded-For only when the connection comes from one of
    `proxies` (`trusted_proxies`), so the per-address limits count visitors, never the proxy, and a
    client cannot name its own address."""
    import threading
    import time

    import uvicorn

    class Server(uvicorn.Server):
        @contextmanager
        def capture_signals(self) -> Iterator[None]:
            # uvicorn re-raises SIGTERM/SIGINT after its graceful shutdown, which would end the process
            # before the caller's cleanup (the last push to the Hub, the scorer's shutdown) could run.
            with super().capture_signals():
                yield
                self._captured_signals.clear()

    config = uvicorn.Config(app, host=host, port=port, log_level="warning", timeout_graceful_shutdown=10,
                            **proxy_options(proxies))
    server = Server(config)

    def announce() -> None:
        while not server.started and not server.should_exit:
            time.sleep(0.05)
        if server.started and on_ready is not None:
            on_ready()

    threading.Thread(target=announce, name="ready", daemon=True).start()
    server.run()
