"""No function in the Gradio pages (`webapp/ui`) is over 110 lines.

A page builder that grows past that mixes many parts of a page with their events; split it into
components that each build one part (see `webapp/ui/chat_layout.py`). Read from the source with `ast`,
so nested handlers count in their builder's length as well as on their own.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.architecture.test_architecture_imports import ROOT

UI = ROOT / "webapp" / "ui"
MAX_LINES = 110
# Builders still waiting to be split, as "path:function" relative to the repository. Keep it to the ones
# named here: a new long builder is split, not listed. An entry that fits the limit fails the test, so
# the list shrinks as each builder is split.
KNOWN_LONG: set[str] = set()  # every builder split so far


def function_lengths(path: Path) -> dict[str, int]:
    """Each function's (and method's) length in lines, from its `def` to its last line, by dotted name."""
    lengths: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            name = prefix
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    lengths[name] = child.end_lineno - child.lineno + 1
                name += "."
            visit(child, name)

    visit(ast.parse(path.read_text(encoding="utf-8")), "")
    return lengths


def _long_functions() -> dict[str, int]:
    found = {}
    for path in sorted(UI.rglob("*.py")):
        where = path.relative_to(ROOT).as_posix()
        for name, length in function_lengths(path).items():
            if length > MAX_LINES:
                found[f"{where}:{name}"] = length
    return found


def test_no_function_in_the_pages_is_over_the_limit():
    too_long = {name: n for name, n in _long_functions().items() if name not in KNOWN_LONG}
    assert not too_long, (f"functions over {MAX_LINES} lines in webapp/ui (split each into components "
                          f"that build one part of the page): {too_long}")


def test_the_known_long_builders_are_still_long():
    fitting = KNOWN_LONG - set(_long_functions())
    assert not fitting, f"now within {MAX_LINES} lines: remove them from KNOWN_LONG: {sorted(fitting)}"


def test_lengths_count_nested_functions_and_methods(tmp_path):
    source = tmp_path / "page.py"
    source.write_text("def build():\n    x = 1\n\n    def on_click():\n        return x\n\n"
                      "    return on_click\n\n"
                      "class Events:\n    def on_send(self):\n        pass\n", encoding="utf-8")
    assert function_lengths(source) == {"build": 7, "build.on_click": 2, "Events.on_send": 2}
