"""What the tables beside each board read of its dialogues, from the store's compact rows.

The metric-vs-satisfaction table and the metric-vs-rating correlations need,
per dialogue, its system, its audience, its counted label and its automatic
scores: the compact row (`board_dialogues`) and the `scores` rows hold them.
Only a dialogue with aspect ratings (its row counts them) is read whole, for
its ratings and its rated replies. One `ExtraRows` is read per job run;
`board` gives one board's `BoardDialogues`, whose two views feed
`evaluators.meta.meta_rows` and `evaluators.meta_correlations.judged_records`.
The rater agreement (`arena.crowd.agreement`) reads, once per run and for
every board alike, the dialogues that hold aspect ratings or a study's
labelled ones (a replayed dialogue is a study task), people's votes and the
study workers' gold answers (`AgreementRows`).
The evaluators are imported when a view is made: they are an optional part
(the caller shows nothing when they are missing).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np
import pandas as pd

from arena.runtime.imports import heavy_imports
from arena.crowd.study import OPEN_CROWD
from webapp.leaderboard.board_select import StoreFrames

SATISFIED = "satisfied"


@dataclass
class ExtraRows:
    """The rows every board's side tables are made from, read once: the frames (compact rows), each
    dialogue's scores (position -> metric -> value, None when unscored) and the whole dialogues that hold
    aspect ratings (position -> Dialogue)."""

    frames: StoreFrames
    scores: list[dict[str, Optional[float]]]
    documents: dict[int, Any]
    agreement: "AgreementRows" = field(default_factory=lambda: AgreementRows([], [], []))
    _judged: dict[tuple[bytes, Any], np.ndarray] = field(default_factory=dict)

    @classmethod
    def read(cls, store: Any, frames: StoreFrames) -> "ExtraRows":
        d = frames.d
        positions = pd.Index(d["dialogue_id"], dtype=object)
        scores: list[dict[str, Optional[float]]] = [{} for _ in range(len(positions))]
        found = pd.DataFrame(store.board_scores(), columns=["dialogue_id", "metric", "value"])
        if not found.empty:
            where = positions.get_indexer(found["dialogue_id"])
            values = found["value"].astype(object).where(found["value"].notna(), None)
            for p, metric, value in zip(where, found["metric"], values):
                if p >= 0:
                    scores[p][metric] = value
        whole = d["visible"] & (d["crowd"] == OPEN_CROWD) & (d["aspect_ratings"].astype(int) > 0)
        documents = store.board_documents(d["dialogue_id"][whole]) if whole.any() else {}
        return cls(frames, scores, {int(positions.get_loc(i)): doc for i, doc in documents.items()},
                   agreement=AgreementRows.read(store, frames))

    def board(self, dialogue_mask: np.ndarray, rated: np.ndarray) -> "BoardDialogues":
        """The dialogues `dialogue_mask` selects, their labels counted where `rated` (over all rows) says."""
        return BoardDialogues(self, np.flatnonzero(dialogue_mask), rated)

    def judged_all(self, rated: np.ndarray, form: Any) -> np.ndarray:
        """Every dialogue as the correlations read it (`JudgedDialogue`, None for one with neither a score
        nor a judgement: it takes no part), made once per run for each set of counted labels and form."""
        key = (np.packbits(rated).tobytes(), getattr(form, "version", None))
        if key not in self._judged:
            with heavy_imports():
                from evaluators.meta import NOT_METRICS
                from evaluators.meta_correlations import JudgedDialogue, judged

            d = self.frames.d
            out = np.full(len(self.scores), None, dtype=object)
            for p, (crs_id, users, sentiment, scores) in enumerate(zip(d["crs_id"], d["user_kind"], d["sentiment"],
                                                                          self.scores)):
                counted = bool(rated[p]) and isinstance(sentiment, str)
                document = self.documents.get(p)
                if document is not None:
                    if not counted and document.feedback is not None:  # a label the board does not count
                        document = document.model_copy(update={"feedback": None})
                    out[p] = judged(document, form)
                    continue
                metrics = {k: v for k, v in scores.items() if v is not None and k not in NOT_METRICS}
                if metrics or counted:
                    out[p] = JudgedDialogue(crs_id, users, metrics,
                                            {"satisfaction": 1.0 if sentiment == SATISFIED else 0.0} if counted
                                            else {})
            self._judged[key] = out
        return self._judged[key]


@dataclass(frozen=True)
class AgreementRows:
    """What the rater agreement reads: whole dialogues that may share a judge (aspect-rated, or a study's),
    people's votes as (dialogue A, dialogue B, voter, choice), and study participants (gold answers)."""

    dialogues: list[Any]
    votes: list[tuple[str, str, str, Any]]
    participants: list[Any]

    @classmethod
    def read(cls, store: Any, frames: StoreFrames) -> "AgreementRows":
        d, v = frames.d, frames.v
        # A study's labelled dialogues may be replays of a stored one (known-answer tasks): their verdicts.
        labelled_in_study = (d["crowd"] != OPEN_CROWD) & ~pd.isna(d["sentiment"])
        shared = d["visible"] & ((d["aspect_ratings"] > 0) | labelled_in_study)
        dialogues = list(store.board_documents(d["dialogue_id"][shared]).values()) if shared.any() else []
        people = v["visible"] & (v["user_kind"] == "human")
        votes = list(zip(v["dialogue_a"][people].tolist(), v["dialogue_b"][people].tolist(),
                         v["user_id"][people].tolist(), v["choice"][people].tolist()))
        studies = sorted({s for s in d["crowd"].tolist() if s != OPEN_CROWD})
        return cls(dialogues, votes, [p for s in studies for p in store.list_participants(s)])


@dataclass(frozen=True)
class BoardDialogues:
    """One board's dialogues (`positions` in the frames), as the tables beside it read them."""

    rows: ExtraRows
    positions: np.ndarray
    rated: np.ndarray  # over all rows: whose label counts

    def __len__(self) -> int:
        return len(self.positions)

    def meta_entries(self) -> list[tuple[str, Optional[str], dict[str, Optional[float]]]]:
        """(system, counted label or None, metric -> value) per dialogue, for `evaluators.meta.meta_rows`."""
        d, scores, at = self.rows.frames.d, self.rows.scores, self.positions
        labels = np.where(self.rated[at] & ~pd.isna(d["sentiment"][at]), d["sentiment"][at], None)
        return list(zip(d["crs_id"][at].tolist(), labels.tolist(), [scores[p] for p in at.tolist()]))

    def judged(self, form: Any) -> list:
        """The dialogues that take part in the correlations (`evaluators.meta_correlations.JudgedDialogue`)."""
        every = self.rows.judged_all(self.rated, form)[self.positions]
        return [j for j in every if j is not None]
