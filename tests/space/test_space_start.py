"""A Space-like start: the variables a Space sets, a read-only app folder, an empty writable volume, one port.

`python app.py` runs from a copy of the repository's tracked files (made read-only; as root, where modes do
not bind, the test checks instead that nothing in it changed), with the volume given as ARENA_DATA_DIR and the
store mirrored to a local Hub server. It must answer its first page before its models have loaded, load them
behind it and say so at `/ready`, serve the public pages at `/` and the researcher pages at `/admin` behind
the login on the one port the Space exposes, keep the database on the volume, and push what is new when the
Space stops it (SIGTERM).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from arena.store import Store
from tests.space.mirror_support import SALT, person_dialogue
from tests.support.asgi_server import free_port
from tests.support.hub_server import HubServer
from webapp.protection.admin_auth import hash_password

ROOT = Path(__file__).resolve().parents[2]
REPO = "researchers/space-corpus"


def _copy_tracked_files(dest: Path) -> dict[str, tuple[int, int]]:
    names = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in filter(None, names.decode().split("\0")):
        source = ROOT / name
        if source.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    return _tree_state(dest)


def _tree_state(folder: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in folder.rglob("*") if "__pycache__" not in p.parts}


def _read_only(folder: Path) -> None:
    for path in [folder, *folder.rglob("*")]:
        path.chmod(path.stat().st_mode & ~0o222)


@pytest.mark.slow
def test_a_space_like_start_serves_both_pages_on_one_port_and_keeps_the_corpus_on_the_volume(tmp_path):
    app_dir, volume = tmp_path / "app", tmp_path / "data"
    app_dir.mkdir()
    volume.mkdir()
    before = _copy_tracked_files(app_dir)
    _read_only(app_dir)
    port = free_port()
    password = "space-researcher-password"
    with HubServer() as hub:
        env = {
            "PATH": os.environ["PATH"], "HOME": str(tmp_path / "home"), "PYTHONDONTWRITEBYTECODE": "1",
            # what a Space sets
            "SPACE_ID": "researchers/crs-arena", "SPACE_AUTHOR_NAME": "researchers", "SPACE_REPO_NAME": "crs-arena",
            "SYSTEM": "spaces", "GRADIO_SERVER_NAME": "0.0.0.0", "GRADIO_SERVER_PORT": str(port),
            # its persistent storage, and the secrets and variables of "Deploy as a Space"
            "ARENA_DATA_DIR": str(volume), "ARENA_HUB_DATASET": REPO, "HF_ENDPOINT": hub.url, "HF_TOKEN": "hf_space",
            "ARENA_PSEUDONYM_SALT": SALT, "ARENA_ADMIN_USERS": "ada",
            "ARENA_ADMIN_PASSWORD_HASH": hash_password(password, iterations=1000),
            "ARENA_LLM_PROVIDER": "fake", "HF_HUB_OFFLINE": "1", "GRADIO_ANALYTICS_ENABLED": "False",
        }
        process = subprocess.Popen([sys.executable, "app.py"], cwd=app_dir, env=env, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True)
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.extend(iter(process.stdout.readline, "")), daemon=True)
        reader.start()
        try:
            deadline = time.monotonic() + 240
            while not any("CRS Arena ready" in line for line in lines):
                assert process.poll() is None, "".join(lines[-30:])
                assert time.monotonic() < deadline, "".join(lines[-30:])
                time.sleep(0.2)
            url = f"http://127.0.0.1:{port}"
            assert httpx.get(url + "/", timeout=30).status_code == 200  # served before the models load
            assert httpx.get(url + "/health", timeout=30).json()["status"] == "ok"
            while (ready := httpx.get(url + "/ready", timeout=30)).status_code != 200:
                assert ready.status_code == 503 and not ready.json()["ready"], ready.text
                assert time.monotonic() < deadline, "".join(lines[-30:])
                time.sleep(0.2)
            log = "".join(lines)
            assert "warm start 1/" in log and "act model loaded" in log
            assert log.index("CRS Arena ready") < log.index("warm start done")
            assert ready.json()["ready"] and "act model" in ready.json()["loaded"]
            assert httpx.get(url + "/admin/config", timeout=30).status_code == 401
            login = httpx.post(url + "/admin/login", data={"username": "ada", "password": password}, timeout=30)
            assert login.status_code == 200
            config = httpx.get(url + "/admin/config", cookies=login.cookies, timeout=30)
            assert config.status_code == 200 and "Moderation" in config.text
            assert (volume / "arena.sqlite3").is_file() and (volume / "cache").is_dir()
            assert ("dataset", REPO) in hub.repos and hub.repos[("dataset", REPO)].private
            # a dialogue stored while it runs (as another app process would) is pushed when the Space stops it
            Store(volume / "arena.sqlite3").save_dialogue(person_dialogue("while-running", "raw-visitor-0001"))
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=60)
        reader.join(timeout=10)
        assert process.returncode == 0, "".join(lines[-30:])
        pushed = hub.files(REPO)
        assert any(p.startswith("shards/dialogues/") for p in pushed)
        assert b"while-running" in b"".join(pushed.values()) and b"raw-visitor-0001" not in b"".join(pushed.values())
    assert _tree_state(app_dir) == before  # nothing was written into the app folder
