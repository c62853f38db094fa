"""A small OpenAI-compatible HTTP server for tests (binds 127.0.0.1 only).

It speaks just enough of the API for chat clients: ``POST /v1/chat/completions``
and ``GET /v1/models``. Each request takes the next queued behaviour (an
`Action`, a plain string reply, or a callable of the parsed request); when the
queue is empty the default responder answers. Every request is logged, and the
server tracks how many requests were in flight at once.

    with OpenAIStubServer() as server:
        server.enqueue(error(500), "hello")
        client = OpenAI(base_url=server.base_url, api_key="x")
        ...
        assert len(server.requests) == 2

In pytest, `from tests.support.openai_stub_server import openai_stub` in a
conftest.py provides a started server as the `openai_stub` fixture.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterator, Optional, Union

import pytest


@dataclass
class Action:
    """How to answer one request.

    By default a normal chat completion whose content is `content`. `body`
    (bytes or str) replaces the whole response body verbatim, for malformed
    answers; `json_body` replaces it with the given JSON document.
    """

    status: int = 200
    content: Optional[str] = None
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    usage: Optional[dict[str, int]] = None
    body: Union[bytes, str, None] = None
    json_body: Any = None
    content_type: str = "application/json"


Behaviour = Union[Action, str, Callable[["RecordedRequest"], Union[Action, str]]]


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    json: Any
    started: float
    finished: Optional[float] = None

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list((self.json or {}).get("messages") or [])

    @property
    def last_user_message(self) -> str:
        for message in reversed(self.messages):
            if message.get("role") == "user":
                return str(message.get("content") or "")
        return ""


def reply(content: str, *, usage: Optional[dict[str, int]] = None, delay_s: float = 0.0) -> Action:
    return Action(content=content, usage=usage, delay_s=delay_s)


def error(status: int, message: str = "stub error", *, retry_after: Optional[float] = None,
          delay_s: float = 0.0) -> Action:
    headers = {"retry-after": f"{retry_after:g}"} if retry_after is not None else {}
    return Action(
        status=status,
        headers=headers,
        delay_s=delay_s,
        json_body={"error": {"message": message, "type": "stub_error", "code": status}},
    )


def raw(body: Union[bytes, str], *, status: int = 200, content_type: str = "application/json") -> Action:
    return Action(status=status, body=body, content_type=content_type)


def sleep(seconds: float, then: Optional[Action] = None) -> Action:
    """Answer only after `seconds` (to provoke client timeouts)."""
    action = then or Action(content="late answer")
    action.delay_s = seconds
    return action


def echo_responder(request: RecordedRequest) -> str:
    return f"echo: {request.last_user_message}"


def _approx_tokens(text: str) -> int:
    return max(1, len(text.split()))


class OpenAIStubServer:
    def __init__(self, default: Optional[Behaviour] = None, latency_s: float = 0.0,
                 model: str = "stub-model"):
        self.default: Behaviour = default if default is not None else echo_responder
        self.latency_s = latency_s
        self.model = model
        self.requests: list[RecordedRequest] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._queue: list[Behaviour] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: Optional[ThreadingHTTPServer] = None
        self._thread: Optional[threading.Thread] = None

    # -- lifecycle -------------------------------------------------------
    def start(self) -> "OpenAIStubServer":
        handler = type("StubHandler", (_Handler,), {"stub": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="openai-stub", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes handlers sleeping on a delay
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> "OpenAIStubServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # -- scripting -------------------------------------------------------
    def enqueue(self, *behaviours: Behaviour) -> None:
        with self._lock:
            self._queue.extend(behaviours)

    def reset(self) -> None:
        with self._lock:
            self._queue.clear()
            self.requests.clear()
            self.max_in_flight = 0

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.path.endswith("/chat/completions")]

    # -- used by the handler ----------------------------------------------
    def _begin(self, record: RecordedRequest) -> Behaviour:
        with self._lock:
            self.requests.append(record)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            return self._queue.pop(0) if self._queue else self.default

    def _end(self, record: RecordedRequest) -> None:
        with self._lock:
            self.in_flight -= 1
            record.finished = time.monotonic()

    def _wait(self, seconds: float) -> None:
        if seconds > 0:
            self._stopping.wait(seconds)

    def _completion_body(self, request: RecordedRequest, action: Action) -> dict[str, Any]:
        content = action.content if action.content is not None else ""
        prompt = " ".join(str(m.get("content") or "") for m in request.messages)
        usage = dict(action.usage) if action.usage else {
            "prompt_tokens": _approx_tokens(prompt),
            "completion_tokens": _approx_tokens(content),
        }
        usage.setdefault("total_tokens", usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0))
        return {
            "id": f"chatcmpl-stub-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": (request.json or {}).get("model") or self.model,
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }],
            "usage": usage,
        }


class _Handler(BaseHTTPRequestHandler):
    stub: OpenAIStubServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass

    def _record(self) -> RecordedRequest:
        length = int(self.headers.get("content-length") or 0)
        raw_body = self.rfile.read(length) if length else b""
        try:
            parsed = json.loads(raw_body) if raw_body else None
        except ValueError:
            parsed = None
        return RecordedRequest(
            method=self.command,
            path=self.path,
            headers={k.lower(): v for k, v in self.headers.items()},
            json=parsed,
            started=time.monotonic(),
        )

    def _send(self, status: int, body: bytes, content_type: str, headers: dict[str, str]) -> None:
        try:
            self.send_response(status)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(body)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout); nothing to do

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            body = {"object": "list", "data": [{"id": self.stub.model, "object": "model"}]}
            self._send(200, json.dumps(body).encode(), "application/json", {})
        else:
            self._send(404, b'{"error": {"message": "not found"}}', "application/json", {})

    def do_POST(self) -> None:
        record = self._record()
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send(404, b'{"error": {"message": "not found"}}', "application/json", {})
            return
        behaviour = self.stub._begin(record)
        try:
            action = self._resolve(behaviour, record)
            self.stub._wait(self.stub.latency_s + action.delay_s)
            if action.body is not None:
                body = action.body.encode() if isinstance(action.body, str) else action.body
            elif action.json_body is not None:
                body = json.dumps(action.json_body).encode()
            else:
                body = json.dumps(self.stub._completion_body(record, action)).encode()
        finally:
            # Counted out before the answer leaves, so a client that sends its next
            # request as soon as it reads this one is never seen as overlapping.
            self.stub._end(record)
        self._send(action.status, body, action.content_type, action.headers)

    @staticmethod
    def _resolve(behaviour: Behaviour, record: RecordedRequest) -> Action:
        if callable(behaviour) and not isinstance(behaviour, Action):
            behaviour = behaviour(record)
        if isinstance(behaviour, str):
            return Action(content=behaviour)
        return behaviour


@pytest.fixture
def openai_stub() -> Iterator[OpenAIStubServer]:
    """A started stub server; import this name into a conftest.py to use it as a fixture."""
    with OpenAIStubServer() as server:
        yield server


__all__ = [
    "Action",
    "OpenAIStubServer",
    "RecordedRequest",
    "echo_responder",
    "openai_stub",
    "error",
    "raw",
    "reply",
    "sleep",
]
