"""The shell commands of README.md and docs/*.md, read from their fenced code blocks.

A block's check is chosen by an HTML comment on the line right before its fence:

    <!-- docs-test: run; creates: out.jsonl data/arena.sqlite3 -->   run each command; the files must exist
    <!-- docs-test: help-only -->    commands that need the network, a GPU, credentials or a long time:
                                     `--help` of the same entry point must work and name every option used
    <!-- docs-test: server -->       the first command is a server: it must answer; the other commands of
                                     the block run against it while it is up
    <!-- docs-test: ci -->           the test command: it must be, verbatim, the one `.ci/run` runs

A shell block without a comment is run (mode `run`), so a new command that fails fails the test; an
unknown mode is an error, never a skip.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHELL_LANGUAGES = {"bash", "sh", "shell", "console"}
MODES = {"run", "help-only", "server", "ci"}
ANNOTATION = re.compile(r"^<!--\s*docs-test:\s*(?P<body>.*?)\s*-->\s*$")


@dataclass
class Block:
    source: str  # "README.md:42"
    mode: str
    commands: list[str]
    creates: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        return f"{self.source} ({self.mode})"


def documentation_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _strip_comment(line: str) -> str:
    """A shell comment starts at a `#` that begins a word (a `#` inside a URL or a word stays)."""
    for match in re.finditer(r"(^|\s)#", line):
        before = line[: match.start()]
        if before.count('"') % 2 == 0 and before.count("'") % 2 == 0:
            return before.rstrip()
    return line.rstrip()


def commands_of(lines: list[str]) -> list[str]:
    """The commands of a block: comments dropped, backslash continuations joined."""
    commands, pending = [], ""
    for raw in lines:
        line = _strip_comment(raw)
        if not line.strip():
            continue
        if line.endswith("\\"):
            pending += line[:-1].strip() + " "
            continue
        commands.append((pending + line.strip()).strip())
        pending = ""
    if pending:
        commands.append(pending.strip())
    return commands


def parse_annotation(text: str, where: str) -> tuple[str, list[str]]:
    parts = [p.strip() for p in text.split(";") if p.strip()]
    mode, creates = parts[0], []
    if mode not in MODES:
        raise ValueError(f"{where}: unknown docs-test mode {mode!r} (known: {', '.join(sorted(MODES))})")
    for part in parts[1:]:
        key, _, value = part.partition(":")
        if key.strip() != "creates" or mode != "run":
            raise ValueError(f"{where}: unknown docs-test option {part!r}")
        creates = value.split()
    return mode, creates


def blocks_of(path: Path) -> list[Block]:
    lines = path.read_text(encoding="utf-8").splitlines()
    name = path.relative_to(ROOT).as_posix()
    blocks, index = [], 0
    while index < len(lines):
        fence = re.match(r"^(```+|~~~+)\s*(\S*)", lines[index])
        if not fence:
            index += 1
            continue
        start, marker, language = index, fence.group(1), fence.group(2).lower()
        end = start + 1
        while end < len(lines) and not lines[end].startswith(marker):
            end += 1
        if language in SHELL_LANGUAGES:
            where = f"{name}:{start + 1}"
            note = ANNOTATION.match(lines[start - 1].strip()) if start > 0 else None
            mode, creates = parse_annotation(note.group("body"), where) if note else ("run", [])
            blocks.append(Block(where, mode, commands_of(lines[start + 1:end]), creates))
        index = end + 1
    return blocks


def all_blocks() -> list[Block]:
    return [block for path in documentation_files() for block in blocks_of(path)]


def without_optional_parts(command: str) -> str:
    """`cmd --a x [--b y]` -> `cmd --a x`: square brackets mark what the reader may leave out."""
    previous = None
    while previous != command:
        previous, command = command, re.sub(r"\s*\[[^\[\]]*\]", "", command)
    return command


def options_named(command: str) -> list[str]:
    """Every option a command uses, optional ones included: `--db`, `-n`."""
    names = []
    for token in re.split(r"[\s\[\]|]+", command):
        match = re.match(r"^(--?[A-Za-z][\w-]*)", token)
        if match:
            names.append(match.group(1))
    return names


def split_environment(words: list[str]) -> tuple[dict[str, str], list[str]]:
    """Leading `VAR=value` words (and `export VAR=value ...`) apart from the program's words."""
    if words and words[0] == "export":
        words = words[1:]
    env = {}
    while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
        key, _, value = words[0].partition("=")
        env[key] = value
        words = words[1:]
    if words[:2] == ["nice", "-n"]:
        words = words[3:]
    return env, words


def help_prefix(words: list[str]) -> list[str]:
    """The entry point and subcommands of a command: `crs-arena ratings import`, `python -m crs download`.

    Subcommands are the bare lower-case words after the program; the first option, placeholder (FILE),
    path or value ends them.
    """
    if words[:2] == ["python", "-m"]:
        prefix, rest = words[:3], words[3:]
    elif words[0] == "python" and len(words) > 1:
        prefix, rest = words[:2], words[2:]
    else:
        prefix, rest = words[:1], words[1:]
    for word in rest:
        if not re.fullmatch(r"[a-z][a-z0-9_-]*", word):
            break
        prefix.append(word)
    return prefix


def shell_words(command: str) -> list[str]:
    return shlex.split(command)
