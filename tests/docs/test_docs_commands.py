"""Every shell command of README.md and docs/*.md is run or checked, so none goes stale.

How each block is checked is said by a comment before it (see `doc_blocks`); a block without one is run
as written, in a scratch folder that sees the repository's files, with a temporary database and cache.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from tests.docs.doc_blocks import (
    ROOT,
    Block,
    all_blocks,
    help_prefix,
    options_named,
    shell_words,
    split_environment,
    without_optional_parts,
)
from tests.docs.stored_outcomes import problems_in

BLOCKS = all_blocks()
COMMAND_TIMEOUT_S = 240
SERVER_START_S = 150


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _workspace(tmp_path: Path) -> Path:
    """A folder holding links to the repository's entries, so relative paths in the docs resolve,
    while what a command writes (data/, output files) lands in the folder and not in the checkout."""
    work = tmp_path / "work"
    work.mkdir()
    for entry in ROOT.iterdir():
        if entry.name in {".git", "data"} or entry.name.startswith(".pytest"):
            continue
        (work / entry.name).symlink_to(entry)
    return work


def _environment(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        PYTHONPATH=str(ROOT) + os.pathsep + env.get("PYTHONPATH", ""),
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        ARENA_CACHE_DIR=str(tmp_path / "cache"),
        ARENA_WARM_START="0",
        GRADIO_ANALYTICS_ENABLED="False",
    )
    for name in ("ARENA_DB", "ARENA_PORT", "ARENA_ADMIN_USERS", "OPENAI_BASE_URL", "OPENAI_API_KEY", "ARENA_SYSTEMS"):
        env.pop(name, None)
    return env


def _run(command: str, cwd: Path, env: dict[str, str], timeout: float = COMMAND_TIMEOUT_S) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


def _known_variable(name: str) -> bool:
    """A variable the docs set must be one the code reads: a `Settings` field (or alias) or a name
    some project module uses."""
    from arena.runtime.config import Settings

    config_text = (ROOT / "arena" / "runtime" / "config.py").read_text()
    if f'"{name}"' in config_text or name.lower().removeprefix("arena_") in Settings.model_fields:
        return True
    for package in ("arena", "crs", "simulators", "evaluators", "webapp", "tests"):
        for path in (ROOT / package).rglob("*.py"):
            if name in path.read_text(encoding="utf-8", errors="replace"):
                return True
    return False


def _check_help(command: str, cwd: Path, env: dict[str, str]) -> None:
    variables, words = split_environment(shell_words(command))
    unknown = [name for name in variables if not _known_variable(name)]
    assert not unknown, f"{command!r} sets variables no code reads: {unknown}"
    if not words:
        return
    prefix = help_prefix(words)
    result = _run(" ".join(prefix + ["--help"]), cwd, env, timeout=120)
    assert result.returncode == 0, f"{' '.join(prefix)} --help failed:\n{result.stderr[-2000:]}"
    text = result.stdout + result.stderr
    missing = [name for name in options_named(" ".join(words[len(prefix):]))
               if not re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text)]
    assert not missing, f"{command!r}: {' '.join(prefix)} --help names no {missing}"


def _wait_for_answer(url: str, process: subprocess.Popen, deadline: float) -> None:
    while time.monotonic() < deadline:
        if process.poll() is not None:
            output = process.stdout.read() if process.stdout else ""
            pytest.fail(f"the server exited with status {process.returncode}:\n{output[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(1)
    pytest.fail(f"no answer from {url} within {SERVER_START_S} s")


def _check_server(block: Block, cwd: Path, env: dict[str, str]) -> None:
    server, *clients = block.commands
    port = _free_port()
    # The docs show the default port; the test takes a free one so a busy port cannot fail it.
    server = re.sub(r"--port \d+", f"--port {port}", without_optional_parts(server))
    clients = [re.sub(r"(localhost|127\.0\.0\.1):\d+", rf"\1:{port}", c) for c in clients]
    env = dict(env, ARENA_PORT=str(port))
    process = subprocess.Popen(["bash", "-c", f"exec {server}"], cwd=cwd, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        _wait_for_answer(f"http://127.0.0.1:{port}/" + ("health" if "serve-crs" in server else ""),
                         process, time.monotonic() + SERVER_START_S)
        for client in clients:
            result = _run(without_optional_parts(client), cwd, env, timeout=60)
            assert result.returncode == 0 and result.stdout.strip(), \
                f"{client!r} against the server gave {result.returncode}:\n{result.stdout}{result.stderr}"
    finally:
        _stop(process)


def _stop(process: subprocess.Popen) -> None:
    """Ends the server and whatever it started (it leads its own process group)."""
    for sig, wait_s in ((signal.SIGTERM, 20), (signal.SIGKILL, None)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            break
        try:
            process.wait(timeout=wait_s)
            break
        except subprocess.TimeoutExpired:
            continue
    process.wait()


def _ci_command() -> str:
    lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    return [line for line in lines if line and not line.startswith("#")][-1]


def _ci_setup_command() -> str:
    """The set-up line of `.ci/run` (continuations joined, pip's `-q` left out)."""
    text = (ROOT / ".ci" / "run").read_text().replace("\\\n", " ")
    (line,) = [line for line in text.splitlines()
               if "requirements-models.txt" in line and not line.startswith("#")]
    return " ".join(word for word in line.split() if word != "-q")


def test_ci_runs_the_readme_setup_command() -> None:
    """CI sets up as a newcomer does: the README's set-up block, `crs-arena prepare` included."""
    (setup,) = [b for b in BLOCKS
                if b.source.startswith("README.md") and "requirements-models.txt" in b.commands[0]]
    assert setup.commands == [_ci_setup_command()]
    assert setup.commands[0].endswith("&& crs-arena prepare")


@pytest.mark.parametrize("block", BLOCKS, ids=str)
def test_documented_commands(block: Block, tmp_path: Path) -> None:
    assert block.commands, f"{block}: a shell block with no command"
    work, env = _workspace(tmp_path), _environment(tmp_path)
    if block.mode == "ci":
        assert block.commands == [_ci_command()], f"{block} is not the command .ci/run runs"
    elif block.mode == "help-only":
        for command in block.commands:
            for part in re.split(r"\s+&&\s+", command):  # each command of a chain (the set-up's `prepare`)
                _check_help(part, work, env)
    elif block.mode == "server":
        _check_server(block, work, env)
    else:
        for command in block.commands:
            result = _run(without_optional_parts(command), work, env)
            assert result.returncode == 0, f"{command!r} exited {result.returncode}:\n{result.stderr[-3000:]}"
        # A command that exits 0 and writes nothing is as stale as one that fails.
        for name in block.creates:
            path = work / name
            assert path.exists() and path.stat().st_size > 0, f"{block}: {name} was not written"
        # ... and so is one whose stored dialogues ended in an error or whose scores failed.
        written = [work / name for name in block.creates]
        if (work / "data").is_dir():
            written += sorted(p for p in (work / "data").glob("*") if p.is_file())
        problems = problems_in(written)
        assert not problems, f"{block} stored dialogues that ended in an error:\n" + "\n".join(problems[:20])


def test_every_page_and_mode_is_seen() -> None:
    """The reader finds the blocks this suite relies on (a parsing slip would otherwise pass quietly)."""
    modes = {block.mode for block in BLOCKS}
    assert {"run", "help-only", "server", "ci"} <= modes
    assert any(block.source.startswith("docs/") for block in BLOCKS)


def test_reader_of_blocks(tmp_path: Path, monkeypatch) -> None:
    """Annotations, comments, continuations and optional parts are read as the module says; an unknown
    mode stops the test instead of passing the block by."""
    import tests.docs.doc_blocks as doc_blocks

    page = tmp_path / "page.md"
    page.write_text(
        "<!-- docs-test: run; creates: out.jsonl -->\n```bash\n# a comment\ncrs-arena export \\\n"
        "    --out out.jsonl   # trailing\n```\n\n```yaml\nnot: a command\n```\n"
        "<!-- docs-test: maybe -->\n```bash\nfalse\n```\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(doc_blocks, "ROOT", tmp_path)
    with pytest.raises(ValueError, match="unknown docs-test mode 'maybe'"):
        doc_blocks.blocks_of(page)
    page.write_text(page.read_text().split("<!-- docs-test: maybe")[0], encoding="utf-8")
    (block,) = doc_blocks.blocks_of(page)
    assert (block.mode, block.commands, block.creates) == ("run", ["crs-arena export --out out.jsonl"], ["out.jsonl"])
    assert without_optional_parts("crs-arena meta --input x [--json OUT] [--a [--b]]") == "crs-arena meta --input x"
    assert options_named("crs-arena score --db p [--all|--force] -n 2") == ["--db", "--all", "--force", "-n"]
    assert help_prefix(["crs-arena", "ratings", "import", "FILE", "--db", "p"]) == ["crs-arena", "ratings", "import"]


def test_the_run_check_reads_errors_out_of_what_was_stored(tmp_path: Path) -> None:
    """The check after a `run` block finds a dialogue that ended in an error in the database and in its
    export (the README's first simulated run once exited 0 with one), and a failed score in a scored file."""
    from arena.dialogue import Dialogue, UserInfo, UserKind
    from arena.store import Store

    db = tmp_path / "arena.sqlite3"
    with Store(db) as store:
        broken = Dialogue(dialogue_id="run-1-x-0000", crs_id="crb_crs_redial",
                          user=UserInfo(kind=UserKind.SIMULATOR, id="sim-abus-0"),
                          metadata={"errors": ["simulator: ImportError: cannot import name 'BertConfig'"]})
        broken.end("error")
        store.save_dialogue(broken)
    corpus = tmp_path / "corpus.jsonl"
    exported = _run(f"crs-arena export --out {corpus} --db {db}", tmp_path, _environment(tmp_path))
    assert exported.returncode == 0, exported.stderr
    assert problems_in([db, corpus]) == [
        f"{name}: run-1-x-0000: simulator: ImportError: cannot import name 'BertConfig'"
        for name in ("arena.sqlite3", "corpus.jsonl")]
    scored = tmp_path / "scored.jsonl"
    _run(f"crs-arena score --input {corpus} --metrics recall --out {scored}", tmp_path,
         _environment(tmp_path))
    assert any("score recall: no target items" in p for p in problems_in([scored]))
