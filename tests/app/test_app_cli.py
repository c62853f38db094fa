"""The `crs-arena` command: every subcommand answers --help and forwards to its module command line."""

import sys
import tomllib
from pathlib import Path

import pytest

from webapp import cli

ROOT = Path(__file__).resolve().parents[2]


def run(capsys, *argv):
    try:
        code = cli.main(list(argv))
    except SystemExit as exc:  # argparse exits after --help or a usage error
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err


def test_pyproject_declares_the_console_script_and_the_packages():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["scripts"]["crs-arena"] == "webapp.cli:main"
    found = project["tool"]["setuptools"]["packages"]["find"]["include"]
    assert {"arena*", "crs*", "simulators*", "evaluators*", "webapp*"} <= set(found)


def test_the_overview_lists_every_command(capsys):
    code, out, _ = run(capsys, "--help")
    assert code == 0
    for name in cli.COMMANDS:
        assert f"  {name} " in out


@pytest.mark.parametrize("name", sorted(cli.COMMANDS))
def test_every_command_has_help(capsys, name):
    code, out, err = run(capsys, name, "--help")
    assert code == 0, err
    assert out.startswith("usage:")


def test_arguments_are_forwarded_unchanged(capsys, tmp_path):
    db = tmp_path / "arena.sqlite3"
    source = tmp_path / "in.jsonl"
    source.write_text('{"conversation ID": "c1", "agent": {"id": "kbrd_redial"}, "user": {"id": "u1"}, '
                      '"conversation": [{"participant": "USER", "utterance": "hi"}]}\n', encoding="utf-8")
    code, out, _ = run(capsys, "import", str(source), "--db", str(db))
    assert code == 0 and "imported 1 dialogues" in out
    code, out, _ = run(capsys, "export", "--db", str(db), "--out", str(tmp_path / "out.jsonl"))
    assert code == 0 and "wrote 1 dialogues" in out


def test_unknown_commands_and_no_command_are_usage_errors(capsys):
    code, _, err = run(capsys, "serve-all")
    assert code == 2 and "unknown command 'serve-all'" in err
    code, _, err = run(capsys)
    assert code == 2 and "usage: crs-arena" in err


def test_the_module_forms_remain_aliases():
    import subprocess

    for argv in (["-m", "simulators", "--help"], ["-m", "evaluators", "--help"], ["-m", "arena.corpus", "--help"]):
        done = subprocess.run([sys.executable, *argv], cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0 and done.stdout.startswith("usage:"), done.stderr
