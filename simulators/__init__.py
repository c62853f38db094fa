"""User simulators for automatic, simulated evaluation of the arena's systems.

Four kinds, one interface (`next_turn(dialogue)` -> `UserTurn | StopDialogue`):

* `llm_us`: LLM-US, an LLM user with a target-free goal (RDL paper).
* `abus`: ABUS, agenda-based with an IARD-derived interaction model (RDL paper).
* `target_biased`: a seeker with target items from iEvaLM's evaluation data.
* `pepper`: target-free with reflected preferences from MovieLens histories (PEPPER).

`build_simulator` makes one simulated user (one dialogue's worth).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Optional

from arena.llm import LLMClient
from arena.conversation.simulator_interface import IntentReader, IntentReaderFactory
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


_VIEWS: dict[str, CatalogView] = {}
_VIEWS_LOCK = threading.Lock()


def catalog_view(dataset: str) -> CatalogView:
    """The shared simulator view of a shipped catalog ("redial" or "opendialkg"), built once."""
    from arena.catalogs.catalog import load_catalog

    with _VIEWS_LOCK:  # concurrent dialogues of a new run must not each load the catalog
        if dataset not in _VIEWS:
            _VIEWS[dataset] = CatalogView(load_catalog(dataset), dataset=dataset)
        return _VIEWS[dataset]


def build_simulator(
    kind: str,
    *,
    catalog: CatalogView,
    seed: int,
    llm: Optional[LLMClient] = None,
    nlu: Optional[IntentReader | str] = None,
    nlg: str = "llm",
    intent_readers: Optional[IntentReaderFactory] = None,
    movielens_cache_dir: Optional[Path] = None,
    **options: Any,
) -> SimulatedUser:
    """One simulated user.

    ABUS reads system acts with `nlu` ("llm": the LLM annotator, "offline": the offline
    annotator, both made by `intent_readers`; or a reader itself) and writes with `nlg` ("llm" or
    "template"). By default both go through the LLM; `nlg="template"` (with the offline NLU) runs
    without any LLM. PEPPER draws its users from MovieLens-100K, kept under
    `movielens_cache_dir` (the settings' cache folder; fetched there on first use).
    """
    kind = resolve_kind(kind)
    if kind in NEEDS_LLM and llm is None:
        raise ValueError(f"the {kind} simulator needs an LLM client")
    if kind == "llm_us":
        from simulators.llm_us import LLMUserSimulator

        return LLMUserSimulator(catalog, seed=seed, llm=llm, **options)
    if kind == "abus":
        from simulators.abus import AgendaBasedSimulator

        use_llm = nlg == "llm" and llm is not None
        if nlu is None:
            nlu = "llm" if use_llm else "offline"
        if isinstance(nlu, str):
            if nlu not in ("llm", "offline"):
                raise ValueError(f"unknown NLU {nlu!r}; use 'llm' or 'offline'")
            if nlu == "llm" and llm is None:
                raise ValueError("ABUS with LLM NLU needs an LLM client")
            if intent_readers is None:
                raise ValueError(f"ABUS with the {nlu} NLU needs an act annotator (pass intent_readers)")
            nlu = intent_readers(nlu, llm)
        elif not callable(nlu):
            raise ValueError(f"unknown NLU {nlu!r}; use 'llm' or 'offline'")
        return AgendaBasedSimulator(catalog, seed=seed, llm=llm if use_llm else None, nlu=nlu, **options)
    if kind == "target_biased":
        from simulators.target_biased import TargetBiasedSimulator

        return TargetBiasedSimulator(catalog, seed=seed, llm=llm, **options)
    from simulators.pepper import PepperSimulator

    if "profile" not in options and "movielens" not in options:
        if movielens_cache_dir is None:
            raise ValueError("the pepper simulator needs the MovieLens histories (pass movielens_cache_dir)")
        from simulators.movielens import load_movielens

        options["movielens"] = load_movielens(Path(movielens_cache_dir))
    return PepperSimulator(catalog, seed=seed, llm=llm, **options)


__all__ = ["KINDS", "NEEDS_LLM", "SimulatedUser", "build_simulator", "catalog_view", "resolve_kind"]
