"""What import-linter's contracts (pyproject.toml `[tool.importlinter]`, run by test_layers.py) cannot say:
no import cycle between any two modules, and none between the three packages of the middle layer, which
the layers contract lets import one another. The graph is grimp's, the one import-linter reads: every
import counts, including those inside functions (a cycle hidden behind a function-level import is still a
cycle).
"""

from __future__ import annotations

from pathlib import Path

import grimp
import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("arena", "crs", "simulators", "evaluators", "webapp")


def module_name(path: Path) -> str:
    """The dotted name of a project file (test_heavy_imports.py reads the files by these names)."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def cycles(graph: nx.DiGraph) -> list[list[str]]:
    return sorted(sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1)


@pytest.fixture(scope="module")
def imports() -> grimp.ImportGraph:
    return grimp.build_graph(*PACKAGES, cache_dir=None)


@pytest.fixture(scope="module")
def module_graph(imports: grimp.ImportGraph) -> nx.DiGraph:
    graph = nx.DiGraph()
    for module in imports.modules:
        graph.add_node(module)
        graph.add_edges_from((module, target) for target in imports.find_modules_directly_imported_by(module))
    return graph


def test_the_cycle_finder_finds_cycles():
    assert cycles(nx.DiGraph([("a", "b"), ("b", "c"), ("c", "a"), ("d", "a")])) == [["a", "b", "c"]]
    assert cycles(nx.DiGraph([("a", "b")])) == []


def test_the_graph_sees_imports_inside_functions(module_graph):
    assert module_graph.has_edge("evaluators.acts", "evaluators.acts.offline")  # lazily, in __getattr__


def test_no_module_imports_itself_through_a_cycle(module_graph):
    assert cycles(module_graph) == []


def test_no_cycle_between_packages(module_graph):
    packages = nx.DiGraph()
    packages.add_edges_from((a.split(".")[0], b.split(".")[0]) for a, b in module_graph.edges
                            if a.split(".")[0] != b.split(".")[0])
    assert cycles(packages) == []
