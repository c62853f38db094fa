"""The tabs that fill themselves when opened, or when the page loads, are wired to their own tab and page.

Each builder is handed the `gr.Tab` holding it (and the Evaluate tab its page) by `webapp.serve`, rather than
finding its parent through Gradio's render context: the events must still be there, on the right block.
"""

from __future__ import annotations

import sys
from pathlib import Path

import gradio as gr
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "battle"))

from battle_support import FakeCatalogCRS, make_services

from webapp.serve import build_admin_demo, build_demo


@pytest.fixture
def services(tmp_path):
    svc = make_services(tmp_path, [FakeCatalogCRS("alpha"), FakeCatalogCRS("beta")], max_turns=5)
    yield svc
    svc.store.close()


def triggers(demo: gr.Blocks) -> list[tuple[int, str]]:
    """(block id, event) of every event the page wires, from its public configuration."""
    return [tuple(target) for dep in demo.config["dependencies"] for target in dep["targets"]]


def tab_id(demo: gr.Blocks, label: str) -> int:
    ids = [c["id"] for c in demo.config["components"] if c.get("type") == "tabitem" and c["props"].get("label") == label]
    assert len(ids) == 1, f"one tab labelled {label!r}"
    return ids[0]


def test_the_public_tabs_fill_when_opened(services):
    demo = build_demo(services)
    wired = triggers(demo)
    for label in ("Leaderboard", "Your data"):
        assert (tab_id(demo, label), "select") in wired, label
    assert (tab_id(demo, "Chat"), "select") not in wired  # only the tabs that ask for it


def test_the_researcher_tabs_fill_when_opened_and_the_runs_come_back_on_load(services):
    demo = build_admin_demo(services)
    wired = triggers(demo)
    assert (tab_id(demo, "Moderation"), "select") in wired
    page = demo.config["layout"]["id"]
    assert (page, "load") in wired, "the Evaluate tab picks the latest run again when the page loads"
