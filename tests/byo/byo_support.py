"""Helpers of the bring-your-own-CRS tests: systems files, a faulty contract server, waiting."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Optional

import yaml


def write_systems(path: Path, *entries: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump({"systems": list(entries)}, sort_keys=False), encoding="utf-8")
    return path


class FaultyServer:
    """A contract server that misbehaves on purpose: `mode` says how it answers POST /respond."""

    def __init__(self) -> None:
        self.mode = "ok"
        self.seen_headers: list[dict[str, str]] = []
        self._stop = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self._send(200, b'{"status": "ok"}')

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                self.rfile.read(length)
                server.seen_headers.append({k.lower(): v for k, v in self.headers.items()})
                mode = server.mode
                if mode == "slow":
                    server._stop.wait(5)
                    self._send(200, b'{"text": "late", "items": []}')
                elif mode == "5xx":
                    self._send(503, b'{"error": "overloaded"}')
                elif mode == "malformed":
                    self._send(200, b'{"text": "unfinished')
                elif mode == "wrong_shape":
                    self._send(200, b'{"reply": "no text field"}')
                elif mode == "oversized":
                    self._send(200, json.dumps({"text": "x" * 600_000, "items": []}).encode())
                elif mode == "long_text":
                    self._send(200, json.dumps({"text": "y" * 5000, "items": []}).encode())
                else:
                    self._send(200, json.dumps({"text": "Try Alien.", "items": ["Alien (1979)"]}).encode())

            def _send(self, status: int, body: bytes) -> None:
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def start(self) -> "FaultyServer":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._httpd.shutdown()
        self._httpd.server_close()


def wait_until(check: Callable[[], bool], timeout_s: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return False


def dead_url() -> str:
    """A loopback URL where nothing listens (a port just freed)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def optional(value: Optional[str]) -> dict[str, str]:
    return {} if value is None else {"api_key_env": value}
