"""Choosing the two systems of a battle.

Pairs are drawn at random, weighted toward the under-played ones, and the
sides (System A / System B) are randomised. Always drawing the least-played
pair balanced the counts but let anyone who read the public battle counts
predict the next battle (4 times out of 4 in a probe); with weights, every
pair stays possible and no pair is much more likely than the rest, while the
counts still stay within a few percent of each other over many battles.
A pair's weight is exp(-(battles behind the least played, capped) / T),
mixed with a uniform share (`PAIR_TEMPERATURE`, `PAIR_LAG_CAP`, `PAIR_UNIFORM`).

Battles that are under way but not yet voted on also count: otherwise many
people arriving at once would all be sent to the same least-played pair.
`SharedPairScheduler` records the pairs it hands out as claims in the store,
shared by every app process, until the battle is stored or a time limit
passes (a person may close the page without voting).
"""

from __future__ import annotations

import itertools
import math
import random
import threading
from typing import Any, Callable, Iterable, Mapping, Optional

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


# A pair one battle behind is e^(1/2) times as likely; lags beyond 4 battles count as 4 (a new system
# is not drawn into every battle), and a fifth of the draws ignore the counts altogether.
PAIR_TEMPERATURE = 2.0
PAIR_LAG_CAP = 4.0
PAIR_UNIFORM = 0.2


def pair_probabilities(available: Iterable[str], counts: Mapping[Iterable[str], int], *,
                       temperature: float = PAIR_TEMPERATURE, uniform: float = PAIR_UNIFORM) -> dict[Pair, float]:
    """The chance of each order-free pair of available systems being drawn next.

    `temperature=0, uniform=0` is the old strict rule (a least-played pair, at random among them), kept
    for tests of the shared counting, where an exact balance shows that every draw saw every claim.
    """
    names = sorted(set(available))
    pairs = list(itertools.combinations(names, 2))
    if not pairs:
        return {}
    totals = normalise_counts(counts)
    played = [totals.get(p, 0) for p in pairs]
    fewest = min(played)
    if temperature <= 0:
        weights = [1.0 if n == fewest else 0.0 for n in played]
    else:
        weights = [math.exp(-min(n - fewest, PAIR_LAG_CAP) / temperature) for n in played]
    total = sum(weights)
    return {p: (1.0 - uniform) * w / total + uniform / len(pairs) for p, w in zip(pairs, weights)}


def choose_pair(
    available: Iterable[str], counts: Mapping[Iterable[str], int], rng: Optional[random.Random] = None,
    **weighting: float,
) -> Pair:
    """(system A, system B): a random pair weighted toward the under-played, in random order
    (`weighting`: `temperature`, `uniform` of `pair_probabilities`)."""
    rng = rng or random.SystemRandom()
    chances = pair_probabilities(available, counts, **weighting)
    if not chances:
        raise NotEnoughSystems("A battle needs at least two available systems.")
    pairs = list(chances)
    a, b = rng.choices(pairs, weights=[chances[p] for p in pairs])[0]
    return (a, b) if rng.random() < 0.5 else (b, a)


class SharedPairScheduler:
    """Hands out pairs by the battles stored or under way in any app process (claims in the store).

    Drawing reads stored and claimed battles and records the new claim under
    one database lock (`Store.claim_pair`), so replicas behind a load balancer
    pair systems from one count. `Store.save_battle(..., claim_id=ticket)`
    removes the claim in the battle's own transaction.
    """

    def __init__(self, store: Any, *, user_kind: str = "human", pending_ttl_s: float = 1800.0,
                 rng: Optional[random.Random] = None, **weighting: float):
        self._store = store
        self._user_kind = user_kind
        self._ttl = pending_ttl_s
        self._rng = rng or random.SystemRandom()  # the OS generator: draws reveal nothing of the next
        self._lock = threading.Lock()  # random.Random is shared by this process's sessions
        self._weighting = weighting

    def draw(self, available: Iterable[str]) -> tuple[Pair, str]:
        names = list(available)

        def choose(counts: Mapping[Iterable[str], int]) -> Pair:
            with self._lock:
                return choose_pair(names, counts, self._rng, **self._weighting)

        return self._store.claim_pair(choose, user_kind=self._user_kind, ttl_s=self._ttl)

    def complete(self, ticket: Optional[str], save: Callable[[], None]) -> None:
        """`save` must store the battle with `claim_id=ticket`, which ends the claim atomically."""
        save()

    def done(self, ticket: Optional[str]) -> None:
        if ticket is not None:
            self._store.release_claim(ticket)

    def pending(self) -> int:
        return self._store.open_claims(self._user_kind)
