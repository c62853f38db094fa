"""Everything a session needs, built once per process and passed to the UI.

The Gradio layer receives one `Services` object; nothing in the UI is a
module-level global. Tests build their own `Services` with a fake LLM and
fake systems.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

from arena import retrieval
from arena.config import Settings
from arena.dialogue import Dialogue
from arena.llm import LLMClient, build_client
from arena.llm.budget import budgeted_client
from arena.runner import DialogueRunner
from arena.store import Store
from arena.crs_interface import CRSSpec
from crs.registry import CRSRegistry
from webapp.runs.scorer import BackgroundScorer

log = logging.getLogger(__name__)

UTILITY_METRICS = "acts,rdl,srrr,sr"
# CoRE needs a capable judge: by default it runs only when an endpoint is configured.
ALL_METRICS = UTILITY_METRICS + ",core"


def default_metrics(settings: Settings) -> str:
    return ALL_METRICS if settings.llm_provider == "openai" else UTILITY_METRICS


@dataclass
class Services:
    settings: Settings
    store: Store
    llm: LLMClient
    registry: CRSRegistry
    scorer: Optional[BackgroundScorer] = None
    extras: dict[str, Any] = field(default_factory=dict)

    def runner_for(self, crs_name: str) -> DialogueRunner:
        return DialogueRunner(
            self.registry.get(crs_name),
            max_turns=self.settings.max_turns,
            turn_timeout_s=self.settings.turn_timeout_s,
            max_message_chars=self.settings.max_message_chars,
        )

    def dialogue_finished(self, dialogue: Dialogue) -> None:
        """Persist an ended dialogue and queue its automatic scoring (in the store, so it survives a crash)."""
        self.store.save_dialogue(dialogue)
        try:
            if self.scorer is not None:
                self.scorer.submit(dialogue.dialogue_id)
            else:  # another process's workers will take it
                self.store.enqueue_scoring([dialogue.dialogue_id])
        except Exception:  # scoring must never break the conversation flow
            log.exception("could not queue scoring for %s", dialogue.dialogue_id)

    def close(self) -> None:
        if self.scorer is not None and hasattr(self.scorer, "shutdown"):
            self.scorer.shutdown()


def default_specs(settings: Settings, llm: LLMClient) -> list[CRSSpec]:
    """ChatCRS, CRB-CRS and the neural systems (see `crs.systems`); ChatCRS reads the user's act
    with the learnt act model (its rules when the model cannot be loaded)."""
    from crs.systems import system_specs
    from evaluators.acts.intent_readers import UserActReader

    return system_specs(settings, llm, act_reader=UserActReader())


def build_scorer(settings: Settings, store: Store, llm: LLMClient,
                 metrics: Optional[str] = None) -> Optional[BackgroundScorer]:
    """The durable background scorer, with the settings (so the act annotator follows the endpoint)."""
    if metrics is None:
        metrics = settings.score_metrics or default_metrics(settings)
    names = [m.strip() for m in metrics.split(",") if m.strip()]
    if not names:
        return None
    if settings.scoring_budget:  # scoring's endpoint calls bounded per hour (ARENA_SCORING_BUDGET)
        llm = budgeted_client(llm, settings.scoring_budget)
    return BackgroundScorer(store, names, llm, settings=settings, workers=settings.scorer_workers)


def build_services(
    settings: Optional[Settings] = None,
    *,
    llm: Optional[LLMClient] = None,
    specs: Optional[Iterable[CRSSpec]] = None,
    metrics: Optional[str] = None,
    run_scorer: bool = True,
) -> Services:
    """Everything the app needs. With `run_scorer` (the public app) scoring workers start and resume
    the stored queue; without (the researcher app) finished dialogues are only queued in the store."""
    settings = settings or Settings.from_env()
    retrieval.use_device(settings.device)
    store = Store(settings.db_path)
    llm = llm or build_client(settings)
    registry = CRSRegistry(specs if specs is not None else default_specs(settings, llm))
    scorer = build_scorer(settings, store, llm, metrics) if run_scorer else None
    if scorer is not None:
        scorer.resume()
    return Services(settings=settings, store=store, llm=llm, registry=registry, scorer=scorer)
