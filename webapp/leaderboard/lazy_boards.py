"""The counting-option boards of every category, each computed the first time a page asks for it.

The background job (`webapp.leaderboard.snapshot`) computes every default board and, for the whole arena
(category All), the boards under the counting options (`vote_counting.COUNTING_VARIANTS`). Computing the
options of every other category at each refresh as well would make the refresh several times longer for
boards few visitors open. So the job keeps what one such board needs (`BoardSource`: the columns
`StoreFrames.board_data` reads, and each board's rows as packed masks) and `LazyBoards` ranks a board the
first time it is asked for, on one low-priority worker thread. The result is kept, at most `CACHE_SIZE`
boards, until the job publishes its next result: the job then closes the old `LazyBoards`, which drops its
boards and its rows (a board is never served from older rows than the page's other boards).
"""

from __future__ import annotations

import dataclasses
import os
import threading
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Optional

import numpy as np
import pandas as pd
from cachetools import LRUCache

from webapp.leaderboard.board_data import BoardData
from webapp.leaderboard.board_select import StoreFrames
from webapp.leaderboard.ranking import LeaderboardOptions, rank_board
from webapp.leaderboard.vote_counting import COUNTING_VARIANTS

# Boards kept per published result. A board is a few rows per system (kilobytes); the bound keeps a
# registry of many categories from growing the cache without limit.
CACHE_SIZE = 32
WORKER_NICENESS = 19  # the worker's scheduling priority (Linux niceness), as the job's own thread

BoardKey = tuple[Optional[str], str]  # (audience, category)
Counting = tuple[bool, str]  # (first votes only, tie rule)
PackedMasks = tuple[bytes, bytes, bytes]  # dialogues, votes, dialogues whose label counts (np.packbits)


def variant_board(data: BoardData, flagged: int, options: LeaderboardOptions, counting: Counting,
                  category: str) -> pd.DataFrame:
    """One board under a counting option, without style control (its bootstrap is the costly part; the
    default board has it)."""
    first, ties = counting
    table = rank_board(data, options=dataclasses.replace(options, first_votes_only=first, ties=ties,
                                                         style_control=False))
    table.attrs.update(votes_counted=len(data.votes), votes_flagged=flagged, category=category)
    return table


def _unpack(packed: bytes, n: int) -> np.ndarray:
    return np.unpackbits(np.frombuffer(packed, dtype=np.uint8), count=n).astype(bool)


@dataclass(frozen=True)
class BoardSource:
    """What the counting boards of one published result are computed from: the rows' board columns and,
    per (audience, category), the packed masks of its rows, as the job selected them."""

    frames: StoreFrames
    masks: dict[BoardKey, PackedMasks]
    options: LeaderboardOptions

    def rows_of(self, kind: Optional[str], category: str) -> PackedMasks:
        if (kind, category) not in self.masks:
            raise ValueError(f"no board for audience {kind!r} and category {category!r}")
        return self.masks[(kind, category)]

    def board(self, kind: Optional[str], category: str, counting: Counting) -> pd.DataFrame:
        """The board of `kind` and `category` counted as `counting` (`COUNTING_VARIANTS`)."""
        if counting not in COUNTING_VARIANTS:
            raise ValueError(f"unknown counting {counting!r}")
        dialogues, votes, rated = self.rows_of(kind, category)
        n_dialogues, n_votes = len(self.frames.d["dialogue_id"]), len(self.frames.v["vote_id"])
        dialogue_mask = _unpack(dialogues, n_dialogues)
        data, flagged = self.frames.board_data(dialogue_mask, _unpack(votes, n_votes),
                                               _unpack(rated, n_dialogues))
        return variant_board(data, flagged, self.options, counting, category)


class Superseded(Exception):
    """The result these boards belong to was replaced by a newer one: ask the newer one."""


class LazyBoards:
    """The counting boards of one published result, each computed once when first asked for (two pages
    asking at once wait for the same computation) and kept until `close`."""

    def __init__(self, source: BoardSource):
        self._source: Optional[BoardSource] = source
        # Re-entrant: a computation that ends before its callback is added runs the callback at once, on
        # the thread that holds the lock.
        self._lock = threading.RLock()
        self._boards: LRUCache = LRUCache(maxsize=CACHE_SIZE)
        self._running: dict[tuple, Future] = {}

    def _key(self, source: BoardSource, kind: Optional[str], category: str, counting: Counting) -> tuple:
        # Boards that select the same rows are one computation (everyone's = people's while no simulator
        # played), as in the job.
        return (source.rows_of(kind, category), counting, category)

    def cached(self, kind: Optional[str], category: str, counting: Counting) -> Optional[pd.DataFrame]:
        """The board if it is computed already, else None."""
        with self._lock:
            if self._source is None:
                return None
            return self._boards.get(self._key(self._source, kind, category, counting))

    def board(self, kind: Optional[str], category: str, counting: Counting, worker: Executor,
              timeout: float) -> pd.DataFrame:
        """The board, computed on `worker` if no one has asked for it since the result was published.
        Raises `Superseded` once closed, and what the computation raised if it failed (nothing is kept
        then: the next request tries again)."""
        with self._lock:
            source = self._source
            if source is None:
                raise Superseded()
            key = self._key(source, kind, category, counting)
            table = self._boards.get(key)
            if table is not None:
                return table
            running = self._running.get(key)
            if running is None:
                running = worker.submit(source.board, kind, category, counting)
                self._running[key] = running
                running.add_done_callback(lambda done: self._done(key, done))
        table = running.result(timeout=timeout)
        self._done(key, running)  # kept before this returns (the callback may run a moment later)
        return table

    def _done(self, key: tuple, done: Future) -> None:
        with self._lock:
            self._running.pop(key, None)
            if self._source is not None and not done.cancelled() and done.exception() is None:
                self._boards[key] = done.result()

    def close(self) -> None:
        """Drop the boards and the rows (the job published a newer result)."""
        with self._lock:
            self._source = None
            self._boards.clear()


def _lowest_priority() -> None:
    try:  # the boards yield the cores to people's turns (Linux: per-thread priority)
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), WORKER_NICENESS)
    except (AttributeError, OSError):  # no per-thread priority here: one worker bounds the cost alone
        pass


def lazy_worker() -> ThreadPoolExecutor:
    """The one thread that computes lazy boards: one at a time, at the lowest priority."""
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix="leaderboard-lazy",
                              initializer=_lowest_priority)
