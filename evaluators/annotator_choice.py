"""Which act annotator and LLM client a scoring command needs, from its --annotator choice.

Shared by the scoring command line and the bulk scorer's workers.
"""

from __future__ import annotations

from typing import Optional

from arena.runtime.config import Settings
from arena.llm import LLMClient
from evaluators.acts.base import ActAnnotator


def annotator_named(kind: str, client: Optional[LLMClient]) -> Optional[ActAnnotator]:
    if kind == "offline":
        from evaluators.acts.offline import OfflineActAnnotator

        return OfflineActAnnotator()
    if kind == "llm":
        from evaluators.acts.llm import LLMActAnnotator

        return LLMActAnnotator(client)
    return None  # auto: scoring.default_annotator decides


def client_if_needed(metrics: list[str], annotator_kind: str, settings: Settings) -> Optional[LLMClient]:
    needs = "core" in metrics or annotator_kind == "llm" or (
        annotator_kind == "auto" and settings.llm_provider == "openai")
    if not needs:
        return None
    from arena.llm import build_client

    return build_client(settings)
