"""docs/architecture.md names real code: every module, folder and dotted module it cites exists.

A map that names a module after it was renamed or removed sends a newcomer to nothing; this fails instead.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAP = ROOT / "docs" / "architecture.md"
PACKAGES = ("arena", "crs", "simulators", "evaluators", "webapp")

# `arena/store/engine.py`, `crs/recommender/`, `tests/architecture/...`: a path from the repository root.
PATH = re.compile(r"(?<![\w/.-])((?:arena|crs|simulators|evaluators|webapp|tests|assets)/[\w/]*(?:\.py|/)?)")
# `arena.corpus.bundle.export_bundle`: a module, then perhaps a name inside it.
DOTTED = re.compile(r"(?<![\w/.-])((?:" + "|".join(PACKAGES) + r")(?:\.\w+)+)")


def cited_paths(text: str) -> set[str]:
    return set(PATH.findall(text))


def cited_modules(text: str) -> set[str]:
    return set(DOTTED.findall(text))


def defined_names(source: Path) -> set[str]:
    """The names a module defines or imports at its top level."""
    names: set[str] = set()
    for node in ast.parse(source.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def module_exists(dotted: str) -> bool:
    """`dotted` is a module or package (at least `package.module`), or a name its module defines."""
    parts = dotted.split(".")
    for k in range(len(parts), 1, -1):
        base = ROOT.joinpath(*parts[:k])
        source = base.with_suffix(".py") if base.with_suffix(".py").is_file() else base / "__init__.py"
        if source.is_file():
            return k == len(parts) or parts[k] in defined_names(source)
    return False


def test_every_path_the_map_cites_exists() -> None:
    text = MAP.read_text(encoding="utf-8")
    paths = cited_paths(text)
    assert len(paths) > 30  # the reader found the map's paths, not a handful
    assert sorted(p for p in paths if not (ROOT / p).exists()) == []


def test_every_dotted_module_the_map_cites_exists() -> None:
    modules = cited_modules(MAP.read_text(encoding="utf-8"))
    assert modules
    assert sorted(m for m in modules if not module_exists(m)) == []


def test_the_reader_catches_a_module_that_is_gone() -> None:
    text = "see `arena/no_such_module.py`, `arena.conversation.runner.DialogueRunner` and `arena.no_such.thing` (data/arena.db)"
    assert cited_paths(text) == {"arena/no_such_module.py"}
    assert not (ROOT / "arena/no_such_module.py").exists()
    assert cited_modules(text) == {"arena.conversation.runner.DialogueRunner", "arena.no_such.thing"}
    assert module_exists("arena.conversation.runner.DialogueRunner")
    assert not module_exists("arena.no_such.thing")
    assert not module_exists("arena.conversation.runner.NoSuchRunner")  # the module is there, the name is not
    assert not module_exists("webapp.sessions.no_such_module")
