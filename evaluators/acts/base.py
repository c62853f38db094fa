"""The interface every dialogue-act annotator implements."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Optional

from arena.dialogue import Dialogue


class AnnotationError(RuntimeError):
    """An annotator could not annotate a dialogue (model failure, unparseable output)."""


class ActAnnotator(ABC):
    """`annotate(dialogue)` returns a copy whose utterances carry IARD dialogue acts.

    Utterances that already have acts keep them unless `overwrite=True`. Every
    utterance it annotates records `label` (name/version) in `acts_annotator`,
    and the copy's metadata["acts_annotator"] records it when anything was
    annotated, so scores computed from the acts can name their source.
    """

    name: str = "annotator"

    @property
    @abstractmethod
    def version(self) -> str:
        """Changes whenever the annotations it produces may change."""

    @property
    def model_label(self) -> Optional[str]:
        """The model behind the annotations (for Score.model), if any."""
        return None

    @property
    def label(self) -> str:
        return f"{self.name}/{self.version}"

    def annotate(self, dialogue: Dialogue, *, overwrite: bool = False) -> Dialogue:
        copy = dialogue.model_copy(deep=True)
        if not copy.utterances:
            return copy
        if overwrite or any(u.dialogue_acts is None for u in copy.utterances):
            todo = [u for u in copy.utterances if overwrite or u.dialogue_acts is None]
            self._annotate_in_place(copy, overwrite)
            for utt in todo:
                if utt.dialogue_acts is not None:
                    utt.acts_annotator = self.label
            copy.metadata["acts_annotator"] = self.label
        return copy

    @abstractmethod
    def _annotate_in_place(self, dialogue: Dialogue, overwrite: bool) -> None:
        """Fill `dialogue_acts` on the utterances (all, or only the missing ones)."""
