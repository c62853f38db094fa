"""The package layering and the absence of import cycles, read from the source with `ast`.

Every import counts, including those inside functions: a cycle hidden behind a
function-level import is still a cycle.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORE = "arena"
FEATURES = ("crs", "simulators", "evaluators")
APP = "webapp"
PACKAGES = (CORE, *FEATURES, APP)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def project_modules() -> dict[str, Path]:
    return {module_name(p): p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))}


def imported_modules(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules `name` imports (a `from pkg import sub` counts as importing pkg.sub)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
        else:
            continue
        found.update(t for t in targets if t in modules and t != name)
    return found


def import_graph() -> dict[str, set[str]]:
    modules = project_modules()
    return {name: imported_modules(name, path, modules) for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one member (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def package_edges(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = defaultdict(set)
    for name, targets in graph.items():
        for target in targets:
            if target.split(".")[0] != name.split(".")[0]:
                edges[name.split(".")[0]].add(target.split(".")[0])
    return edges


def offenders(graph: dict[str, set[str]], source: str, target: str) -> list[str]:
    return sorted(n for n, ts in graph.items()
                  if n.split(".")[0] == source and any(t.split(".")[0] == target for t in ts))


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return import_graph()


def test_the_cycle_finder_finds_cycles():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_graph_sees_imports_inside_functions(graph):
    assert "evaluators.acts.offline" in graph["evaluators.acts"]  # imported lazily in __getattr__


def test_no_module_imports_itself_through_a_cycle(graph):
    assert cycles(graph) == []


def test_the_core_imports_no_feature_and_no_app(graph):
    for other in (*FEATURES, APP):
        assert offenders(graph, CORE, other) == [], f"arena imports {other}"


def test_nothing_below_the_app_layer_imports_it(graph):
    for feature in FEATURES:
        assert offenders(graph, feature, APP) == [], f"{feature} imports webapp"


def test_simulators_reach_the_act_annotators_only_through_the_core(graph):
    assert offenders(graph, "simulators", "evaluators") == []


def test_no_cycle_between_packages(graph):
    assert cycles(package_edges(graph)) == []


def test_the_app_rules_never_reach_into_the_pages(graph):
    # ui/ only builds and renders pages: sessions, protection, leaderboard, runs and studies' rules
    # are below it, so a rule can be tested and reused without Gradio's page.
    rules = ("webapp.sessions", "webapp.protection", "webapp.leaderboard", "webapp.runs")
    reaching = sorted(f"{n} -> {t}" for n, ts in graph.items() if n.startswith(rules)
                      for t in ts if t.startswith("webapp.ui"))
    assert reaching == []


def test_run_time_code_never_imports_training_code(graph):
    training = ("evaluators.acts.data", "evaluators.acts.training", "evaluators.acts.fine_tuning")
    run_time = ("evaluators.acts.offline", "evaluators.acts.llm", "crs.", "webapp.")
    reaching = sorted(f"{n} -> {t}" for n, ts in graph.items() if n.startswith(run_time)
                      for t in ts if t.startswith(training))
    assert reaching == []
