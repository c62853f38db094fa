"""The product code reaches Gradio only through its public API, read from the source with `ast`.

Public means: the `gradio` package itself (its names in `gradio.__all__`) and the documented
`gradio.themes`. Everything else under `gradio` (`gradio.routes`, `gradio.queueing`,
`gradio.utils`, `gradio.context`, ...) is Gradio's own machinery and changes between releases,
so importing it, or reaching a name that starts with `_` on a Gradio object, would tie the app
to one version. Tests may look inside Gradio; only the product code is scanned.
"""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

import gradio
import pytest

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("arena", "crs", "simulators", "evaluators", "webapp", "scripts", "benchmarks")
PUBLIC_MODULES = {"gradio", "gradio.themes"}
PUBLIC_NAMES = set(gradio.__all__) | {"themes", "__version__"}
# Attributes a `Blocks` object carries that Gradio's documentation does not describe (its docs list the
# constructor's and `launch`'s parameters and the methods): its own bookkeeping of sessions, cached files,
# streams and servers. The names are distinctive enough that no object of the app's own shares them.
UNDOCUMENTED_BLOCKS_ATTRIBUTES = {
    "state_holder", "temp_file_sets", "upload_file_set", "default_config", "pending_streams",
    "pending_diff_streams", "run_history", "node_process", "server_app", "mcp_server_obj",
    "local_api_url", "proxy_urls",
}
# The reaches still made, each with its one file and why: Gradio's per-session store, read in one module
# for the idle-session reaper only (it drops a session's copy of the page's configuration, which no public
# API lets go before `state_session_capacity` newer sessions came; docs/architecture.md says why, and
# tests/safety/test_gradio_session_expiry_gap.py shows it).
KNOWN_REACHES = {("webapp/sessions/gradio_sessions.py", "state_holder")}
# The one module that may use that reach.
STORE_READERS = {"webapp/sessions/idle_sessions.py"}


def product_files() -> list[Path]:
    files = [ROOT / "app.py"]
    for package in PRODUCT:
        files += sorted((ROOT / package).rglob("*.py"))
    return [f for f in files if f.exists()]


def _underscore(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


@lru_cache(maxsize=1)
def gradio_private_names() -> frozenset[str]:
    """Names starting with `_` that Gradio's own source defines: attributes it sets, methods, classes."""
    names: set[str] = set()
    for path in Path(gradio.__file__).parent.rglob("*.py"):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and _underscore(node.attr):
                names.add(node.attr)
            elif (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                  and _underscore(node.name)):
                names.add(node.name)
    return frozenset(names)


def gradio_internals(source: str, gradio_private: frozenset[str]) -> list[str]:
    """Each reach into Gradio's internals in `source`, as `line: what`. An object's type is not known to
    `ast`, so a name Gradio keeps private counts wherever it is reached, except on `self` and `cls`."""
    tree = ast.parse(source)
    found, aliases = _import_reaches(tree)
    for node in ast.walk(tree):
        found += _attribute_reaches(node, aliases, gradio_private)
    return found


def _import_reaches(tree: ast.AST) -> tuple[list[str], set[str]]:
    """The imports of Gradio's private modules and names, and the local names bound to the package."""
    found: list[str] = []
    aliases: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "gradio" or alias.name.startswith("gradio."):
                    if alias.name not in PUBLIC_MODULES:
                        found.append(f"{node.lineno}: import {alias.name}")
                    elif alias.name == "gradio":
                        aliases.add(alias.asname or "gradio")
        elif (isinstance(node, ast.ImportFrom) and node.module and node.level == 0
              and (node.module == "gradio" or node.module.startswith("gradio."))):
            found += _from_import_reaches(node)
    return found, aliases


def _from_import_reaches(node: ast.ImportFrom) -> list[str]:
    found = [f"{node.lineno}: from {node.module} import ..."] if node.module not in PUBLIC_MODULES else []
    for alias in node.names:
        if _underscore(alias.name) or (node.module == "gradio" and alias.name not in PUBLIC_NAMES):
            found.append(f"{node.lineno}: from {node.module} import {alias.name}")
    return found


def _attribute_reaches(node: ast.AST, aliases: set[str], gradio_private: frozenset[str]) -> list[str]:
    """The reaches `node` makes: a private name of the package or of a Gradio object, an undocumented
    attribute of a `Blocks`, by attribute or through `getattr` and its kin."""
    found: list[str] = []
    if isinstance(node, ast.Attribute):
        base = node.value
        on_self = isinstance(base, ast.Name) and base.id in ("self", "cls")
        if isinstance(base, ast.Name) and base.id in aliases:
            if node.attr not in PUBLIC_NAMES:  # e.g. gr.context, gr.utils, gr._something
                found.append(f"{node.lineno}: {base.id}.{node.attr}")
        elif _underscore(node.attr) and node.attr in gradio_private and not on_self:
            found.append(f"{node.lineno}: .{node.attr}")
        if node.attr in UNDOCUMENTED_BLOCKS_ATTRIBUTES:
            found.append(f"{node.lineno}: .{node.attr}")
    elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
          and node.func.id in ("getattr", "setattr", "hasattr", "delattr") and len(node.args) >= 2
          and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)):
        name = node.args[1].value
        if (_underscore(name) and name in gradio_private) or name in UNDOCUMENTED_BLOCKS_ATTRIBUTES:
            found.append(f"{node.lineno}: {node.func.id}(..., {name!r})")
    return found


