"""Periodic work runs as jobs of the process's one scheduler (`arena.store.jobs_scheduler.Periodic`), never
as a thread of its own that waits on an event between rounds (`docs/jobs.md`)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def hand_made_loops(source: str) -> list[int]:
    """Lines of `while not <something>.wait(...)` loops: a thread ticking on its own timer."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        test = node.test if isinstance(node, ast.While) else None
        negated = test.operand if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) else None
        if (isinstance(negated, ast.Call) and isinstance(negated.func, ast.Attribute)
                and negated.func.attr == "wait"):
            lines.append(node.lineno)
    return lines


def test_the_scan_finds_a_hand_made_loop():
    assert hand_made_loops("while not stop.wait(1.0):\n    tick()\n") == [1]
    assert hand_made_loops("while not done:\n    tick()\n") == []


def test_no_product_module_keeps_a_periodic_thread_of_its_own():
    found = []
    for package in ("arena", "webapp"):
        for path in sorted((ROOT / package).rglob("*.py")):
            found += [f"{path.relative_to(ROOT)}:{line}" for line in hand_made_loops(path.read_text("utf-8"))]
    assert not found, f"periodic loops outside the scheduler (make them a Periodic job): {found}"
