"""The README's first simulated run, five times over, each in a fresh interpreter: no dialogue ends in an
error.

Its dialogues run in two threads at once, and the first one to need the retrieval model and the first
to need the act model import transformers at the same moment; that only happens at a process's first
import, so every repeat is a new process with a new cache folder. Before the import lock
(`arena.runtime.imports`) 3 of 3 such runs stored a dialogue ended by `simulator: ImportError: cannot import name
'BertConfig' from 'transformers'`.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from tests.docs.stored_outcomes import problems_in
from tests.docs.test_docs_commands import BLOCKS, _environment, _run, _workspace

REPEATS = 5


def _first_look_command() -> str:
    (command,) = [c for block in BLOCKS if block.source.startswith("README.md") and block.mode == "run"
                  for c in block.commands if c.startswith("crs-arena simulate run")]
    return command


def _database_of(command: str) -> str:
    words = shlex.split(command)
    return words[words.index("--db") + 1]


@pytest.mark.slow
def test_the_first_look_run_stores_no_errored_dialogue(tmp_path: Path) -> None:
    command = _first_look_command()
    words = shlex.split(command)
    dialogues = int(words[words.index("-n") + 1])
    assert dialogues >= 2 and "--concurrency" not in words  # the default, 4 threads: two dialogues at once
    outcomes = []
    for repeat in range(REPEATS):
        place = tmp_path / f"run-{repeat}"
        place.mkdir()
        work, env = _workspace(place), _environment(place)  # a new cache folder: nothing loaded before
        result = _run(command, work, env)
        problems = problems_in([work / _database_of(command)])
        outcomes.append((result.returncode, problems))
        assert result.returncode == 0 or problems, f"exited {result.returncode}:\n{result.stderr[-3000:]}"
    errored = [(i, rc, problems) for i, (rc, problems) in enumerate(outcomes) if rc or problems]
    assert errored == [], f"{len(errored)} of {REPEATS} runs stored errored dialogues: {errored}"
