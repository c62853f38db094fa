"""The data a public leaderboard is computed from: read live, or published from a snapshot at intervals.

With `ARENA_LEADERBOARD_SNAPSHOT_EVERY` at 0 the board is live: the store is
read again when the last read is a few seconds old (so opening the page, which
fills table and plot, costs one read) or when someone presses Refresh. With a
positive interval the store is read at most once per interval, whatever anyone
presses: every board shown (each audience and category) is computed from that
one read, and the page states its time. A public board that moves with every
vote lets a visitor watch the effect of their own votes; one that moves once
an hour does not, and costs one computation an hour.

Boards are computed lazily, one per (audience, category) asked for, and kept
with the read they came from.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable, Optional

import pandas as pd

from arena.dialogue import Dialogue, Vote
from arena.study import OPEN_CROWD
from arena.counting import Participants, Visibility, visibility
from webapp.leaderboard.table import LeaderboardOptions, rank_systems
from webapp.leaderboard.categories import ALL, select

LIVE_CACHE_SECONDS = 5.0  # a live board is read again after this long (or on Refresh)


@dataclass
class StoreRead:
    """Everything the boards need, read from the store at one moment."""

    taken_at: float  # seconds since the epoch
    dialogues: list[Dialogue]
    votes: list[Vote]
    seen: Visibility
    boards: dict[tuple[Optional[str], str], tuple[pd.DataFrame, Any]] = field(default_factory=dict)

    @property
    def taken_at_utc(self) -> datetime:
        return datetime.fromtimestamp(self.taken_at, tz=timezone.utc)

    def slice(self, kind: Optional[str], category: str) -> tuple[list[Dialogue], list[Vote], int]:
        """(dialogues with their countable labels, counted votes, flagged votes left out) of one board.

        The public boards are the open arena's: a study's dialogues and votes count only in its own results
        (`webapp.leaderboard.study_results`), so neither the vote figures nor the correlations see them."""
        open_dialogues, kind_votes = Participants(crowd=OPEN_CROWD, user_kind=kind).select(self.dialogues, self.votes)
        # Hidden dialogues and battles still under way are left out; so are flagged votes. Flagged labels
        # (and those of flagged battles and raters) leave satisfaction (arena.counting).
        dialogues = self.seen.counted_labels(self.seen.dialogues(open_dialogues))
        dialogues, votes = select(category, dialogues, self.seen.votes(kind_votes))
        _, with_flagged = select(category, dialogues, self.seen.votes(kind_votes, include_flagged=True))
        return dialogues, votes, len(with_flagged) - len(votes)


def read_store(store: Any, now: float) -> StoreRead:
    votes = store.list_votes()
    return StoreRead(taken_at=now, dialogues=store.list_dialogues(), votes=votes, seen=visibility(store, votes))


class LeaderboardSnapshots:
    """The current store read and the boards computed from it, renewed per `every_s` (0: live)."""

    def __init__(self, store: Any, options: LeaderboardOptions, *, every_s: float = 0.0,
                 clock: Callable[[], float] = time.time):
        self.store = store
        self.options = options
        self.every_s = every_s
        self.clock = clock
        self._lock = threading.Lock()
        self._read: Optional[StoreRead] = None

    @property
    def live(self) -> bool:
        return self.every_s <= 0

    def current(self, fresh: bool = False) -> StoreRead:
        """The read boards come from; a new one when the last is too old (or, live, when `fresh`)."""
        with self._lock:  # one read at a time; others wait and reuse it
            now = self.clock()
            read = self._read
            max_age = LIVE_CACHE_SECONDS if self.live else self.every_s
            if read is None or now - read.taken_at >= max_age or (fresh and self.live):
                read = self._read = read_store(self.store, now)
            return read

    def board(self, kind: Optional[str], category: str = ALL, fresh: bool = False,
              extra: Optional[Callable[[list[Dialogue]], Any]] = None) -> tuple[pd.DataFrame, Any, StoreRead]:
        """(table, what `extra` makes of the board's dialogues, the read they come from)."""
        read = self.current(fresh)
        with self._lock:
            cached = read.boards.get((kind, category))
            if cached is None:
                dialogues, votes, flagged = read.slice(kind, category)
                table = rank_systems(dialogues, votes, options=self.options)
                table.attrs["votes_counted"] = len(votes)
                table.attrs["votes_flagged"] = flagged
                table.attrs["category"] = category
                cached = read.boards[(kind, category)] = (table, extra(dialogues) if extra else None)
        return cached[0], cached[1], read
