"""A throw-away PostgreSQL server for tests: its own cluster in a temporary folder, on a free port.

Uses Debian's `postgresql` package (initdb and pg_ctl under
/usr/lib/postgresql/<version>/bin, or on PATH, or in ARENA_PG_BIN). PostgreSQL
refuses to run as root, so as root the cluster belongs to the `postgres`
user. Missing binaries are an error, not a skip: CI installs them.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from pathlib import Path
from typing import Optional

MISSING = ("PostgreSQL server binaries (initdb, pg_ctl) not found: install Debian's `postgresql` package "
           "(apt-get install -y postgresql) or set ARENA_PG_BIN to their folder")


def find_bin_dir() -> Optional[Path]:
    candidates = [os.environ.get("ARENA_PG_BIN", "")]
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(Path(p).parent.name),
                         reverse=True)
    on_path = shutil.which("initdb")
    if on_path:
        candidates.append(str(Path(on_path).parent))
    for folder in candidates:
        if folder and (Path(folder) / "initdb").exists() and (Path(folder) / "pg_ctl").exists():
            return Path(folder)
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PostgresServer:
    """Start with `start()`, make databases with `create_database()`, end with `stop()`."""

    def __init__(self, bin_dir: Path, *, durable: bool = False):
        self.bin_dir = bin_dir
        self.root = Path(tempfile.mkdtemp(prefix="arena-pg-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self.user = "arena"
        self._as_postgres = os.geteuid() == 0
        self.durable = durable  # benchmarks want PostgreSQL's real commit cost; tests do not

    def _run(self, *args: str) -> None:
        cmd = [str(self.bin_dir / args[0]), *args[1:]]
        if self._as_postgres:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed:\n{done.stdout}\n{done.stderr}")

    def start(self) -> "PostgresServer":
        if self._as_postgres:
            shutil.chown(self.root, "postgres", "postgres")
        self._run("initdb", "-D", str(self.data), "-U", self.user, "-A", "trust", "-E", "UTF8",
                  "--no-locale", "--no-sync")
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c max_connections=200"
        if not self.durable:  # the cluster is deleted after the tests anyway
            options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.root / "server.log"), "-o", options,
                  "-w", "-t", "60", "start")
        return self

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/{database}"

    def create_database(self, prefix: str = "t") -> str:
        """A new empty database; returns its URL."""
        import psycopg

        name = f"{prefix}_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        try:
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)
