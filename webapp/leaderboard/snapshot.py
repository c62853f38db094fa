"""The published boards: every board computed by one background job, pages serving the latest result.

One job (`BoardJob`, a daemon thread) reads the store's compact rows
(`arena.store.board_rows`) and computes every board from them: each audience
(people, simulators, everyone) and category of the open arena, and each
study's own board. Pages read the latest result and state its time; a
request never computes a board, so sixteen visitors pressing Refresh cost
what one does. The tables beside the boards (`extra`: metric means and
correlations) are made after the boards are published, from the same rows
(`webapp.leaderboard.board_extras`); until they are, the previous run's stay.
The boards under the counting options (first votes only, ties left out) are
computed by the job for the whole arena; those of another category are
computed the first time a page asks for one, from rows the job keeps until
its next result (`webapp.leaderboard.lazy_boards`).

With `ARENA_LEADERBOARD_SNAPSHOT_EVERY` at 0 the board is live: the job
recomputes whenever the store has changed, but never sooner than
`LIVE_PAUSE_S` (or twice its last run) after its previous run ended, so it
uses at most a third of a core however busy the arena is; Refresh waits for
the job's next result if the store has changed since the one shown. With a
positive interval the job recomputes at most once per interval, whatever
anyone presses: a public board that moves with every vote lets a visitor
watch the effect of their own votes; one that moves once an hour does not.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable, Optional

import numpy as np
import pandas as pd

from arena.corpus.records import PSEUDONYM_PREFIX
from arena.crowd.counting import USER_KINDS
from arena.store.jobs_scheduler import Periodic
from arena.crowd.study import OPEN_CROWD
from webapp.leaderboard.board_extras import BoardDialogues, ExtraRows
from webapp.leaderboard.board_select import StoreFrames
from webapp.leaderboard.categories import ALL, CATEGORIES
from webapp.leaderboard.lazy_boards import BoardSource, LazyBoards, Superseded, lazy_worker, variant_board
from webapp.leaderboard.ranking import rank_board
from webapp.leaderboard.table import LeaderboardOptions
from webapp.leaderboard.vote_counting import COUNTING_VARIANTS, DEFAULT_COUNTING

log = logging.getLogger(__name__)

LIVE_PAUSE_S = 1.0  # a live job waits at least this long (or twice its last run) between runs
JOB_NICENESS = 19  # the job thread's scheduling priority (Linux niceness: 19 is the lowest)
POLL_S = 0.25  # how often an idle job looks at the clock and the store
WAIT_S = 300.0  # the longest a page waits for a board that is being computed
AUDIENCES: tuple[Optional[str], ...] = (*USER_KINDS, None)  # None: everyone

# (audience, category, the board's dialogues as the side tables read them) -> what a page shows beside the board
Extra = Callable[[Optional[str], str, BoardDialogues], Any]


@dataclass
class Published:
    """Every board, computed from one read of the store."""

    taken_at: float  # seconds since the epoch, by the job's clock
    version: tuple  # `Store.board_version()` at the read
    boards: dict[tuple[Optional[str], str], pd.DataFrame]
    studies: dict[str, pd.DataFrame]
    seconds: float  # how long the computation took
    started: float = 0.0  # time.monotonic() when the job began it
    extras: dict[tuple[Optional[str], str], Any] = field(default_factory=dict)
    # Whether `extras` were made by this run: the job publishes the boards first and the tables beside them
    # when they are made; until then `extras` are the previous run's (a page shows those, not an empty space).
    extras_done: bool = True
    # The counting variants of each audience's whole-arena board (`vote_counting.COUNTING_VARIANTS`), by
    # (audience, (first votes only, tie rule)).
    variants: dict[tuple[Optional[str], tuple[bool, str]], pd.DataFrame] = field(default_factory=dict)
    # The rows the boards were computed from, kept only until the job has made the extras from them.
    frames: Optional[StoreFrames] = field(default=None, repr=False, compare=False)
    # What the counting boards of the other categories are computed from when first asked for
    # (`webapp.leaderboard.lazy_boards`); the job moves it into its `LazyBoards` when it publishes.
    source: Optional[BoardSource] = field(default=None, repr=False, compare=False)

    @property
    def taken_at_utc(self) -> datetime:
        return datetime.fromtimestamp(self.taken_at, tz=timezone.utc)


def flagged_study_users(store: Any, study_id: str) -> frozenset[str]:
    """Stored user ids of a study's flagged workers (left out of its board)."""
    return frozenset(PSEUDONYM_PREFIX + p.pseudonym for p in store.list_participants(study_id) if p.flags)


