"""Warm start: every system a battle can draw and the scorer's act model load, one log line each."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "battle"))

from battle_support import FakeCatalogCRS, fake_spec, make_services  # noqa: E402

from arena.conversation.crs_interface import CRSSpec  # noqa: E402
from crs.registry import CRSRegistry  # noqa: E402
from webapp.warm_start import warm_up  # noqa: E402


class CountingScorer:
    def __init__(self):
        self.loaded = 0

    def load_annotator(self):
        self.loaded += 1


def test_every_drawable_system_and_the_act_model_load_with_a_line_each(tmp_path, caplog):
    loads: list[str] = []
    systems = [FakeCatalogCRS("alpha"), FakeCatalogCRS("beta"), FakeCatalogCRS("gone")]

    def counted(crs, available=True):
        spec = fake_spec(crs, available)
        return CRSSpec(name=spec.name, family=spec.family, dataset=spec.dataset, description=spec.description,
                       load=lambda: loads.append(crs.name) or crs, check=spec.check)

    def broken():
        raise RuntimeError("checkpoint truncated")

    services = make_services(tmp_path, [])
    services.registry = CRSRegistry([counted(systems[0]), counted(systems[1]), counted(systems[2], False),
                                     CRSSpec(name="broken", family="fake", dataset="redial", description="",
                                             load=broken, check=lambda: None)])
    services.scorer = CountingScorer()
    with caplog.at_level(logging.INFO, logger="webapp.warm_start"):
        took = warm_up(services)
    assert loads == ["alpha", "beta"]  # "gone" cannot be drawn; "broken" failed
    assert services.scorer.loaded == 1
    assert set(took) == {"system alpha", "system beta", "act model"}
    messages = [r.getMessage() for r in caplog.records]
    assert any(m.startswith("warm start 1/4: system alpha loaded in") for m in messages)
    assert any("system broken did not load: checkpoint truncated" in m for m in messages)
    assert messages[-1].startswith("warm start done: 3 of 4 models")
    services.registry.get("alpha")  # already loaded: no second load
    assert loads == ["alpha", "beta"]
