"""Warm start: load every model the first visitors need before the app reports ready.

Models load lazily on first use; with several people arriving at once the first
turns waited for them (up to 24 s with 16 sessions). `warm_up` loads, one after
the other with a progress line each: every system a battle can draw (ChatCRS
loads the offline recommender and its catalog, CRB-CRS its retrieval index, the
neural systems their checkpoints), the in-process LLM when that is the
provider, and the act model of the background scorer. A model that fails to
load is logged and left to fail, as before, on first use; warming never stops
the app from starting.
"""

from __future__ import annotations

import logging
import time
from typing import Callable, Optional

from webapp.services import Services

log = logging.getLogger(__name__)


def _steps(services: Services) -> list[tuple[str, Callable[[], object]]]:
    steps: list[tuple[str, Callable[[], object]]] = [
        (f"system {name}", lambda name=name: services.registry.get(name)) for name in services.registry.available()
    ]
    if services.settings.llm_provider == "local" and hasattr(services.llm.provider, "engine"):
        steps.append((f"local LLM {services.settings.llm_model_name}", lambda: services.llm.provider.engine))
    scorer = services.scorer
    if scorer is not None and hasattr(scorer, "load_annotator"):
        steps.append(("act model of the scorer", scorer.load_annotator))
    return steps


def warm_up(services: Services, *, report: Optional[Callable[[str], None]] = None) -> dict[str, float]:
    """Load every model; returns seconds per step that loaded (failures are logged and left out)."""
    report = report or log.info
    steps = _steps(services)
    took: dict[str, float] = {}
    started_all = time.monotonic()
    for i, (label, load) in enumerate(steps, 1):
        started = time.monotonic()
        try:
            load()
        except Exception as exc:  # it will fail (and say why) on first use instead
            log.warning("warm start %d/%d: %s did not load: %s", i, len(steps), label, exc)
            continue
        took[label] = time.monotonic() - started
        report(f"warm start {i}/{len(steps)}: {label} loaded in {took[label]:.1f} s")
    report(f"warm start done: {len(took)} of {len(steps)} models in {time.monotonic() - started_all:.1f} s")
    return took