def study_board(store: Any, study_id: str, frames: Optional[StoreFrames] = None) -> pd.DataFrame:
    """A study's own board from the compact rows: its crowd's people, its flagged workers left out, no minimum
    vote count (the researchers' view; `frames`: rows already read, else read now)."""
    frames = frames or StoreFrames.of(store.board_rows())
    data, flagged = frames.select(crowd=study_id, user_kind="human", left_out_users=flagged_study_users(store, study_id))
    table = rank_board(data, options=LeaderboardOptions(min_votes=0))
    table.attrs.update(votes_counted=len(data.votes), votes_flagged=flagged)
    return table


def compute_boards(store: Any, options: LeaderboardOptions, *, now: float = 0.0,
                   extra: Optional[Extra] = None, keep_frames: bool = False) -> Published:
    """Every board of the store: each audience and category of the open arena, each study's board, and what
    `extra` makes beside each open-arena board (`keep_frames`: the rows read stay on the result, `frames`)."""
    started, began = time.perf_counter(), time.monotonic()
    version = store.board_version()
    frames = StoreFrames.of(store.board_rows(),
                            lambda: {d.dialogue_id: d for d in store.list_dialogues()})
    boards: dict[tuple[Optional[str], str], pd.DataFrame] = {}
    # Two boards that select the same rows are one computation (everyone's = people's while no simulator played).
    computed: dict[tuple[bytes, bytes, bytes], pd.DataFrame] = {}
    masks: dict[tuple[Optional[str], str], tuple[bytes, bytes, bytes]] = {}
    for kind in AUDIENCES:
        for category in CATEGORIES:
            dialogue_mask, vote_mask = frames.masks(crowd=OPEN_CROWD, user_kind=kind, category=category)
            rated = frames.rated(OPEN_CROWD, kind, frozenset())
            key = (np.packbits(dialogue_mask).tobytes(), np.packbits(vote_mask).tobytes(),
                   np.packbits(rated & dialogue_mask).tobytes())
            masks[(kind, category)] = key
            if key not in computed:
                data, flagged = frames.board_data(dialogue_mask, vote_mask, rated)
                computed[key] = rank_board(data, options=options)
                computed[key].attrs.update(votes_counted=len(data.votes), votes_flagged=flagged)
            table = computed[key].copy()
            table.attrs = {**computed[key].attrs, "category": category}
            boards[(kind, category)] = table
    studies = {study_id: study_board(store, study_id, frames)
               for study_id in sorted(set(frames.d["crowd"]) | set(frames.v["study"])) if study_id != OPEN_CROWD}
    published = Published(now, version, boards, studies, 0.0, began, frames=frames if keep_frames else None,
                          variants=counting_variants(frames, options),
                          source=BoardSource(frames.board_columns(), masks, options))
    if extra is not None:
        published.extras = compute_extras(store, frames, extra)
    published.seconds = time.perf_counter() - started
    return published


