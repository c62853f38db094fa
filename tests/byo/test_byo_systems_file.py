"""The systems file is checked at start: one line naming the entry and the field, no duplicates
(also against the built-ins), and a system that is down is shown as unavailable, not fatal."""

from __future__ import annotations

import pytest
from byo_support import dead_url, write_systems

from arena.runtime.config import Settings, SettingsError
from crs.external.specs import external_specs
from crs.external.systems_file import SystemsFileError, read_systems_file
from crs.registry import CRSRegistry

HTTP = {"name": "my_crs", "display_name": "My CRS", "dataset": "redial", "kind": "http",
        "url": "http://127.0.0.1:9/"}
CHATCRS = {"name": "chatcrs_vllm", "display_name": "ChatCRS on vLLM", "dataset": "opendialkg",
           "kind": "chatcrs", "base_url": "http://127.0.0.1:9/v1", "model": "qwen", "api_key_env": "VLLM_KEY",
           "temperature": 0.3}


def test_a_good_file_gives_both_kinds(tmp_path):
    entries = read_systems_file(write_systems(tmp_path / "systems.yaml", HTTP, CHATCRS))
    assert [(e.name, e.kind, e.dataset) for e in entries] == [
        ("my_crs", "http", "redial"), ("chatcrs_vllm", "chatcrs", "opendialkg")]
    assert entries[0].timeout_s == 30 and entries[1].temperature == 0.3


@pytest.mark.parametrize("change, expected", [
    ({"url": None}, "entry 1 (my_crs): field url: Field required"),
    ({"dataset": "movielens"}, "entry 1 (my_crs): field dataset: Value error, must be one of redial, opendialkg"),
    ({"kind": "grpc"}, "entry 1 (my_crs): field kind: must be http, ievalm or chatcrs"),
    ({"timeout_s": -1}, "entry 1 (my_crs): field timeout_s: Input should be greater than 0"),
    ({"name": "bad name!"}, "entry 1 (bad name!): field name: String should match pattern"),
    ({"colour": "red"}, "entry 1 (my_crs): field colour: is not a known field"),
    ({"url": "ftp://host"}, "entry 1 (my_crs): field url: String should match pattern"),
])
def test_a_bad_entry_is_one_line_naming_entry_and_field(tmp_path, change, expected):
    entry = {**HTTP, **change}
    entry = {k: v for k, v in entry.items() if v is not None}
    path = write_systems(tmp_path / "systems.yaml", CHATCRS | {"name": "first"}, entry)
    with pytest.raises(SystemsFileError) as caught:
        read_systems_file(path)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"ARENA_SYSTEMS {path}: ")
    assert expected.replace("entry 1", "entry 2") in message


def test_duplicate_names_are_refused_within_the_file_and_against_built_ins(tmp_path):
    path = write_systems(tmp_path / "systems.yaml", HTTP, HTTP)
    with pytest.raises(SystemsFileError, match=r"entry 2 \(my_crs\): field name: 'my_crs' is used by an earlier"):
        read_systems_file(path)
    path = write_systems(tmp_path / "systems.yaml", HTTP | {"name": "chatcrs_redial"})
    with pytest.raises(SystemsFileError, match=r"entry 1 \(chatcrs_redial\): field name: .* already a built-in"):
        read_systems_file(path, frozenset({"chatcrs_redial"}))


def test_unreadable_files_and_missing_prompt_files_are_refused(tmp_path):
    with pytest.raises(SystemsFileError, match="cannot read the file"):
        read_systems_file(tmp_path / "missing.yaml")
    broken = tmp_path / "broken.yaml"
    broken.write_text("systems: [\n  - name: x\n", encoding="utf-8")
    with pytest.raises(SystemsFileError, match="not valid YAML at line"):
        read_systems_file(broken)
    path = write_systems(tmp_path / "systems.yaml", CHATCRS | {"prompt_file": "prompts/none.txt"})
    with pytest.raises(SystemsFileError, match=r"entry 1 \(chatcrs_vllm\): field prompt_file: no file at"):
        read_systems_file(path)


def test_the_file_is_a_setting_and_its_error_is_a_settings_error(tmp_path):
    path = write_systems(tmp_path / "systems.yaml", HTTP | {"kind": "grpc"})
    settings = Settings.from_env({"ARENA_SYSTEMS": str(path)})
    assert settings.systems_file == path
    with pytest.raises(SettingsError):  # every command line reports it in one line (reports_bad_settings)
        external_specs(settings)


def test_a_command_line_refuses_a_bad_file_in_one_line(tmp_path, monkeypatch, capsys):
    from crs.__main__ import main

    path = write_systems(tmp_path / "systems.yaml", HTTP, HTTP)
    monkeypatch.setenv("ARENA_SYSTEMS", str(path))
    monkeypatch.setenv("ARENA_LLM_PROVIDER", "fake")
    assert main(["list"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "entry 2 (my_crs): field name" in err


def test_a_system_down_at_start_is_unavailable_not_fatal(tmp_path, monkeypatch):
    monkeypatch.delenv("VLLM_KEY", raising=False)
    path = write_systems(tmp_path / "systems.yaml", HTTP | {"url": dead_url()},
                         CHATCRS | {"base_url": dead_url() + "/v1"})
    registry = CRSRegistry(external_specs(Settings(systems_file=path, cache_dir=tmp_path)))
    assert registry.names == ["my_crs", "chatcrs_vllm"]
    assert registry.available() == []
    rows = {row["system"]: row for row in registry.status_table()}
    assert rows["my_crs"]["status"] == "unavailable" and "down: cannot reach" in rows["my_crs"]["why"]
    assert rows["chatcrs_vllm"]["status"] == "unavailable"
    assert "VLLM_KEY is not set" in rows["chatcrs_vllm"]["why"] or "down" in rows["chatcrs_vllm"]["why"]


def test_the_app_refuses_a_bad_file_at_start_in_one_line(tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path

    path = write_systems(tmp_path / "systems.yaml", HTTP | {"dataset": "movielens"})
    env = {**os.environ, "ARENA_SYSTEMS": str(path), "ARENA_LLM_PROVIDER": "fake",
           "ARENA_DB": str(tmp_path / "a.sqlite3"), "ARENA_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "app.py", "--port", "9"], cwd=Path(__file__).resolve().parents[2],
                          env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert lines[-1].startswith("error: ARENA_SYSTEMS") and "entry 1 (my_crs): field dataset" in lines[-1]
    assert "Traceback" not in done.stderr
