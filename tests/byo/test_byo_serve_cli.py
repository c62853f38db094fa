"""`python -m crs serve-crs` (and `crs-arena serve-crs`) as a real process: a built-in system over
the contract, joined by the arena as an `http` system from a systems file."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from byo_support import wait_until, write_systems

from arena.runtime.config import Settings
from arena.dialogue import Dialogue
from arena.conversation.runner import DialogueRunner
from crs.external.specs import external_specs
from crs.registry import CRSRegistry
from webapp.cli import COMMANDS

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_crs_arena_has_the_serve_crs_command():
    assert COMMANDS["serve-crs"].module == "crs.__main__" and COMMANDS["serve-crs"].prefix == ("serve-crs",)


def test_serve_crs_refuses_an_unknown_system(tmp_path):
    env = {**os.environ, "ARENA_LLM_PROVIDER": "fake", "ARENA_CACHE_DIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "crs", "serve-crs", "--crs", "nope", "--port", "9"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "unknown CRS 'nope'" in done.stderr


@pytest.mark.slow
def test_a_built_in_served_by_serve_crs_joins_the_arena_as_an_http_system(tmp_path):
    port = _free_port()
    env = {**os.environ, "ARENA_LLM_PROVIDER": "fake", "ARENA_FAKE_REPLY": "You might enjoy Alien (1979).",
           "ARENA_CACHE_DIR": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1"}
    server = subprocess.Popen([sys.executable, "-m", "crs", "serve-crs", "--crs", "chatcrs_redial",
                               "--port", str(port)], cwd=ROOT, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        def up() -> bool:
            try:
                return httpx.get(url + "/health", timeout=1).status_code == 200
            except httpx.HTTPError:
                return False

        assert wait_until(up, timeout_s=240), "serve-crs did not come up"
        path = write_systems(tmp_path / "systems.yaml", {
            "name": "served_chatcrs", "display_name": "ChatCRS served", "dataset": "redial", "kind": "http",
            "url": url, "ranking": True})
        registry = CRSRegistry(external_specs(Settings(systems_file=path, cache_dir=tmp_path)))
        assert registry.available() == ["served_chatcrs"]
        crs = registry.get("served_chatcrs")
        dialogue = Dialogue(crs_id="served_chatcrs")
        reply = DialogueRunner(crs).user_turn(dialogue, "Hi! Can you recommend me a good movie?")
        assert reply.error is None and reply.text == "You might enjoy Alien (1979)."
        assert [(i.item_id, i.title) for i in reply.items] == [("79062", "Alien (1979)")]
        ranking = crs.recommend(dialogue, 20)
        assert len(ranking) == 20 and not any(i.item_id.startswith("unlinked:") for i in ranking)
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