def counting_variants(frames: StoreFrames, options: LeaderboardOptions,
                      ) -> dict[tuple[Optional[str], tuple[bool, str]], pd.DataFrame]:
    """Each audience's whole-arena board under each counting variant (first votes only, ties left out),
    without style control (the costly part; the default board has it)."""
    out: dict[tuple[Optional[str], tuple[bool, str]], pd.DataFrame] = {}
    computed: dict[tuple, pd.DataFrame] = {}
    for kind in AUDIENCES:
        dialogue_mask, vote_mask = frames.masks(crowd=OPEN_CROWD, user_kind=kind, category=ALL)
        rated = frames.rated(OPEN_CROWD, kind, frozenset())
        masks = (np.packbits(dialogue_mask).tobytes(), np.packbits(vote_mask).tobytes(),
                 np.packbits(rated & dialogue_mask).tobytes())
        data, flagged = frames.board_data(dialogue_mask, vote_mask, rated)
        for counting in COUNTING_VARIANTS:
            key = (masks, counting)
            if key not in computed:
                computed[key] = variant_board(data, flagged, options, counting, ALL)
            out[(kind, counting)] = computed[key]
    return out


def compute_extras(store: Any, frames: StoreFrames, extra: Extra) -> dict[tuple[Optional[str], str], Any]:
    """What `extra` makes of each open-arena board's dialogues, from the compact rows and the `scores` rows
    (only dialogues with aspect ratings are read whole); boards that select the same rows share one result."""
    rows = ExtraRows.read(store, frames)
    out: dict[tuple[Optional[str], str], Any] = {}
    made: dict[tuple[bytes, bytes], tuple[Optional[str], str]] = {}
    for kind in AUDIENCES:
        for category in CATEGORIES:
            dialogue_mask, _ = frames.masks(crowd=OPEN_CROWD, user_kind=kind, category=category)
            rated = frames.rated(OPEN_CROWD, kind, frozenset())
            key = (np.packbits(dialogue_mask).tobytes(), np.packbits(rated & dialogue_mask).tobytes())
            if key in made:
                if made[key] in out:
                    out[(kind, category)] = out[made[key]]
                continue
            made[key] = (kind, category)
            try:
                out[(kind, category)] = extra(kind, category, rows.board(dialogue_mask, rated))
            except Exception:  # a board must publish even if what is shown beside it cannot be made
                log.exception("leaderboard extra failed for %s / %s", kind, category)
    return out


