"""Every system the arena offers, as registry specs.

The app, the simulators and `python -m crs` all build their registry from
`system_specs`, so a system added here appears everywhere at once. The
systems of ARENA_SYSTEMS (`crs.external`) join the built-ins here.
"""

from __future__ import annotations

import logging
from typing import Optional

from arena.runtime.config import Settings
from arena.conversation.crs_interface import CRSSpec
from arena.runtime.imports import heavy_imports
from arena.llm import LLMClient
from arena.conversation.simulator_interface import IntentReader

log = logging.getLogger(__name__)


def system_specs(settings: Settings, llm: LLMClient, act_reader: Optional[IntentReader] = None) -> list[CRSSpec]:
    """ChatCRS, CRB-CRS and the neural systems (whose checks report missing checkpoints), then
    the systems of ARENA_SYSTEMS (a bad file raises SystemsFileError, one line). `act_reader`
    reads the user's act for ChatCRS (the app passes the learnt act model's; None: its rules);
    CRB-CRS always uses the rules."""
    specs = builtin_specs(settings, llm, act_reader)
    return specs + external_system_specs(settings, frozenset(spec.name for spec in specs))


def external_system_specs(settings: Settings, builtin_names: frozenset[str]) -> list[CRSSpec]:
    from crs.external.specs import external_specs

    return external_specs(settings, builtin_names)


def builtin_specs(settings: Settings, llm: LLMClient, act_reader: Optional[IntentReader] = None) -> list[CRSSpec]:
    """The systems shipped with the arena."""
    with heavy_imports():
        from crs.chatcrs import chatcrs_specs
    from crs.crb_crs import crb_crs_specs

    specs = list(chatcrs_specs(lambda: llm, settings.cache_dir, embed_threads=settings.embed_threads,
                               act_reader=act_reader))
    # CRB-CRS reads acts by rules: its turn takes about 0.06 s, and the act model would add 0.03-0.05 s
    # (BENCHMARKS.md, Offline conversations: the rules score the same on its conversations).
    specs.extend(crb_crs_specs(lambda: llm, settings.cache_dir))
    try:
        from crs.neural import neural_specs
    except ImportError as exc:  # the neural stack needs torch; the app works without it
        log.warning("neural CRSs not offered: %s", exc)
    else:
        specs.extend(neural_specs(settings))
    return specs
