"""Malformed calls to Gradio's HTTP API get a 4xx and one line, never a traceback.

A probe sent 280 malformed calls to the public mounts: 40 were answered 500 and
the operator's log got 44 tracebacks. Gradio reads an unknown function id or
endpoint name as a `KeyError`, echoes `1e999999` (read by Python's JSON parser
as infinity) back in a 422 that cannot be written as JSON, and lets a stream
that raises after its first bytes end in "response already started".
`ApiGuardMiddleware` stands in front of every mounted app and checks, before the
app sees it, what can be checked from the app's own public description (its
`/config` and `/info`, read once per app):

- the body of a JSON call is one JSON object with no number JSON cannot hold;
- `queue/join` names a function the app has, with as many inputs as it takes, a
  session (a short string), and event data that is an object;
- `run/`, `api/`, `call/` and `call/v2/` name an endpoint the app's API offers,
  with a list of inputs (`call/v2/` with only that endpoint's parameter names);
- a radio, dropdown or checkbox group is given values of the right shape, each one of the choices that
  input has in the caller's session (a page may change them, such as a study's attention check);
- `queue/data` (a session's event stream) names a session that is a short string, and a session the
  queue does not hold gets a 404 line rather than a 200 stream carrying an error message;
- `upload` is a multipart body whose parts are all files;
- the development routes (`dev/reload`, the editor's `vibe-*`) answer 404: a
  served app never reloads its code, and `dev/reload` held a connection open
  for as long as the client waited.

Anything else goes to the app as sent. Should the app still raise while it reads
a call (before any handler of the project runs), the client gets 400 and the
log one warning line with the route and the error's type; the app's own errors
(a handler's, the store's) are not these and stay as they were.
"""

from __future__ import annotations

import json
import logging
import math
import re
from typing import Any, Awaitable, Callable, Iterable, Optional

from webapp.sessions.session_choices import OFFERED, OfferedChoices, choice_values

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

log = logging.getLogger(__name__)

API = "/gradio_api/"
EVENT_STREAM = "queue/data"
DEV_ROUTES = ("dev/reload", "vibe-edit", "undo-vibe-edit", "vibe-code")
# Gradio's proxy for the files of another Space loaded with `gr.load`: the arena loads none, and the
# route raised on a URL it could not parse (`proxy=%00` answered 500 with a traceback).
UNUSED_ROUTES = ("proxy=",)
MAX_SESSION_CHARS = 128
MAX_NAME_CHARS = 200
_ROUTE = re.compile(r"^(?P<mount>.*?)/gradio_api/(?P<rest>.*)$")
_NAMED = re.compile(r"^(?P<kind>run|api|call|call/v2)/(?P<name>[^/]+)/?$")
_JSON_ROUTES = re.compile(r"^(queue/join|run/[^/]+/?|api/[^/]+/?|call/[^/]+/?|call/v2/[^/]+/?|cancel|reset/?"
                          r"|stream/[^/]+(/close)?)$")
# Errors Gradio's routes raise while they read a call (an id, a name, a file part they cannot find).
_READING_ERRORS = (KeyError, IndexError, TypeError, ValueError, AttributeError, LookupError)


class Refused(Exception):
    def __init__(self, status: int, line: str):
        super().__init__(line)
        self.status = status
        self.line = line


