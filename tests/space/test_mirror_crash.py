"""kill -9 between two pushes: only what came after the last push may be lost, and only with the disk."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from arena.corpus.hub_mirror import HubMirror
from arena.store import Store
from tests.space.mirror_support import SALT
from tests.space.mirror_worker import REPO
from tests.support.hub_server import HubServer

ROOT = Path(__file__).resolve().parents[2]


def _kill_between_pushes(db: Path, hub_url: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    worker = subprocess.Popen([sys.executable, "-m", "tests.space.mirror_worker", str(db), hub_url, "5", "3"],
                              cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert worker.stdout.readline().strip() == "pushed"
        assert worker.stdout.readline().strip() == "written"
    finally:
        worker.send_signal(signal.SIGKILL)
        worker.wait(timeout=30)
    assert worker.returncode == -signal.SIGKILL


def _restore(hub: HubServer, db: Path) -> set[str]:
    mirror = HubMirror(Store(db), REPO, salt=SALT, endpoint=hub.url, replica="fresh")
    mirror.prepare()
    return {d.dialogue_id for d in mirror.store.list_dialogues()}


def test_a_killed_replica_loses_only_what_came_after_its_last_push(tmp_path):
    with HubServer() as hub:
        disk = tmp_path / "ephemeral" / "arena.sqlite3"
        _kill_between_pushes(disk, hub.url)
        # The disk is gone (a Space restart): a new one is restored from the dataset.
        ids = _restore(hub, tmp_path / "new-disk" / "arena.sqlite3")
        assert ids == {f"pushed-{i}" for i in range(5)}  # nothing pushed is lost; the 3 unpushed are

        # With a persistent disk nothing is lost: the next start pushes what the killed one did not.
        survivor = HubMirror(Store(disk), REPO, salt=SALT, endpoint=hub.url, replica="worker")
        assert survivor.prepare() == {}  # the disk is not empty: no restore over it
        assert survivor.push() >= 3
        assert {f"unpushed-{i}" for i in range(3)} <= _restore(hub, tmp_path / "third-disk" / "arena.sqlite3")
