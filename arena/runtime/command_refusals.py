"""Refused input ends a command with one clear line, never a traceback.

Command-line tools call `run_refusing(main_body)`: anything the user can get
wrong (a broken or empty file, a path that is a folder, a file that is not a
database, Ctrl-C) becomes one line on stderr and one log line, with exit
status 2 (130 for an interrupt); a corpus file with several problems gets a
line for each under the first. Programming errors still raise.
"""

from __future__ import annotations

import logging
import sqlite3
import sys
from typing import Callable

from arena.corpus.dialoguekit import DialogueImportError
from arena.store import StoreError

log = logging.getLogger("arena.refused")
# Where no logging is set up, Python would print these warnings to stderr itself, under the line
# the person already read; with a handler here they reach only the handlers a program configures.
log.addHandler(logging.NullHandler())

REFUSED = (DialogueImportError, StoreError, sqlite3.DatabaseError, OSError, ValueError)


class InputRefused(ValueError):
    """A refusal raised by our own checks (an id already stored, an output that is a folder...)."""


def one_line(exc: BaseException) -> str:
    """The exception's message squeezed onto one line."""
    text = str(exc) or type(exc).__name__
    if isinstance(exc, OSError) and exc.strerror:
        text = f"{exc.strerror}: {exc.filename}" if exc.filename else exc.strerror
    return " ".join(text.split())


def run_refusing(body: Callable[[], int], *, prog: str = "arena") -> int:
    """Run a command body; refused input and Ctrl-C become one line and an exit status."""
    try:
        return int(body() or 0)
    except KeyboardInterrupt:
        print(f"{prog}: interrupted; no partial output was left", file=sys.stderr)
        log.warning("%s interrupted", prog)
        return 130
    except REFUSED as exc:
        line = one_line(exc)
        if isinstance(exc, DialogueImportError) and len(exc.problems) > 1:
            # A file with several problems: one line for each, so none is lost in a long line.
            head, *problems = exc.lines()
            print(f"error: {head}", file=sys.stderr)
            for problem in problems:
                print(f"  {problem}", file=sys.stderr)
        else:
            print(f"error: {line}", file=sys.stderr)
        log.warning("%s refused input: %s", prog, line)
        return 2


def check_output_file(path) -> None:
    """Refuse an output path that is an existing folder."""
    from pathlib import Path

    if Path(path).is_dir():
        raise InputRefused(f"--out {path} is a folder; give a file name")
