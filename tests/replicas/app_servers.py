"""Two real app servers on one database, as deployed: `python app.py --port P` twice, each its own process,
driven over HTTP with gradio_client (each client under a session hash the test chooses, so one participant's
requests can reach either server, as behind a load balancer without stickiness)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Optional

import httpx

ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 240


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class AppServer:
    """`python app.py` serving the public app on a port of its own; `client(session)` talks to it."""

    def __init__(self, name: str, db: str, workdir: Path, env: dict[str, str]):
        self.name, self.port = name, free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.log = workdir / f"{name}.log"
        self.proc = subprocess.Popen(
            [sys.executable, "app.py", "--port", str(self.port), "--db", db], cwd=ROOT,
            stdout=self.log.open("w"), stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "ARENA_LLM_PROVIDER": "fake",
                 "ARENA_WARM_START": "0", "ARENA_CACHE_DIR": str(workdir / "cache"), **env})

    def wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                tail = self.log.read_text()[-3000:]
                raise RuntimeError(f"{self.name} exited with {self.proc.returncode}:\n{tail}")
            try:
                if httpx.get(self.url, timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        tail = self.log.read_text()[-3000:]
        raise RuntimeError(f"{self.name} did not serve within {START_TIMEOUT_S} s:\n{tail}")

    def client(self, session: str):
        from gradio_client import Client

        client = Client(self.url, verbose=False)
        client.session_hash = session  # the participant's session, whichever server the request reaches
        return client

    @property
    def owner_prefix(self) -> str:
        """How this server's claims (scoring jobs, runs) begin in the store: its process id."""
        return f"{self.proc.pid}-"

    def kill(self) -> None:
        """What `kill -9` does: the server ends at once, finishing nothing, releasing nothing."""
        self.proc.kill()
        self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)


def start_servers(db: str, workdir: Path,
                  env: Optional[dict[str, str]] = None) -> tuple[AppServer, AppServer]:
    """Both servers started at once on the database (one migrates it, the other waits), ready to serve."""
    servers = (AppServer("r1", db, workdir, env or {}), AppServer("r2", db, workdir, env or {}))
    try:
        for server in servers:
            server.wait_ready()
    except Exception:
        for server in servers:
            server.stop()
        raise
    return servers