class AppDescription:
    """What one mounted app accepts, read from its public config and API description (once, on first use)."""

    def __init__(self, blocks: Any, offered: OfferedChoices = OFFERED):
        self.blocks = blocks
        self.offered = offered
        self._read = False

    def _load(self) -> None:
        if self._read:
            return
        config = self.blocks.get_config_file()
        self.inputs: dict[int, int] = {}
        self.named: dict[str, int] = {}
        for index, dep in enumerate(config.get("dependencies", [])):
            fn_id = dep.get("id", index)
            self.inputs[fn_id] = len(dep.get("inputs", []))
            if dep.get("api_name") and dep.get("api_visibility", "public") != "private":
                self.named[dep["api_name"]] = fn_id
        skipped = {c["id"] for c in config.get("components", []) if c.get("skip_api")}
        self.choices = _closed_choices(config.get("components", []))
        self.input_ids = {d.get("id", n): list(d.get("inputs", []))
                          for n, d in enumerate(config.get("dependencies", []))}
        self.api_input_ids = {fn_id: [i for i in ids if i not in skipped]
                              for fn_id, ids in self.input_ids.items()}
        self.api_inputs = {fn_id: sum(1 for i in dep.get("inputs", []) if i not in skipped)
                           for fn_id, dep in ((d.get("id", n), d) for n, d in
                                              enumerate(config.get("dependencies", [])))}
        info = self.blocks.get_api_info() or {}
        endpoints = {name.lstrip("/"): endpoint.get("parameters", [])
                     for name, endpoint in (info.get("named_endpoints") or {}).items()}
        self.parameters = {name: {p.get("parameter_name") for p in params}
                           for name, params in endpoints.items()}
        self.required = {name: {p.get("parameter_name") for p in params if not p.get("parameter_has_default")}
                         for name, params in endpoints.items()}
        self._read = True

    def check_join(self, body: dict) -> None:
        self._load()
        fn = body.get("fn_index")
        if not isinstance(fn, int) or isinstance(fn, bool) or fn not in self.inputs:
            raise Refused(404, "No such function.")
        session = body.get("session_hash")
        if not isinstance(session, str) or not 0 < len(session) <= MAX_SESSION_CHARS:
            raise Refused(400, "A session id (a short string) is required.")
        data = body.get("data")
        if not isinstance(data, list) or len(data) != self.inputs[fn]:
            raise Refused(422, f"This function takes a list of {self.inputs[fn]} inputs.")
        self._check_choices(fn, data, session)
        if body.get("event_data") is not None and not isinstance(body["event_data"], dict):
            raise Refused(422, "Event data must be an object.")
        trigger = body.get("trigger_id")
        if trigger is not None and (not isinstance(trigger, int) or isinstance(trigger, bool)):
            raise Refused(422, "A trigger id must be a number.")

    def check_named(self, kind: str, name: str, body: dict) -> None:
        self._load()
        if len(name) > MAX_NAME_CHARS or name not in self.named:
            raise Refused(404, "No such endpoint.")
        if kind == "call/v2":
            allowed = self.parameters.get(name)
            if allowed is None:
                raise Refused(404, "No such endpoint.")
            unknown = sorted(str(k) for k in body if k not in allowed and k != "oauth_token")
            if unknown:
                raise Refused(422, f"Unknown parameter {unknown[0][:40]!r} for this endpoint.")
            missing = sorted(self.required[name] - set(body))
            if missing:
                raise Refused(422, f"The parameter {missing[0]!r} is required by this endpoint.")
            return
        data = body.get("data")
        fn = self.named[name]
        if not isinstance(data, list) or len(data) not in (self.inputs[fn], self.api_inputs[fn]):
            raise Refused(422, f"This endpoint takes a list of {self.api_inputs[fn]} inputs as `data`.")
        session = body.get("session_hash")
        if session is not None and (not isinstance(session, str) or len(session) > MAX_SESSION_CHARS):
            raise Refused(400, "A session id must be a short string.")
        self._check_choices(fn, data, session)


    def _check_choices(self, fn: int, data: list, session: Optional[str]) -> None:
        """A radio or a single dropdown takes one plain value, a checkbox group or a multiple dropdown a list
        of them, each one of the input's choices in `session`: Gradio refuses anything else only while it
        prepares the inputs, answering 500 (or failing the event) and logging a traceback."""
        ids = self.input_ids[fn] if len(data) == len(self.input_ids[fn]) else self.api_input_ids[fn]
        for component, value in zip(ids, data):
            many = self.choices.get(component)
            if many is None or value is None:
                continue
            fits = (isinstance(value, list) and all(_plain(v) for v in value)) if many else _plain(value)
            if not fits:
                raise Refused(422, "A value does not have the shape its input takes.")
            allowed = self.current_choices(component, session)
            if allowed is not None and any(v not in allowed for v in (value if many else [value])):
                raise Refused(422, "A value is not one of its input's choices.")

    def checked_choices(self) -> set[int]:
        """The components whose values are checked against their choices (a radio, a checkbox group, a
        dropdown closed to custom values): the events that set their choices per session must record them
        (`webapp.sessions.session_choices`; `tests/safety/test_session_choices.py` checks the app's)."""
        self._load()
        blocks = getattr(self.blocks, "blocks", None)
        return {c for c in self.choices if isinstance(blocks, dict) and c in blocks
                and not getattr(blocks[c], "allow_custom_value", False)}

    def current_choices(self, component: int, session: Optional[str]) -> Optional[list]:
        """The values `component` takes in `session`: the choices the app's handlers gave that session
        (`webapp.sessions.session_choices`), else the page's own; None when it takes any value (a dropdown
        open to custom values) or its choices cannot be read."""
        blocks = getattr(self.blocks, "blocks", None)  # the page's components by id
        block = blocks.get(component) if isinstance(blocks, dict) else None
        if block is None or getattr(block, "allow_custom_value", False):
            return None
        given = self.offered.choices(session, block)
        if given is not None:
            return given
        choices = getattr(block, "choices", None)
        return choice_values(choices) if isinstance(choices, list) else None


