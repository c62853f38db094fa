"""What one board counts, selected from the store's compact rows (`arena.store.board_rows`) as array operations.

The rules are `arena.counting`'s, applied to columns instead of objects:
whose data (`Participants`: one crowd, one audience, no left-out users), what
is visible (hidden dialogues and their votes left out, a battle's dialogues
only once its vote is stored, flagged votes left out and counted apart), which
labels count (not flagged, not in a battle whose vote is flagged, not from a
rater the sequential test flags) and the category (`webapp.leaderboard.categories`,
its `keep_rows` test). What comes out is a `BoardData`, ranked by
`webapp.leaderboard.ranking.rank_board`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import numpy as np
import pandas as pd

from arena.rater_sequential_test import POOLED_IDS, flagged_by_evidence, label_evidence
from arena.store.board_rows import DIALOGUE_FIELDS, VOTE_FIELDS, BoardRows
from arena.study import OPEN_CROWD
from webapp.leaderboard.board_data import DIALOGUE_COLUMNS, VOTE_COLUMNS, BoardData
from webapp.leaderboard.categories import ALL, CATEGORIES


@dataclass(frozen=True)
class StoreFrames:
    """The compact rows as frames, with what visibility needs computed once for every board."""

    dialogues: pd.DataFrame  # DIALOGUE_FIELDS, plus `visible` and `label_counts`
    votes: pd.DataFrame  # VOTE_FIELDS in cast order, plus `visible` and `flagged`
    # Reads the dialogues whole (id -> Dialogue), for a category whose test needs their text (no `keep_rows`).
    load_dialogues: Optional[Callable[[], dict[str, Any]]] = None
    _whole: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, rows: BoardRows, load_dialogues: Optional[Callable[[], dict[str, Any]]] = None) -> "StoreFrames":
        d = pd.DataFrame.from_records(rows.dialogues, columns=list(DIALOGUE_FIELDS))
        v = pd.DataFrame.from_records(rows.votes, columns=list(VOTE_FIELDS))
        d["crowd"] = d["crowd"].fillna(OPEN_CROWD)
        v["study"] = v["study"].fillna(OPEN_CROWD)
        v["user_id"] = v["user_id"].fillna("anonymous")
        for column in ("rdl", "core", "reply_length", "items_shown"):
            d[column] = d[column].astype(float)
        hidden = pd.Index(list(rows.hidden), dtype=object)
        voted = pd.Index(pd.unique(np.r_[v["dialogue_a"].to_numpy(), v["dialogue_b"].to_numpy()]), dtype=object)
        d["visible"] = ~d["dialogue_id"].isin(hidden) & (~d["in_battle"].astype(bool) | d["dialogue_id"].isin(voted))
        v["flagged"] = v["vote_id"].isin(pd.Index(list(rows.flags), dtype=object))
        v["visible"] = ~(v["dialogue_a"].isin(hidden) | v["dialogue_b"].isin(hidden))
        flagged_votes = v[v["flagged"]]
        in_flagged_battle = pd.Index(np.r_[flagged_votes["dialogue_a"].to_numpy(), flagged_votes["dialogue_b"].to_numpy()],
                                     dtype=object)
        d["label_counts"] = (d["sentiment"].notna() & ~d["label_flagged"].astype(bool)
                             & ~d["dialogue_id"].isin(in_flagged_battle))
        return cls(d, v, load_dialogues)

    def select(self, *, crowd: Optional[str] = OPEN_CROWD, user_kind: Optional[str] = None,
               left_out_users: frozenset[str] = frozenset(), category: str = ALL) -> tuple[BoardData, int]:
        """(the board's rows, flagged votes left out of it)."""
        if category not in CATEGORIES:
            raise ValueError(f"unknown category {category!r}; one of {', '.join(CATEGORIES)}")
        keep_rows = CATEGORIES[category].keep_rows or self._whole_dialogue_test(category)
        d, v = self.dialogues, self.votes
        whose_d = d["visible"].to_numpy().copy()
        whose_v = v["visible"].to_numpy().copy()
        if crowd is not None:
            whose_d &= (d["crowd"] == crowd).to_numpy()
            whose_v &= (v["study"] == crowd).to_numpy()
        if user_kind is not None:
            whose_d &= (d["user_kind"] == user_kind).to_numpy()
            whose_v &= (v["user_kind"] == user_kind).to_numpy()
        if left_out_users:
            out = pd.Index(list(left_out_users), dtype=object)
            whose_d &= ~d["user_id"].isin(out).to_numpy()
            whose_v &= ~v["user_id"].isin(out).to_numpy()
        dialogues = d[whose_d]
        rated = dialogues["label_counts"].to_numpy() & _honest_raters(dialogues)
        if category != ALL:
            in_category = keep_rows(dialogues).to_numpy(dtype=bool)
            dialogues, rated = dialogues[in_category], rated[in_category]
            ids = pd.Index(dialogues["dialogue_id"])
            whose_v &= (v["dialogue_a"].isin(ids) & v["dialogue_b"].isin(ids)).to_numpy()
        votes = v[whose_v]
        counted = votes[~votes["flagged"].to_numpy()]
        board = pd.DataFrame({
            "dialogue_id": dialogues["dialogue_id"].to_numpy(), "crs_id": dialogues["crs_id"].to_numpy(),
            "num_turns": dialogues["num_turns"].to_numpy(), "rated": rated,
            "satisfied": rated & (dialogues["sentiment"] == "satisfied").to_numpy(),
            "rdl": dialogues["rdl"].to_numpy(), "core": dialogues["core"].to_numpy(),
            "reply_length": dialogues["reply_length"].to_numpy(), "items_shown": dialogues["items_shown"].to_numpy(),
            "failed": dialogues["failed"].astype(bool).to_numpy(),
        }, columns=DIALOGUE_COLUMNS)
        return BoardData(board, counted[VOTE_COLUMNS].reset_index(drop=True)), len(votes) - len(counted)


    def _whole_dialogue_test(self, category: str) -> Callable[[pd.DataFrame], pd.Series]:
        """A category tested on whole dialogues: read once per set of frames, when first needed."""
        if self.load_dialogues is None:
            raise ValueError(f"category {category!r} tests whole dialogues and these rows come without them")
        if not self._whole:
            self._whole.update(self.load_dialogues())
        keep = CATEGORIES[category].keep
        whole = self._whole
        return lambda rows: pd.Series([i in whole and keep(whole[i]) for i in rows["dialogue_id"]], dtype=bool)


def _honest_raters(dialogues: pd.DataFrame) -> np.ndarray:
    """False for the labels of raters the sequential test flags (`arena.rater_sequential_test`), among the
    people's counted labels of these dialogues."""
    labelled = dialogues[dialogues["label_counts"].to_numpy() & (dialogues["user_kind"] == "human").to_numpy()]
    if labelled.empty:
        return np.ones(len(dialogues), dtype=bool)
    evidence = label_evidence(zip(labelled["user_id"], labelled["crs_id"], labelled["sentiment"] == "satisfied",
                                  labelled["label_at"].fillna("")))
    flagged = flagged_by_evidence(evidence) - POOLED_IDS
    if not flagged:
        return np.ones(len(dialogues), dtype=bool)
    return ~dialogues["user_id"].isin(pd.Index(list(flagged), dtype=object)).to_numpy()
