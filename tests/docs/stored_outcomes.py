"""What a documented command stored, read back: the dialogues that ended in an error, and failed scores.

A command can exit 0 and write its files while the dialogues in them ended in an error (the README's first
simulated run once stored `simulator: ImportError: ...`), so the docs test reads what was written: every
SQLite database and every corpus file (JSON or JSONL) a block created.
"""

from __future__ import annotations

from pathlib import Path

from arena.dialogue import Dialogue

CORPUS_SUFFIXES = (".json", ".jsonl")
DATABASE_SUFFIXES = (".sqlite3", ".sqlite", ".db")


def dialogue_problems(dialogue: Dialogue) -> list[str]:
    """Why `dialogue` is not a clean result: its errors (run, simulator, system turns), an end by error,
    and each score that failed."""
    found = [str(e) for e in dialogue.metadata.get("errors") or []] + dialogue.errors()
    if dialogue.end_reason == "error" and not found:
        found.append("ended in an error")
    found += [f"score {name}: {score.error}" for name, score in sorted(dialogue.scores.items())
              if score.error]
    return [f"{dialogue.dialogue_id}: {' '.join(p.split())[:300]}" for p in found]


def stored_dialogues(path: Path) -> list[Dialogue]:
    """The dialogues of a database or corpus file written by a documented command."""
    if path.suffix in DATABASE_SUFFIXES:
        from arena.store import Store

        with Store(path) as store:
            return store.list_dialogues()
    from arena.corpus.loading import load_dialogues

    return load_dialogues(path)


def problems_in(paths: list[Path]) -> list[str]:
    """`dialogue_problems` of every dialogue in the databases and corpus files among `paths`."""
    found: list[str] = []
    for path in paths:
        if path.suffix in DATABASE_SUFFIXES + CORPUS_SUFFIXES and path.is_file():
            found += [f"{path.name}: {p}" for d in stored_dialogues(path) for p in dialogue_problems(d)]
    return found
