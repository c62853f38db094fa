"""A model server that behaves as iEvaLM-CRS's does (its Flask `ModelAPI`), on loopback.

`POST /` takes `{"context": [...], "message": "..."}` and answers `{"response": "..."}`, or a
400 when either field is missing; `GET /` answers "Model is running.". Like the real server it
keeps per-conversation state in a session cookie: here the number of turns it has answered in
that conversation, which the reply reports so a test can see whether state was carried.
The reply text is `reply(context, message, turn)`; every request is kept in `seen`.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Optional

Reply = Callable[[list[str], str, int], str]


class IEvaLMStyleServer:
    def __init__(self, reply: Reply, *, health_status: int = 200) -> None:
        self.reply = reply
        self.health_status = health_status
        self.seen: list[dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                if self.path.split("?")[0] != "/":
                    self._send(404, b"Not Found", "text/html")
                    return
                self._send(server.health_status, b"Model is running.", "text/html; charset=utf-8")

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                if self.path.split("?")[0] != "/":
                    self._send(404, b"Not Found", "text/html")
                    return
                try:
                    data = json.loads(raw)
                    context, message = data["context"], data["message"]
                except (ValueError, KeyError, TypeError):
                    self._send(400, b"An error occurred, make sure you have provided the context and message.",
                               "text/html")
                    return
                turn = self._session_turns() + 1
                server.seen.append({"context": context, "message": message, "turn": turn,
                                    "cookie": self.headers.get("cookie")})
                body = json.dumps({"response": server.reply(context, message, turn)}).encode()
                self._send(200, body, "application/json", cookie=f"session=turns-{turn}; HttpOnly; Path=/")

            def _session_turns(self) -> int:
                for part in (self.headers.get("cookie") or "").split(";"):
                    name, _, value = part.strip().partition("=")
                    if name == "session" and value.startswith("turns-") and value[6:].isdigit():
                        return int(value[6:])
                return 0

            def _send(self, status: int, body: bytes, content_type: str, cookie: Optional[str] = None) -> None:
                self.send_response(status)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(body)))
                if cookie:
                    self.send_header("set-cookie", cookie)
                self.end_headers()
                self.wfile.write(body)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread: Optional[threading.Thread] = None

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> "IEvaLMStyleServer":
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def __enter__(self) -> "IEvaLMStyleServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
