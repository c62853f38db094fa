"""Every heavy import made after start-up holds the one import lock (`arena.runtime.imports.heavy_imports`).

A function-level import of a heavy library, or of a project module that imports one when it loads, may
run in a worker thread at the same moment as another; two threads importing transformers at once broke
the README's first simulated run. Read from the source with `ast`, so a new lazy import outside the lock
fails here, whichever thread would run it.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

from arena.runtime.imports import HEAVY_PACKAGES
from tests.architecture.test_architecture_imports import ROOT, module_name

PACKAGES = ("arena", "crs", "simulators", "evaluators", "webapp")


def _sources() -> dict[str, Path]:
    found = {module_name(p): p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))}
    found["app"] = ROOT / "app.py"
    return found


def _targets(node: ast.Import | ast.ImportFrom, name: str, path: Path, modules: dict[str, Path]) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    base = node.module or ""
    if node.level:
        anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
        base = ".".join(anchor + ([base] if base else []))
    return [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _load_time_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Imports that run when the module loads: at module level, in its `try`/`if` blocks (not under
    TYPE_CHECKING), but not inside functions or classes."""
    found, todo = [], list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        elif isinstance(node, (ast.Try, ast.If, ast.With)) and not _is_type_checking(node):
            todo.extend(child for child in ast.iter_child_nodes(node) if isinstance(child, ast.stmt))
            todo.extend(h for handler in getattr(node, "handlers", []) for h in handler.body)
    return found


def _heavy(target: str, heavy_modules: set[str]) -> bool:
    return target.split(".")[0] in HEAVY_PACKAGES or target in heavy_modules


def heavy_project_modules(modules: dict[str, Path], trees: dict[str, ast.Module]) -> set[str]:
    """Project modules whose loading imports a heavy library, directly or through another such module."""
    loads = {name: {target for node in _load_time_imports(trees[name])
                    for target in _targets(node, name, path, modules)}
             for name, path in modules.items()}
    heavy: set[str] = set()
    grew = True
    while grew:
        grew = False
        for name, targets in loads.items():
            if name not in heavy and any(_heavy(t, heavy) for t in targets):
                heavy.add(name)
                grew = True
    return heavy


def _under_the_lock(ancestors: list[ast.AST]) -> bool:
    return any(isinstance(a, ast.With) and any("heavy_imports" in ast.unparse(item.context_expr)
                                               for item in a.items) for a in ancestors)


def unlocked_heavy_imports() -> list[str]:
    modules = _sources()
    trees = {name: ast.parse(path.read_text(encoding="utf-8")) for name, path in modules.items()}
    heavy = heavy_project_modules(modules, trees)
    found: list[str] = []

    def visit(node: ast.AST, ancestors: list[ast.AST], name: str, path: Path) -> None:
        functions = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
        in_function = any(isinstance(a, functions) for a in ancestors)
        if in_function and isinstance(node, (ast.Import, ast.ImportFrom)) and not _under_the_lock(ancestors):
            names = [t for t in _targets(node, name, path, modules) if _heavy(t, heavy)]
            if names:
                where = f"{path.relative_to(ROOT)}:{node.lineno}"
                found.append(f"{where} imports {', '.join(sorted(set(names)))}")
        for child in ast.iter_child_nodes(node):
            visit(child, [*ancestors, node], name, path)

    for name, tree in trees.items():
        visit(tree, [], name, modules[name])
    return found


def test_every_lazy_heavy_import_holds_the_import_lock():
    assert unlocked_heavy_imports() == []


def test_the_reader_sees_heavy_modules_through_project_modules():
    modules = _sources()
    trees = {name: ast.parse(path.read_text(encoding="utf-8")) for name, path in modules.items()}
    heavy = heavy_project_modules(modules, trees)
    assert "crs.neural.kbrd" in heavy  # imports torch when it loads
    assert "arena.runtime.imports" not in heavy and "arena.catalogs.retrieval" not in heavy  # heavy only inside functions


def test_two_threads_importing_transformers_at_once_under_the_lock():
    """The race the lock closes, in a fresh interpreter (it happens only at the first import): one thread
    imports sentence-transformers (and with it transformers) while the other asks transformers for
    BertConfig, as CRB-CRS's retriever and the act model do in two dialogue threads."""
    script = textwrap.dedent("""
        import threading, time
        from arena.runtime.imports import heavy_imports
        errors = []
        def retriever():
            with heavy_imports():
                from sentence_transformers import SentenceTransformer  # noqa: F401
        def act_model():
            time.sleep(0.2)
            try:
                with heavy_imports():
                    from transformers import BertConfig  # noqa: F401
            except ImportError as exc:
                errors.append(str(exc))
        threads = [threading.Thread(target=retriever), threading.Thread(target=act_model)]
        [t.start() for t in threads]
        [t.join() for t in threads]
        print(errors or "ok")
    """)
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().splitlines()[-1] == "ok", result.stdout
