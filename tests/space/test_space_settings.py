"""A Space-ready repository: the README's front matter and the variables a Space sets."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from arena.runtime import config
from arena.runtime.config import Settings

ROOT = Path(__file__).resolve().parents[2]


def _front_matter() -> tuple[dict, str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert text.startswith("---\n"), "the Space metadata must be the very first thing in README.md"
    header, body = text[4:].split("\n---\n", 1)
    return yaml.safe_load(header), body


def test_the_readme_front_matter_is_what_a_space_reads():
    meta, body = _front_matter()
    pinned = re.search(r"^gradio==(\S+)$", (ROOT / "requirements.txt").read_text(), re.M).group(1)
    assert meta["sdk"] == "gradio" and meta["sdk_version"] == pinned
    assert meta["app_file"] == "app.py" and (ROOT / meta["app_file"]).is_file()
    assert meta["python_version"] == "3.11" and meta["pinned"] is False
    assert 0 < len(meta["short_description"]) <= 60  # the Hub's limit
    assert body.lstrip().startswith("# CRS Arena")


def test_gradio_server_variables_are_honoured_and_arena_ones_win():
    space = {"GRADIO_SERVER_NAME": "0.0.0.0", "GRADIO_SERVER_PORT": "7000"}
    assert (Settings.from_env(space).host, Settings.from_env(space).port) == ("0.0.0.0", 7000)
    both = {**space, "ARENA_HOST": "127.0.0.2", "ARENA_PORT": "7100"}
    assert (Settings.from_env(both).host, Settings.from_env(both).port) == ("127.0.0.2", 7100)
    assert Settings.from_env(space, port=7200).port == 7200  # a flag wins over both


def test_a_data_dir_holds_the_database_and_the_caches(tmp_path):
    settings = Settings.from_env({"ARENA_DATA_DIR": str(tmp_path)})
    assert settings.db_path == tmp_path / "arena.sqlite3"
    assert settings.cache_dir == tmp_path / "cache" and settings.models_dir == tmp_path / "cache" / "models"
    given = Settings.from_env({"ARENA_DATA_DIR": str(tmp_path), "ARENA_DB": "/elsewhere/a.sqlite3"})
    assert given.db_path == Path("/elsewhere/a.sqlite3") and given.cache_dir == tmp_path / "cache"


def test_a_space_with_persistent_storage_uses_it_by_default(tmp_path, monkeypatch):
    volume = tmp_path / "data"
    monkeypatch.setattr(config, "SPACE_VOLUME", volume)
    assert Settings.from_env({"SPACE_ID": "me/arena"}).data_dir is None  # no volume mounted
    volume.mkdir()
    settings = Settings.from_env({"SPACE_ID": "me/arena"})
    assert settings.data_dir == volume and settings.db_path == volume / "arena.sqlite3"
    assert Settings.from_env({}).data_dir is None  # not a Space: /data is never assumed
    monkeypatch.setattr(config.os, "access", lambda path, mode: False)  # a read-only mount (root ignores modes)
    assert Settings.from_env({"SPACE_ID": "me/arena"}).data_dir is None
