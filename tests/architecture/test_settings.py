"""Settings in one place: one object, documented in one table, the only reader of the environment."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from arena.runtime.config import Settings, SettingsError, environment_variables

ROOT = Path(__file__).resolve().parents[2]
PRODUCT_PACKAGES = ("arena", "crs", "simulators", "evaluators", "webapp")
CONFIG_MODULE = ROOT / "arena" / "runtime" / "config.py"


@pytest.mark.parametrize("env, variable", [
    ({"ARENA_MAX_TURNS": "twenty"}, "ARENA_MAX_TURNS must be an integer, got 'twenty'"),
    ({"ARENA_LLM_TIMEOUT": "-3"}, "ARENA_LLM_TIMEOUT must be > 0"),
    ({"ARENA_PORT": "70000"}, "ARENA_PORT must be <= 65535"),
    ({"ARENA_LLM_CACHE": "sometimes"}, "ARENA_LLM_CACHE must be 1 or 0"),
    ({"ARENA_LLM_PROVIDER": "gpt"}, "ARENA_LLM_PROVIDER must be one of 'openai', 'local' or 'fake', got 'gpt'"),
    ({"ARENA_NEURAL_QUANTIZE": "half"}, "ARENA_NEURAL_QUANTIZE must be one of"),
    ({"ARENA_LOG_LEVEL": "loud"}, "ARENA_LOG_LEVEL must be one of"),
])
def test_a_bad_value_is_one_line_naming_the_variable(env, variable):
    with pytest.raises(SettingsError) as caught:
        Settings.from_env(env)
    message = str(caught.value)
    assert variable in message and "\n" not in message


def test_several_bad_values_are_still_one_line():
    with pytest.raises(SettingsError) as caught:
        Settings.from_env({"ARENA_MAX_TURNS": "x", "ARENA_EMBED_THREADS": "-1"})
    message = str(caught.value)
    assert "ARENA_MAX_TURNS" in message and "ARENA_EMBED_THREADS" in message and "\n" not in message


def test_values_are_parsed_and_flags_win_over_the_environment():
    env = {"ARENA_MAX_TURNS": "7", "ARENA_LLM_CACHE": "no", "ARENA_NEURAL_QUANTIZE": "false",
           "ARENA_LOG_LEVEL": "debug", "ARENA_DB": "/tmp/a.sqlite3", "ARENA_LLM_MODEL": ""}
    settings = Settings.from_env(env, max_turns=3, llm_model=None)
    assert settings.max_turns == 3  # the flag
    assert (settings.llm_cache, settings.neural_quantize, settings.log_level) == (False, "0", "DEBUG")
    assert settings.db_path == Path("/tmp/a.sqlite3") and settings.llm_model is None  # empty = unset
    assert settings.models_dir == settings.cache_dir / "models"


def test_direct_construction_ignores_the_environment(monkeypatch):
    monkeypatch.setenv("ARENA_MAX_TURNS", "9")
    assert Settings(db_path=Path("x.sqlite3")).max_turns == 20
    assert Settings.from_env().max_turns == 9


def test_secrets_stay_out_of_repr():
    settings = Settings.from_env({"OPENAI_API_KEY": "sk-do-not-print", "ARENA_PSEUDONYM_SALT": "salty-secret"})
    assert "sk-do-not-print" not in repr(settings) and "salty-secret" not in repr(settings)
    assert settings.openai_api_key.get_secret_value() == "sk-do-not-print"


def _readme_variables() -> list[str]:
    # The settings reference moved from the README to its own page, which holds this one table.
    section = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    return [re.match(r"\| `([A-Z0-9_]+)`", row).group(1) for row in rows]


def test_the_readme_table_documents_every_setting_once():
    documented = _readme_variables()
    assert len(documented) == len(set(documented)), "a variable is listed twice"
    assert set(documented) == set(environment_variables())


def _environment_uses(path: Path) -> list[str]:
    """Lines of `path` that touch the process environment (os.environ, os.getenv, ...)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv", "putenv", "environb"):
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
        elif isinstance(node, ast.ImportFrom) and node.module == "os":
            if any(alias.name in ("environ", "getenv", "environb") for alias in node.names):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_only_the_config_module_reads_the_environment():
    offenders = [
        use
        for package in PRODUCT_PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        if path != CONFIG_MODULE
        for use in _environment_uses(path)
    ]
    assert offenders == []


def test_the_environment_check_finds_what_it_looks_for():
    sample = ROOT / "tests" / "architecture" / "test_settings.py"  # this file touches monkeypatch only
    assert _environment_uses(sample) == []
    assert _environment_uses(CONFIG_MODULE)  # the config module does read it


def test_no_product_module_reaches_for_data_outside_the_repository():
    """Data the product needs is in assets/ (with its origin); nothing falls back to ../shared."""
    offenders = []
    for package in PRODUCT_PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and (
                        node.value == "shared" or "../shared" in node.value):
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == []


def test_a_command_line_reports_a_bad_setting_in_one_line(monkeypatch, capsys):
    from arena.corpus.cli import main

    monkeypatch.setenv("ARENA_MAX_TURNS", "many")
    assert main(["export", "--out", "unused.jsonl"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "error: invalid configuration: ARENA_MAX_TURNS must be an integer, got 'many'"
