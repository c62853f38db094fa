"""What one board counts, selected from the store's compact rows (`arena.store.board_rows`) as array operations.

The rules are `arena.crowd.counting`'s, the same definitions applied to columns instead of objects
(`shows_dialogue`, `shows_vote`, `vote_counts`, `label_counts`, `Participants.keeps`):
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

from arena.crowd.counting import Participants, label_counts, shows_dialogue, shows_vote, vote_counts
from arena.crowd.rater_check import flagged_by_evidence, label_evidence
from arena.store.board_rows import DIALOGUE_FIELDS, VOTE_FIELDS, BoardRows
from arena.crowd.study import OPEN_CROWD
from webapp.leaderboard.board_data import DIALOGUE_COLUMNS, VOTE_COLUMNS, BoardData
from webapp.leaderboard.categories import ALL, CATEGORIES


# The columns `StoreFrames.board_data` reads.
BOARD_DIALOGUE_COLUMNS = ("dialogue_id", "crs_id", "num_turns", "sentiment", "rdl", "core", "reply_length",
                          "items_shown", "failed")
BOARD_VOTE_COLUMNS = (*VOTE_COLUMNS, "flagged")


def _objects(values: Any) -> np.ndarray:
    return np.asarray(values, dtype=object)


def _columns(rows: list[tuple], fields: tuple[str, ...]) -> dict[str, np.ndarray]:
    columns = list(zip(*rows)) if rows else [()] * len(fields)
    return {f: _objects(column) for f, column in zip(fields, columns)}


@dataclass
class StoreFrames:
    """The compact rows as columns (numpy arrays), with what visibility needs computed once for every board.

    Dialogue ids are turned into row positions once, so a selection is boolean masks and integer lookups."""

    d: dict[str, np.ndarray]  # DIALOGUE_FIELDS, plus `visible` and `label_counts`
    v: dict[str, np.ndarray]  # VOTE_FIELDS in cast order, plus `visible`, `flagged`, `pos_a`, `pos_b`
    # Reads the dialogues whole (id -> Dialogue), for a category whose test needs their text (no `keep_rows`).
    load_dialogues: Optional[Callable[[], dict[str, Any]]] = None
    _whole: dict[str, Any] = field(default_factory=dict)
    _honest: dict[tuple, np.ndarray] = field(default_factory=dict)

    @classmethod
    def of(cls, rows: BoardRows, load_dialogues: Optional[Callable[[], dict[str, Any]]] = None) -> "StoreFrames":
        d = _columns(rows.dialogues, DIALOGUE_FIELDS)
        v = _columns(rows.votes, VOTE_FIELDS)
        d["crowd"] = np.where(pd.isna(d["crowd"]), OPEN_CROWD, d["crowd"])
        v["study"] = np.where(pd.isna(v["study"]), OPEN_CROWD, v["study"])
        v["user_id"] = np.where(pd.isna(v["user_id"]), "anonymous", v["user_id"])
        for column in ("rdl", "core", "reply_length", "items_shown"):
            d[column] = pd.to_numeric(pd.Series(d[column], dtype=object), errors="coerce").to_numpy(dtype=float)
        for column in ("in_battle", "failed", "label_flagged", "num_turns", "aspect_ratings"):
            d[column] = d[column].astype(int)
        ids = pd.Index(d["dialogue_id"], dtype=object)
        v["pos_a"], v["pos_b"] = ids.get_indexer(v["dialogue_a"]), ids.get_indexer(v["dialogue_b"])
        n = len(ids)
        hidden = np.zeros(n + 1, dtype=bool)  # the last slot answers for ids with no row (-1)
        hidden[ids.get_indexer(list(rows.hidden))] = True
        hidden[-1] = False
        voted = np.zeros(n + 1, dtype=bool)
        voted[v["pos_a"]] = voted[v["pos_b"]] = True
        d["visible"] = shows_dialogue(hidden[:n], d["in_battle"].astype(bool), voted[:n])
        v["flagged"] = np.isin(v["vote_id"], _objects(list(rows.flags))) if rows.flags else np.zeros(len(v["vote_id"]), bool)
        hidden_a, hidden_b = hidden[v["pos_a"]], hidden[v["pos_b"]]
        if rows.hidden:  # a vote whose dialogue has no row (deleted) but whose id is hidden
            hidden_ids = set(rows.hidden)
            hidden_a = hidden_a | np.array([x in hidden_ids for x in v["dialogue_a"]], dtype=bool)
            hidden_b = hidden_b | np.array([x in hidden_ids for x in v["dialogue_b"]], dtype=bool)
        v["visible"] = shows_vote(hidden_a, hidden_b)
        in_flagged = np.zeros(n + 1, dtype=bool)
        in_flagged[v["pos_a"][v["flagged"]]] = in_flagged[v["pos_b"][v["flagged"]]] = True
        d["label_counts"] = label_counts(~pd.isna(d["sentiment"]), d["label_flagged"].astype(bool),
                                         in_flagged[:n])
        return cls(d, v, load_dialogues)

    def select(self, *, crowd: Optional[str] = OPEN_CROWD, user_kind: Optional[str] = None,
               left_out_users: frozenset[str] = frozenset(), category: str = ALL) -> tuple[BoardData, int]:
        """(the board's rows, flagged votes left out of it)."""
        dialogue_mask, vote_mask = self.masks(crowd=crowd, user_kind=user_kind, left_out_users=left_out_users,
                                              category=category)
        return self.board_data(dialogue_mask, vote_mask, self.rated(crowd, user_kind, left_out_users))

    def masks(self, *, crowd: Optional[str] = OPEN_CROWD, user_kind: Optional[str] = None,
              left_out_users: frozenset[str] = frozenset(), category: str = ALL) -> tuple[np.ndarray, np.ndarray]:
        """(dialogues on the board, votes on the board, flagged ones included) as boolean masks."""
        if category not in CATEGORIES:
            raise ValueError(f"unknown category {category!r}; one of {', '.join(CATEGORIES)}")
        d, v = self.d, self.v
        whose_d, whose_v = self._whose(crowd, user_kind, left_out_users)
        if category != ALL:
            keep_rows = CATEGORIES[category].keep_rows or self._whole_dialogue_test(category)
            frame = pd.DataFrame({"dialogue_id": pd.Series(d["dialogue_id"], dtype=object),
                                  "crs_id": pd.Series(d["crs_id"], dtype=object), "num_turns": d["num_turns"]})
            whose_d = whose_d & np.asarray(keep_rows(frame), dtype=bool)
            on_board = np.append(whose_d, False)
            whose_v = whose_v & on_board[v["pos_a"]] & on_board[v["pos_b"]]
        return whose_d, whose_v

    def _whose(self, crowd: Optional[str], user_kind: Optional[str],
               left_out_users: frozenset[str]) -> tuple[np.ndarray, np.ndarray]:
        d, v = self.d, self.v
        whose = Participants(crowd=crowd, user_kind=user_kind, left_out_users=frozenset(left_out_users))
        return (d["visible"] & whose.keeps(d["crowd"], d["user_kind"], d["user_id"]),
                v["visible"] & whose.keeps(v["study"], v["user_kind"], v["user_id"]))

    def rated(self, crowd: Optional[str], user_kind: Optional[str], left_out_users: frozenset[str]) -> np.ndarray:
        """Per dialogue: its label counts (not flagged, not in a flagged battle, not from a rater the
        sequential test flags among this crowd's people). Only people's labels are tested, so every audience
        but "simulator" tests the same labels: computed once per crowd."""
        key = (crowd, user_kind == "simulator", left_out_users)
        if key not in self._honest:
            whose_d, _ = self._whose(crowd, user_kind, left_out_users)
            self._honest[key] = self.d["label_counts"] & _honest_raters(self.d, whose_d)
        return self._honest[key]

    def board_columns(self) -> "StoreFrames":
        """The same rows with only the columns `board_data` reads: what a board needs once its masks are
        made, kept without the rest of the rows. Rows read from the store hold one string object per row;
        here equal values share one (a few systems, choices and labels; a vote's dialogue id is its
        dialogue's), which more than halves what the kept columns hold."""
        d = {c: self.d[c] for c in BOARD_DIALOGUE_COLUMNS}
        v = {c: self.v[c] for c in BOARD_VOTE_COLUMNS}
        for columns, names in ((d, ("crs_id", "sentiment")), (v, ("crs_a", "crs_b", "choice", "user_id"))):
            for name in names:
                columns[name] = _one_object_per_value(columns[name])
        for side, position in (("dialogue_a", self.v["pos_a"]), ("dialogue_b", self.v["pos_b"])):
            if len(d["dialogue_id"]):  # -1: no row for that dialogue, its id kept
                v[side] = np.where(position >= 0, d["dialogue_id"][position], v[side])
        return StoreFrames(d, v)

    def board_data(self, dialogue_mask: np.ndarray, vote_mask: np.ndarray, rated: np.ndarray) -> tuple[BoardData, int]:
        d, v = self.d, self.v
        rated = rated[dialogue_mask]
        board = pd.DataFrame({  # text stays object dtype: pandas' string arrays are slow to look up one by one
            "dialogue_id": pd.Series(d["dialogue_id"][dialogue_mask], dtype=object),
            "crs_id": pd.Series(d["crs_id"][dialogue_mask], dtype=object),
            "num_turns": d["num_turns"][dialogue_mask], "rated": rated,
            "satisfied": rated & (d["sentiment"][dialogue_mask] == "satisfied"),
            "rdl": d["rdl"][dialogue_mask], "core": d["core"][dialogue_mask],
            "reply_length": d["reply_length"][dialogue_mask], "items_shown": d["items_shown"][dialogue_mask],
            "failed": d["failed"][dialogue_mask].astype(bool),
        }, columns=DIALOGUE_COLUMNS)
        counted = vote_mask & vote_counts(v["flagged"])
        votes = pd.DataFrame({c: pd.Series(v[c][counted], dtype=object) for c in VOTE_COLUMNS}, columns=VOTE_COLUMNS)
        return BoardData(board, votes), int(vote_mask.sum() - counted.sum())

    def _whole_dialogue_test(self, category: str) -> Callable[[pd.DataFrame], Any]:
        """A category tested on whole dialogues: read once per set of frames, when first needed."""
        if self.load_dialogues is None:
            raise ValueError(f"category {category!r} tests whole dialogues and these rows come without them")
        if not self._whole:
            self._whole.update(self.load_dialogues())
        keep = CATEGORIES[category].keep
        whole = self._whole
        return lambda rows: np.array([i in whole and keep(whole[i]) for i in rows["dialogue_id"]], dtype=bool)


def _one_object_per_value(values: np.ndarray) -> np.ndarray:
    """`values` with equal values as one object (missing ones kept as they are)."""
    codes, uniques = pd.factorize(values)
    if not len(uniques):  # nothing but missing values (or no rows)
        return values
    return np.where(codes >= 0, _objects(uniques)[codes], values)


def _honest_raters(d: dict[str, np.ndarray], whose: np.ndarray) -> np.ndarray:
    """False for the dialogues of raters the sequential test flags (`arena.crowd.rater_check`), testing
    the people's counted labels among the dialogues `whose` selects."""
    labelled = whose & d["label_counts"] & (d["user_kind"] == "human")
    if not labelled.any():
        return np.ones(len(whose), dtype=bool)
    evidence = label_evidence(d["user_id"][labelled], d["crs_id"][labelled],
                                     d["sentiment"][labelled] == "satisfied",
                                     np.where(pd.isna(d["label_at"][labelled]), "", d["label_at"][labelled]))
    flagged = flagged_by_evidence(evidence)  # pooled ids (no session known) are never tested
    if not flagged:
        return np.ones(len(whose), dtype=bool)
    return ~np.isin(d["user_id"], _objects(list(flagged)))
