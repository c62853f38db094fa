"""Start app replicas (`replica_app.py`) on one database and talk to them, one JSON line each way."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Optional

import sqlalchemy as sa

from arena.store import Store
from arena.store import schema as t

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


class ReplicaProcess:
    """One replica process; `call` sends a command and returns its answer; `kill` is `kill -9`."""

    def __init__(self, db: str, name: str, *args: str, env: Optional[dict[str, str]] = None):
        self.name = name
        path = os.pathsep.join([str(ROOT), str(HERE), str(ROOT / "tests" / "battle"),
                                str(ROOT / "tests" / "sim")])
        self.proc = subprocess.Popen(
            [sys.executable, str(HERE / "replica_app.py"), db, name, *args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT,
            env={**os.environ, "PYTHONPATH": path, "HF_HUB_OFFLINE": "1", **(env or {})})
        ready = json.loads(self._line())
        assert ready.get("ready") == name, ready
        self.owner = ready["owner"]

    def _line(self) -> str:
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"replica {self.name} exited with {self.proc.wait(timeout=10)}")
        return line

    def call(self, op: str, **args: Any) -> dict:
        self.send(op, **args)
        return self.receive()

    def send(self, op: str, **args: Any) -> None:
        """Send a command without waiting (`receive` reads its answer): to run replicas at once."""
        self.proc.stdin.write(json.dumps({"op": op, **args}) + "\n")
        self.proc.stdin.flush()

    def receive(self) -> dict:
        answer = json.loads(self._line())
        assert "error" not in answer, f"{self.name}: {answer.get('trace') or answer['error']}"
        return answer

    def kill(self) -> None:
        """What `kill -9` does: the process ends at once, finishing nothing."""
        self.proc.kill()
        self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()


def wait_until(check: Callable[[], Any], timeout_s: float, what: str, step_s: float = 0.1) -> Any:
    deadline = time.monotonic() + timeout_s
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout_s:.0f} s: {what}")
        time.sleep(step_s)


def scoring_jobs(store: Store) -> dict[str, tuple]:
    """dialogue id -> (state, owner, attempts) of every scoring job in the store."""
    j = t.scoring_jobs.c
    with store.read() as conn:
        return {r.dialogue_id: (r.state, r.owner, r.attempts)
                for r in conn.execute(sa.select(j.dialogue_id, j.state, j.owner, j.attempts))}
