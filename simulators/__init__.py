"""User simulators for automatic, simulated evaluation of the arena's systems.

Four kinds, one interface (`next_turn(dialogue)` -> `UserTurn | StopDialogue`):

* `llm_us`: LLM-US, an LLM user with a target-free goal (RDL paper).
* `abus`: ABUS, agenda-based with an IARD-derived interaction model (RDL paper).
* `target_biased`: a seeker with target items from iEvaLM's evaluation data.
* `pepper`: target-free with reflected preferences from MovieLens histories (PEPPER).

`build_simulator` makes one simulated user (one dialogue's worth).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable, Optional

from arena.llm import LLMClient
from simulators.base import SimulatedUser
from simulators.catalog_access import CatalogView

KINDS: dict[str, str] = {
    "llm_us": "LLM-US: LLM user with a target-free goal (RDL paper)",
    "abus": "ABUS: agenda-based user, IARD interaction model (RDL paper)",
    "target_biased": "Target-biased seeker with iEvaLM target items",
    "pepper": "Target-free user with reflected MovieLens preferences (PEPPER)",
}
ALIASES = {
    "llm-us": "llm_us", "llmus": "llm_us", "target-biased": "target_biased", "ievalm": "target_biased",
    "target-free": "pepper",
}
NEEDS_LLM = frozenset({"llm_us", "target_biased", "pepper"})


def resolve_kind(kind: str) -> str:
    key = (kind or "").strip().lower()
    key = ALIASES.get(key, key)
    if key not in KINDS:
        raise ValueError(f"unknown simulator {kind!r}; choose one of {', '.join(KINDS)}")
    return key


@lru_cache(maxsize=None)
def catalog_view(dataset: str) -> CatalogView:
    """The shared simulator view of a shipped catalog ("redial" or "opendialkg")."""
    from arena.catalog import load_catalog

    return CatalogView(load_catalog(dataset), dataset=dataset)


def default_system_nlu() -> Callable[[Any], list[str]]:
    """IARD intents of a system utterance, from the offline dialogue-act annotator."""
    from evaluators.acts import offline_annotator

    annotator = offline_annotator()

    def intents(utterance: Any) -> list[str]:
        return [act.intent for act in annotator.annotate_utterance(utterance)]

    return intents


def build_simulator(
    kind: str,
    *,
    catalog: CatalogView,
    seed: int,
    llm: Optional[LLMClient] = None,
    nlu: Optional[Callable[[Any], list[str]]] = None,
    nlg: str = "llm",
    **options: Any,
) -> SimulatedUser:
    """One simulated user. `nlg="template"` makes ABUS run without any LLM."""
    kind = resolve_kind(kind)
    if kind in NEEDS_LLM and llm is None:
        raise ValueError(f"the {kind} simulator needs an LLM client")
    if kind == "llm_us":
        from simulators.llm_us import LLMUserSimulator

        return LLMUserSimulator(catalog, seed=seed, llm=llm, **options)
    if kind == "abus":
        from simulators.abus import AgendaBasedSimulator

        return AgendaBasedSimulator(
            catalog, seed=seed, llm=llm if nlg == "llm" else None, nlu=nlu or default_system_nlu(), **options
        )
    if kind == "target_biased":
        from simulators.target_biased import TargetBiasedSimulator

        return TargetBiasedSimulator(catalog, seed=seed, llm=llm, **options)
    from simulators.pepper import PepperSimulator

    return PepperSimulator(catalog, seed=seed, llm=llm, **options)


__all__ = ["KINDS", "NEEDS_LLM", "SimulatedUser", "build_simulator", "catalog_view", "resolve_kind"]