class BoardJob:
    """The background job that keeps `latest()` current (started by the first call, or by `start`)."""

    def __init__(self, store: Any, options: LeaderboardOptions, *, every_s: float = 0.0,
                 clock: Callable[[], float] = time.time, extra: Optional[Extra] = None):
        self.store, self.options, self.every_s, self.clock, self.extra = store, options, every_s, clock, extra
        self._changed = threading.Condition()
        self._published: Optional[Published] = None
        self._wanted_since: Optional[float] = None  # a page waits for a result begun after this (monotonic)
        self._job: Optional[Periodic] = None
        self._stopped = False
        self._last_end = 0.0
        self._last_seconds = 0.0
        self._last_check = 0.0
        self.failures = 0
        self.last_error: Optional[BaseException] = None
        self._lazy: Optional[LazyBoards] = None  # the counting boards of the published result, when asked
        self._worker: Optional[ThreadPoolExecutor] = None  # computes them (`lazy_boards.lazy_worker`)

    @property
    def live(self) -> bool:
        return self.every_s <= 0

    def start(self) -> "BoardJob":
        """Run the job on the process's scheduler (once): a step every POLL_S while nothing is due."""
        with self._changed:
            if self._job is None:
                self._job = Periodic("leaderboard-job", self._step).start()
        return self

    def stop(self) -> None:
        with self._changed:
            self._stopped = True
            self._changed.notify_all()
        if self._job is not None:
            self._job.cancel(wait=True, timeout=WAIT_S)
        with self._changed:
            worker, self._worker = self._worker, None
        if worker is not None:
            worker.shutdown(wait=False, cancel_futures=True)

    def latest(self, fresh: bool = False) -> Published:
        """The newest result; waits for one when there is none yet, when (live) `fresh` and the store changed
        since it, or when a snapshot is older than its interval. Never computes on the caller's thread."""
        self.start()
        published = self._published
        if published is not None:
            if self.live and not (fresh and self.store.board_version() != published.version):
                return published
            if not self.live and self.clock() - published.taken_at < self.every_s:
                return published
        asked = time.monotonic()
        deadline = asked + WAIT_S
        seen: Optional[Published] = None

        def current() -> bool:
            """A result begun after this request holds what the store had at the request; so does one whose
            store version is still the store's (begun just before the request, after the last change)."""
            nonlocal seen
            published = self._published
            if published is None:
                return False
            if published.started >= asked:
                return True
            if published is not seen:  # asked once per new result, not per poll
                seen = published
                return published.version == self.store.board_version()
            return False

        with self._changed:
            if self._wanted_since is None:
                self._wanted_since = asked
            self._changed.notify_all()
            failures = self.failures
            job = self._job
        if job is not None:
            job.wake()  # the next step now, not after its pause
        with self._changed:
            while not current() and not self._stopped and time.monotonic() < deadline:
                if self.failures > failures:  # the run this request waited for failed
                    if self._published is None:
                        raise RuntimeError(f"the leaderboard could not be computed: {self.last_error}")
                    break
                self._changed.wait(timeout=POLL_S)
            if self._published is None:
                raise TimeoutError("the leaderboard is still being computed; try again shortly")
            return self._published

    def _due(self) -> bool:
        published = self._published
        if published is None:
            return True
        if not self.live:
            return self.clock() - published.taken_at >= self.every_s
        now = time.monotonic()
        if now - self._last_end < max(LIVE_PAUSE_S, 2 * self._last_seconds):
            return False
        if self._wanted_since is not None:
            return True
        if now - self._last_check < LIVE_PAUSE_S:  # the store is asked whether it changed once a second
            return False
        self._last_check = now
        return self.store.board_version() != published.version

    def _step(self) -> Optional[float]:
        """Compute the boards when due (`_due`); returns the wait before the next look (None: stopped)."""
        with self._changed:
            if self._stopped:
                return None
        try:  # the job yields the cores to people's turns: lowest priority for this thread alone (Linux)
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), JOB_NICENESS)
        except (AttributeError, OSError):  # no per-thread priority here: the pacing alone bounds the job
            pass
        try:
            due = self._due()
            if due:
                published = compute_boards(self.store, self.options, now=self.clock(),
                                           keep_frames=self.extra is not None)
        except Exception as exc:  # keep serving the last boards; try again after the pause
            self.last_error = exc
            self.failures += 1
            log.exception("leaderboard job failed")
            due = False
            self._last_end = time.monotonic()
        if not due:
            return POLL_S
        frames, published.frames = published.frames, None
        if frames is not None and self.extra is not None:  # boards first, the tables beside them after
            previous = self._published
            published.extras = previous.extras if previous is not None else {}
            published.extras_done = False
        self._publish(published)
        if frames is not None and self.extra is not None:
            started = time.perf_counter()
            try:
                extras = compute_extras(self.store, frames, self.extra)
            except Exception:  # the boards stand; the previous tables stay beside them
                log.exception("leaderboard extras failed")
                extras = published.extras
            del frames
            self._publish(dataclasses.replace(published, extras=extras, extras_done=True,
                                              seconds=published.seconds + time.perf_counter() - started))
        return 0.0

    def _publish(self, published: Published) -> None:
        source, published.source = published.source, None  # held by the LazyBoards alone, dropped with them
        with self._changed:
            if source is not None:  # a new read of the store: the boards of the old one are invalid
                if self._lazy is not None:
                    self._lazy.close()
                self._lazy = LazyBoards(source)
            self._published = published
            # Only a run begun after the oldest waiting request answers it; one begun before (while the page
            # was being asked) leaves the request standing, so the next run starts at once.
            if self._wanted_since is not None and published.started >= self._wanted_since:
                self._wanted_since = None
            self._last_end, self._last_seconds = time.monotonic(), published.seconds
            self._changed.notify_all()

    def lazy_board(self, kind: Optional[str], category: str, counting: tuple[bool, str]
                   ) -> tuple[pd.DataFrame, Published]:
        """A counting board computed on first request (`lazy_boards`), with the result it comes from: the
        latest, which may be newer than the one a page read a moment before."""
        for _ in range(3):  # a refresh may publish while it is computed: the next result is asked then
            with self._changed:
                lazy, published = self._lazy, self._published
                if lazy is None or published is None:
                    raise RuntimeError("the leaderboard has not been computed yet")
                if self._worker is None:
                    self._worker = lazy_worker()
                worker = self._worker
            try:
                return lazy.board(kind, category, counting, worker, WAIT_S), published
            except Superseded:
                continue
        raise TimeoutError("the leaderboard is being recomputed; try again shortly")

    def lazy_ready(self, kind: Optional[str], category: str, counting: tuple[bool, str]) -> bool:
        """Whether that counting board is computed already (a page then shows it without a wait)."""
        with self._changed:
            lazy = self._lazy
        return lazy is not None and lazy.cached(kind, category, counting) is not None

    def with_extras(self, published: Published) -> Published:
        """The result of `published`'s run (or a later one) once the tables beside its boards are made; the
        latest result if that takes longer than a page would wait."""
        deadline = time.monotonic() + WAIT_S
        with self._changed:
            while not self._stopped and time.monotonic() < deadline:
                now = self._published
                if now is not None and now.started >= published.started and now.extras_done:
                    return now
                self._changed.wait(timeout=POLL_S)
            return self._published or published