def _closed_choices(components: list[dict]) -> dict[int, bool]:
    """The components that take a choice: id -> whether they take several."""
    kinds: dict[int, bool] = {}
    for component in components:
        kind, props = component.get("type"), component.get("props") or {}
        if kind in ("radio", "dropdown", "checkboxgroup"):
            kinds[component["id"]] = kind == "checkboxgroup" or bool(props.get("multiselect"))
    return kinds


def _plain(value: Any) -> bool:
    """One choice's value as JSON carries it: a string, a number or a boolean."""
    return isinstance(value, (str, int, float, bool))


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON can hold")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text[:20]} is not a number JSON can hold")
    return value


def parse_json_object(body: bytes) -> dict:
    """The body as one JSON object; `Refused` (400) when it is not JSON, not an object, or holds a number
    out of range (`1e999999`, NaN, Infinity)."""
    try:
        value = json.loads(body.decode("utf-8"), parse_constant=_reject_constant, parse_float=_finite_float)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise Refused(400, "The request body must be JSON with numbers in range.") from None
    if not isinstance(value, dict):
        raise Refused(400, "The request body must be a JSON object.")
    return value


class ApiGuardMiddleware:
    """See the module doc. `apps` pairs each mount's path (`""` for `/`) with its Blocks; `offered` holds the
    choices the apps' handlers gave each session (the process's record unless told otherwise)."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]], *,
                 apps: Iterable[tuple[str, Any]], offered: OfferedChoices = OFFERED):
        self.app = app
        self.apps = {mount.rstrip("/"): AppDescription(blocks, offered)
                     for mount, blocks in apps if blocks is not None}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        route = _ROUTE.match(scope.get("path", "")) if scope.get("type") == "http" else None
        if route is None:
            await self.app(scope, receive, send)
            return
        rest = route["rest"]
        described = self.apps.get(route["mount"])
        stream = described is not None and scope.get("method") == "GET" and rest.rstrip("/") == EVENT_STREAM
        try:
            if rest.rstrip("/").startswith(DEV_ROUTES + UNUSED_ROUTES):
                raise Refused(404, "Not found.")
            # Only the public mounts' bodies are read here (bounded by `BodyLimitMiddleware`); the researcher
            # app's uploads may be large and stay streamed.
            if described is not None and scope.get("method") == "POST":
                if _JSON_ROUTES.match(rest):
                    body = await _read_body(receive)
                    receive = _replay(body, receive)
                    _check(described, rest, parse_json_object(body))
                elif rest.rstrip("/") == "upload":
                    body = await _read_body(receive)
                    receive = _replay(body, receive)
                    _check_upload(scope, body)
            if stream:
                _check_stream_session(scope)
        except Refused as refused:
            log.info("refused %s %s: %s", scope.get("method"), _short(scope.get("path", "")), refused.line)
            await _answer(send, refused.status, refused.line)
            return
        await self._guarded(scope, receive, send, stream=stream)

    async def _guarded(self, scope: Scope, receive: Receive, send: Send, *, stream: bool = False) -> None:
        """The app, with its response's start held back until its first body bytes, and a 500 held back
        whole: when the app raises while reading the call (Starlette writes its 500 before it raises; an
        event stream for a session or event it does not hold raises only once it runs), the client gets
        a 4xx instead of a 500 or an empty 200. With `stream` (a session's event stream), a stream whose
        first message says the queue holds no such session is answered 404 instead."""
        held: list[dict[str, Any]] = []
        flowing = replaced = False

        async def holding(message: dict[str, Any]) -> None:
            nonlocal flowing, replaced
            if replaced:  # the rest of a stream answered 404 already
                return
            if flowing:
                await send(message)
            elif stream and message["type"] == "http.response.body" and _no_such_session(message):
                replaced = True
                await _answer(send, 404, "No such session.")
            elif message["type"] == "http.response.start" or (held and held[0].get("status") == 500):
                held.append(message)
            else:
                flowing = True
                for earlier in held:
                    await send(earlier)
                held.clear()
                await send(message)

        try:
            await self.app(scope, receive, holding)
        except Exception as exc:
            if not await _ended_quietly(exc, scope, send, flowing=flowing, replaced=replaced):
                raise
            return
        for message in held:  # the app's own answer, passed on as it is
            await send(message)


async def _ended_quietly(exc: Exception, scope: Scope, send: Send, *, flowing: bool, replaced: bool) -> bool:
    """After the app raised `exc`: when it is how Gradio refuses a call it cannot read, the answer's end (a
    4xx, or the close of a stream that had begun) and one log line, and True; False for any other error."""
    status = _reading_error(exc)
    if status is None:
        return False
    what = f"{scope.get('method')} {_short(scope['path'])}"
    if replaced:  # Gradio ends the stream of an unknown session by raising
        log.info("refused %s: no such session", what)
    elif flowing:  # a stream that had begun (Gradio wrote its own error message in it): ended here
        log.info("ended %s: %s", what, _cause(exc))
        await send({"type": "http.response.body", "body": b"", "more_body": False})
    else:
        log.warning("refused %s: %s", what, _cause(exc))
        await _answer(send, status, "No such session or event." if status == 404 else
                      "This request could not be read.")
    return True


def _check_stream_session(scope: Scope) -> None:
    """The event stream names one session, a short string (Gradio's own answer to a missing one is a
    validation error listing its fields)."""
    from urllib.parse import parse_qs

    query = parse_qs(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
    sessions = query.get("session_hash", [])
    if len(sessions) != 1 or not 0 < len(sessions[0]) <= MAX_SESSION_CHARS:
        raise Refused(400, "A session id (a short string) is required.")


def _no_such_session(message: dict[str, Any]) -> bool:
    """Whether the first bytes of an event stream are Gradio's message that the queue holds no such session
    (the stream's protocol: one `data:` line of JSON with `session_not_found`)."""
    body = message.get("body", b"")
    if not body.startswith(b"data: "):
        return False
    try:
        first = json.loads(body[len(b"data: "):].split(b"\n\n", 1)[0])
    except ValueError:
        return False
    return isinstance(first, dict) and first.get("session_not_found") is True


def _cause(exc: BaseException) -> str:
    inner = exc.__cause__ if isinstance(exc, RuntimeError) and exc.__cause__ is not None else exc
    return f"{type(inner).__name__}: {' '.join(str(inner).split())[:120]}"


def _check(described: AppDescription, rest: str, body: dict) -> None:
    if rest == "queue/join":
        described.check_join(body)
        return
    named = _NAMED.match(rest)
    if named is not None:
        described.check_named(named["kind"], named["name"], body)


def _reading_error(exc: BaseException) -> int | None:
    """The 4xx status for `exc` when it is how Gradio's routes refuse a call they cannot read (an HTTP
    error, a lookup that failed, or Starlette's note that such an HTTP error came after a stream had begun:
    an event stream for a session the queue does not hold); None for any other error."""
    from fastapi.exceptions import HTTPException, RequestValidationError

    if isinstance(exc, RuntimeError) and isinstance(exc.__cause__, (HTTPException, RequestValidationError)):
        exc = exc.__cause__
    if isinstance(exc, HTTPException):
        return exc.status_code if 400 <= exc.status_code < 500 else 400
    if isinstance(exc, RequestValidationError):
        return 422
    return 400 if isinstance(exc, _READING_ERRORS) else None


async def _read_body(receive: Receive) -> bytes:
    """The whole request body (its size is bounded by `BodyLimitMiddleware`, which stands outside)."""
    chunks = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise Refused(400, "The request ended before its body.")
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    """The body read whole, handed to the app as one message; after it, the connection's own messages
    (a disconnect the app listens for comes when the client really leaves)."""
    sent = False

    async def replayed() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed


def _check_upload(scope: Scope, body: bytes) -> None:
    """Gradio's upload route takes multipart parts named `files`, each a file."""
    from python_multipart.multipart import parse_options_header

    ctype = dict(scope.get("headers") or []).get(b"content-type", b"")
    kind, options = parse_options_header(ctype)
    boundary = options.get(b"boundary")
    if kind != b"multipart/form-data" or not boundary:
        raise Refused(400, "An upload is a multipart form of files.")
    parts = body.split(b"--" + boundary)
    files = 0
    for part in parts[1:]:
        if part.startswith(b"--"):
            break
        head = part.split(b"\r\n\r\n", 1)[0]
        if b'name="files"' not in head or b"filename=" not in head:
            raise Refused(400, "An upload is a multipart form of files.")
        files += 1
    if not files:
        raise Refused(400, "An upload is a multipart form of files.")


def _short(path: str) -> str:
    return path if len(path) <= 120 else path[:117] + "..."


async def _answer(send: Send, status: int, line: str) -> None:
    body = json.dumps({"detail": line}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