def _known(path: Path, where: str) -> bool:
    return any(str(path.relative_to(ROOT)) == file and where.endswith((f".{name}", f"{name!r})"))
               for file, name in KNOWN_REACHES)


def test_the_product_code_reaches_no_gradio_internals():
    files = product_files()
    problems = [f"{path.relative_to(ROOT)}:{where}" for path in files
                for where in gradio_internals(path.read_text(encoding="utf-8"), gradio_private_names())
                if not _known(path, where)]
    assert not problems, "Gradio internals reached (use its public API):\n" + "\n".join(problems)


def test_each_known_reach_is_still_made():
    """An entry of KNOWN_REACHES goes once its reach is gone, so that it cannot cover a new one."""
    for file, name in KNOWN_REACHES:
        reaches = gradio_internals((ROOT / file).read_text(encoding="utf-8"), gradio_private_names())
        assert any(_known(ROOT / file, where) for where in reaches), f"{file} no longer reaches {name}"


def test_only_the_idle_sweep_reads_gradios_session_store():
    """The API guard's choice check reads the app's own record (webapp/sessions/session_choices.py)."""
    readers = set()
    for path in product_files():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == "webapp.sessions.gradio_sessions":
                readers.add(str(path.relative_to(ROOT)))
            elif isinstance(node, ast.Import) and any(a.name == "webapp.sessions.gradio_sessions"
                                                      for a in node.names):
                readers.add(str(path.relative_to(ROOT)))
    assert readers == STORE_READERS


OLD_REACHES = [
    ("from gradio.data_classes import _StaticFiles\n", 2),  # a private module, and a private name
    ("from gradio.utils import abspath, is_in_or_equal\n", 1),
    ("from gradio.context import Context\n", 1),
    ("import gradio as gr\nparent = gr.context.Context.block\n", 1),
    ("def f(blocks):\n    return getattr(blocks, '_queue', None)\n", 1),
    ("def f(blocks):\n    return blocks._queue.pending_messages_per_session\n", 1),
    ("import gradio.routes\n", 1),
    ("def f(blocks, path):\n    return any(path in files for files in blocks.temp_file_sets)\n", 1),
    ("def f(blocks):\n    return getattr(blocks, 'state_holder', None)\n", 1),
    ("def f(blocks):\n    with blocks.state_holder.lock:\n        pass\n", 1),
]


@pytest.mark.parametrize("source,reaches", OLD_REACHES)
def test_the_scan_finds_each_kind_of_reach(source, reaches):
    """The reaches the app once made (a private class, Gradio's helpers, its render context, its queue)."""
    assert len(gradio_internals(source, gradio_private_names())) == reaches


def test_the_public_api_passes_the_scan():
    source = ("import gradio as gr\nfrom gradio import Request\nimport gradio.themes\n"
              "with gr.Blocks(delete_cache=(60, 60)) as demo:\n    state = gr.State(time_to_live=60)\n"
              "    demo.unload(lambda: None)\nclass Own:\n    def f(self):\n        return self._queue\n")
    assert gradio_internals(source, gradio_private_names()) == []