class LeaderboardSnapshots:
    """The boards a page shows, from the background job (`BoardJob`)."""

    def __init__(self, store: Any, options: LeaderboardOptions, *, every_s: float = 0.0,
                 clock: Callable[[], float] = time.time, extra: Optional[Extra] = None):
        self.every_s = every_s
        self.job = BoardJob(store, options, every_s=every_s, clock=clock, extra=extra)

    @property
    def live(self) -> bool:
        return self.job.live

    def board(self, kind: Optional[str], category: str = ALL, fresh: bool = False,
              counting: tuple[bool, str] = DEFAULT_COUNTING) -> tuple[pd.DataFrame, Any, Published]:
        """(table, what the extra made of the board, the result they come from). `counting` (first votes
        only, tie rule) other than the default: the job's board for the whole arena (category "all"), and
        for another category the board computed when first asked for (`lazy_boards`; this call waits)."""
        if category not in CATEGORIES:
            raise ValueError(f"unknown category {category!r}; one of {', '.join(CATEGORIES)}")
        if counting != DEFAULT_COUNTING and counting not in COUNTING_VARIANTS:
            raise ValueError(f"unknown counting {counting!r}")
        published = self.job.latest(fresh)
        if not published.extras_done and not published.extras:  # the first run: nothing to show beside it yet
            published = self.job.with_extras(published)
        if counting == DEFAULT_COUNTING:
            table = published.boards[(kind, category)]
        elif category == ALL:
            table = published.variants[(kind, counting)]
        else:
            table, published = self.job.lazy_board(kind, category, counting)
        return table, published.extras.get((kind, category)), published

    def waits(self, kind: Optional[str], category: str = ALL,
              counting: tuple[bool, str] = DEFAULT_COUNTING) -> bool:
        """Whether `board` would compute that board first (a counting board of a category other than All
        that no one has asked for since the last refresh): a page says so while it waits."""
        if counting == DEFAULT_COUNTING or category == ALL:
            return False
        return not self.job.lazy_ready(kind, category, counting)
