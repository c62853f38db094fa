"""The act annotators as intent readers (`arena.conversation.simulator_interface.IntentReader`).

ABUS reads the intents of the system's last utterance; `intent_reader(kind, llm)`
makes that reader from the offline annotator (one instance per process: its
network is large) or from the LLM annotator. ChatCRS and CRB-CRS read the
user's last message with `UserActReader` (the offline annotator, loaded on
first use; when it cannot be loaded their dialogue policy reads the act with
its own rules).
"""

from __future__ import annotations

import logging
from functools import lru_cache
from typing import Optional

from arena.dialogue import Dialogue
from arena.llm import LLMClient
from arena.conversation.simulator_interface import IntentReader
from evaluators.acts.base import AnnotationError
from evaluators.acts.llm import LLMActAnnotator
from evaluators.acts.offline import OfflineActAnnotator


log = logging.getLogger(__name__)


@lru_cache(maxsize=1)
def _offline_annotator() -> OfflineActAnnotator:
    return OfflineActAnnotator()


class OfflineIntentReader:
    """IARD intents of a dialogue's last utterance, from the offline dialogue-act annotator."""

    label = "offline act annotator"

    def __init__(self, annotator: Optional[OfflineActAnnotator] = None):
        self.annotator = annotator or _offline_annotator()

    def __call__(self, dialogue: Dialogue) -> list[str]:
        rows = self.annotator.annotate_intents(dialogue, last_only=True)
        return [str(i) for i in rows[-1][0]] if rows else []


class UserActReader:
    """The user's act for the CRSs' dialogue policy, from the offline act annotator. Returns no
    intents when the model cannot be loaded or fails, so the policy's rules read the message."""

    label = "offline act annotator"

    def __init__(self):
        self._reader: Optional[OfflineIntentReader] = None
        self._broken = False

    def __call__(self, dialogue: Dialogue) -> list[str]:
        if self._broken:
            return []
        try:
            if self._reader is None:
                self._reader = OfflineIntentReader()
            return self._reader(dialogue)
        except Exception as exc:  # the conversation goes on with the rules
            log.warning("act model unavailable for the CRSs' dialogue policy, using its rules: %s", exc)
            self._broken = True
            return []


class LLMIntentReader:
    """IARD intents of a dialogue's last utterance, from the LLM dialogue-act annotator."""

    def __init__(self, llm: LLMClient, fallback: Optional[IntentReader] = None):
        """`fallback` reads the utterance when the model's answer holds no usable intent (a small
        model often writes none): by default the offline annotator, so the simulated dialogue goes
        on instead of failing. `fallbacks` counts those turns."""
        self.annotator = LLMActAnnotator(llm, parallel=1)
        self.label = f"LLM act annotator ({llm.describe()})"
        self._fallback = fallback
        self.fallbacks = 0

    def __call__(self, dialogue: Dialogue) -> list[str]:
        copy = dialogue.model_copy(deep=True)
        for utt in copy.utterances[:-1]:  # only the last utterance is left unannotated
            utt.dialogue_acts = utt.dialogue_acts if utt.dialogue_acts is not None else []
        try:
            annotated = self.annotator.annotate(copy)
        except AnnotationError as exc:
            log.info("LLM act annotator gave no usable intent, the offline annotator reads the turn: %s", exc)
            self.fallbacks += 1
            if self._fallback is None:
                self._fallback = OfflineIntentReader()
            return self._fallback(dialogue)
        return [act.intent for act in annotated.utterances[-1].dialogue_acts or []]


def intent_reader(kind: str, llm: Optional[LLMClient] = None) -> IntentReader:
    """The reader of one kind: "offline" or "llm" (which needs `llm`)."""
    if kind == "offline":
        return OfflineIntentReader()
    if kind == "llm":
        if llm is None:
            raise ValueError("the LLM intent reader needs an LLM client")
        return LLMIntentReader(llm)
    raise ValueError(f"unknown NLU {kind!r}; use 'llm' or 'offline'")
