"""IARD dialogue-act annotation: one interface, an offline and an LLM implementation.

    from evaluators.acts import OfflineActAnnotator, LLMActAnnotator
    annotated = OfflineActAnnotator().annotate(dialogue)   # a copy with dialogue_acts filled

Submodules are imported lazily so that `evaluators.metrics` can use the schema
without loading any model code.
"""

from evaluators.acts.base import ActAnnotator, AnnotationError

__all__ = ["ActAnnotator", "AnnotationError", "LLMActAnnotator", "OfflineActAnnotator"]


def __getattr__(name):
    if name == "OfflineActAnnotator":
        from evaluators.acts.offline import OfflineActAnnotator

        return OfflineActAnnotator
    if name == "LLMActAnnotator":
        from evaluators.acts.llm import LLMActAnnotator

        return LLMActAnnotator
    raise AttributeError(name)
