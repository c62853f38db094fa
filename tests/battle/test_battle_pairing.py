"""Pair drawing: least-played pair first, random ties and sides, in-flight battles counted."""

import random
import threading
from collections import Counter

import pytest

from webapp.pairing import NotEnoughSystems, PairScheduler, choose_pair, least_played_pairs, normalise_counts


def test_least_played_pair_is_chosen():
    counts = {frozenset(("a", "b")): 3, ("a", "c"): 1, ("c", "b"): 2}
    for seed in range(20):
        assert set(choose_pair(["a", "b", "c"], counts, random.Random(seed))) == {"a", "c"}


def test_counts_in_both_orders_are_summed():
    assert normalise_counts({("b", "a"): 2, ("a", "b"): 1, frozenset(("c", "a")): 4}) == {
        ("a", "b"): 3,
        ("a", "c"): 4,
    }


def test_ties_are_broken_at_random_and_sides_are_random():
    seen_pairs, seen_orders = Counter(), Counter()
    for seed in range(400):
        a, b = choose_pair(["x", "y", "z"], {}, random.Random(seed))
        seen_pairs[frozenset((a, b))] += 1
        seen_orders[(a, b)] += 1
    assert len(seen_pairs) == 3 and min(seen_pairs.values()) > 80
    assert len(seen_orders) == 6 and min(seen_orders.values()) > 30


def test_only_available_systems_are_drawn_and_two_are_needed():
    counts = {("a", "b"): 0, ("gone", "a"): 0}
    assert least_played_pairs(["a", "b"], counts) == [("a", "b")]
    with pytest.raises(NotEnoughSystems):
        choose_pair(["a"], {})
    with pytest.raises(NotEnoughSystems):
        choose_pair([], {})


def test_scheduler_spreads_battles_under_way():
    scheduler = PairScheduler(lambda: {}, rng=random.Random(1))
    pairs = [frozenset(scheduler.draw(["a", "b", "c"])[0]) for _ in range(3)]
    assert len(set(pairs)) == 3


def test_scheduler_forgets_finished_and_expired_battles():
    now = [0.0]
    stored = {}
    scheduler = PairScheduler(lambda: stored, pending_ttl_s=60, rng=random.Random(0), clock=lambda: now[0])
    (a, b), ticket = scheduler.draw(["a", "b", "c"])
    stored[(a, b)] = 1  # the battle was stored ...
    scheduler.done(ticket)  # ... and released
    assert scheduler.pending() == 0
    pair, _ = scheduler.draw(["a", "b", "c"])
    assert set(pair) != {a, b}
    now[0] = 61.0  # an abandoned battle stops counting after the time limit
    assert scheduler.pending() == 0


def test_scheduler_is_fair_under_concurrent_draws():
    scheduler = PairScheduler(lambda: {}, rng=random.Random(3))
    names = ["a", "b", "c", "d"]  # six pairs
    drawn = []
    lock = threading.Lock()

    def worker():
        pair, _ = scheduler.draw(names)
        with lock:
            drawn.append(frozenset(pair))

    threads = [threading.Thread(target=worker) for _ in range(30)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(Counter(drawn).values()) == [5] * 6


def test_completing_a_battle_never_counts_it_twice():
    stored = {}
    scheduler = PairScheduler(lambda: dict(stored), rng=random.Random(2))
    (a, b), ticket = scheduler.draw(["a", "b"])

    def save():
        stored[(a, b)] = 1
        # a draw racing with the save must wait, then see one battle, not two
        assert scheduler._lock.locked()

    scheduler.complete(ticket, save)
    assert scheduler.pending() == 0
