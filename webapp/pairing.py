"""Choosing the two systems of a battle.

The pair with the fewest battles so far goes first, so every pair of
available systems is compared about equally often; ties between pairs are
broken at random and the sides (System A / System B) are randomised.

Battles that are under way but not yet voted on also count: otherwise many
people arriving at once would all be sent to the same least-played pair.
`PairScheduler` remembers the pairs it handed out until the battle is stored
or a time limit passes (a person may close the page without voting).
"""

from __future__ import annotations

import itertools
import random
import threading
import time
from typing import Callable, Iterable, Mapping, Optional

Pair = tuple[str, str]


def pair_key(a: str, b: str) -> Pair:
    """The order-free key of a pair."""
    return (a, b) if a <= b else (b, a)


def normalise_counts(counts: Mapping[Iterable[str], int]) -> dict[Pair, int]:
    """Sum counts keyed by ordered pairs (or any two-element iterable) into order-free keys."""
    out: dict[Pair, int] = {}
    for key, n in counts.items():
        a, b = tuple(key)
        k = pair_key(a, b)
        out[k] = out.get(k, 0) + int(n)
    return out


def least_played_pairs(available: Iterable[str], counts: Mapping[Iterable[str], int]) -> list[Pair]:
    """All pairs of available systems that share the lowest count."""
    names = sorted(set(available))
    if len(names) < 2:
        return []
    totals = normalise_counts(counts)
    pairs = list(itertools.combinations(names, 2))
    fewest = min(totals.get(p, 0) for p in pairs)
    return [p for p in pairs if totals.get(p, 0) == fewest]


class NotEnoughSystems(RuntimeError):
    pass


def choose_pair(
    available: Iterable[str], counts: Mapping[Iterable[str], int], rng: Optional[random.Random] = None
) -> Pair:
    """(system A, system B): a least-played pair, chosen at random, in random order."""
    rng = rng or random.Random()
    candidates = least_played_pairs(available, counts)
    if not candidates:
        raise NotEnoughSystems("A battle needs at least two available systems.")
    a, b = rng.choice(candidates)
    return (a, b) if rng.random() < 0.5 else (b, a)


class PairScheduler:
    """Hands out pairs by stored counts plus battles still under way in this process."""

    def __init__(
        self,
        stored_counts: Callable[[], Mapping[Iterable[str], int]],
        *,
        pending_ttl_s: float = 1800.0,
        rng: Optional[random.Random] = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self._stored_counts = stored_counts
        self._ttl = pending_ttl_s
        self._rng = rng or random.Random()
        self._clock = clock
        self._lock = threading.Lock()
        self._pending: dict[str, tuple[Pair, float]] = {}  # ticket -> (pair key, started)
        self._tickets = itertools.count(1)

    def _pending_counts(self) -> dict[Pair, int]:
        now = self._clock()
        expired = [t for t, (_, started) in self._pending.items() if now - started > self._ttl]
        for ticket in expired:
            del self._pending[ticket]
        counts: dict[Pair, int] = {}
        for pair, _ in self._pending.values():
            counts[pair] = counts.get(pair, 0) + 1
        return counts

    def draw(self, available: Iterable[str]) -> tuple[Pair, str]:
        """((system A, system B), ticket); pass the ticket to `done` once the battle is stored."""
        with self._lock:
            counts = normalise_counts(self._stored_counts())
            for pair, n in self._pending_counts().items():
                counts[pair] = counts.get(pair, 0) + n
            pair = choose_pair(available, counts, self._rng)
            ticket = str(next(self._tickets))
            self._pending[ticket] = (pair_key(*pair), self._clock())
        return pair, ticket

    def complete(self, ticket: Optional[str], save: Callable[[], None]) -> None:
        """Store the finished battle and stop counting it as under way, as one step for `draw`."""
        with self._lock:
            save()
            if ticket is not None:
                self._pending.pop(ticket, None)

    def done(self, ticket: Optional[str]) -> None:
        """The battle was stored (or abandoned): stop counting it as under way."""
        if ticket is None:
            return
        with self._lock:
            self._pending.pop(ticket, None)

    def pending(self) -> int:
        with self._lock:
            return len(self._pending_counts())
