"""Pair drawing: random pairs weighted toward the under-played, random sides, battles under way counted
(in the store); balanced over many battles yet not predictable from the counts."""

import itertools
import random
import threading
from collections import Counter

import pytest

from arena.dialogue import Dialogue, UserInfo, UserKind, Vote
from arena.store import Store
from webapp.sessions.pairing import (
    NotEnoughSystems,
    SharedPairScheduler,
    choose_pair,
    least_played_pairs,
    normalise_counts,
    pair_probabilities,
)


def test_under_played_pair_is_likelier_but_not_certain():
    counts = {frozenset(("a", "b")): 3, ("a", "c"): 1, ("c", "b"): 2}
    drawn = Counter(frozenset(choose_pair(["a", "b", "c"], counts, random.Random(seed))) for seed in range(600))
    ac, bc, ab = drawn[frozenset("ac")], drawn[frozenset("bc")], drawn[frozenset("ab")]
    assert ac > bc > ab > 0  # weighted toward the under-played, every pair possible
    assert ac < 0.6 * 600  # the least played pair is no safe guess


def test_no_pair_is_predictable_from_the_counts():
    # The probe predicted 4 of 4 battles from the public counts; now the likeliest pair, whatever the
    # counts, stays far from certain, even when one pair lags far behind (a new system).
    names = ["a", "b", "c", "d", "e", "f"]  # fifteen pairs
    rng = random.Random(0)
    for _ in range(200):
        counts = {p: rng.randrange(0, 50) for p in itertools.combinations(names, 2)}
        assert max(pair_probabilities(names, counts).values()) < 0.35
    lagging = {p: 100 for p in itertools.combinations(names, 2)} | {("a", "b"): 0}
    assert max(pair_probabilities(names, lagging).values()) < 0.35


def test_counts_stay_balanced_within_a_few_percent_over_many_battles():
    names = ["a", "b", "c", "d", "e", "f"]
    rng, counts = random.Random(11), Counter()
    for _ in range(3000):
        counts[frozenset(choose_pair(names, counts, rng))] += 1
    mean = 3000 / 15
    assert len(counts) == 15 and max(abs(n - mean) for n in counts.values()) / mean < 0.05


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


def stored_battle(a, b):
    """Two one-turn dialogues and a human vote, as the Battle tab stores them."""
    first, second = (Dialogue(crs_id=name, user=UserInfo(kind=UserKind.HUMAN, id="u")) for name in (a, b))
    for d in (first, second):
        d.add_user("hi")
        d.add_agent("hello")
    vote = Vote(battle_id="b1", dialogue_a=first.dialogue_id, dialogue_b=second.dialogue_id, crs_a=a, crs_b=b,
                choice="tie", user_id="u", user_kind=UserKind.HUMAN)
    return first, second, vote


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "arena.sqlite3") as s:
        yield s


def test_scheduler_spreads_battles_under_way(store):
    scheduler = SharedPairScheduler(store, rng=random.Random(1))
    pairs = Counter(frozenset(scheduler.draw(["a", "b", "c"])[0]) for _ in range(60))
    assert scheduler.pending() == 60
    assert max(pairs.values()) - min(pairs.values()) <= 6  # claims under way count toward the balance


def test_scheduler_forgets_stored_released_and_expired_battles(store):
    scheduler = SharedPairScheduler(store, rng=random.Random(0))
    (a, b), ticket = scheduler.draw(["a", "b", "c"])
    scheduler.complete(ticket, lambda: store.save_battle(*stored_battle(a, b), claim_id=ticket))
    assert scheduler.pending() == 0
    assert sum(store.pair_counts().values()) == 1
    pair, second = scheduler.draw(["a", "b", "c"])
    scheduler.done(second)  # abandoned
    assert scheduler.pending() == 0
    expiring = SharedPairScheduler(store, pending_ttl_s=-1, rng=random.Random(0))
    expiring.draw(["a", "b", "c"])  # an abandoned battle stops counting after the time limit
    assert scheduler.pending() == 0


def test_scheduler_is_fair_under_concurrent_draws(store):
    names = ["a", "b", "c", "d"]  # six pairs
    drawn = []
    lock = threading.Lock()

    def worker(seed):
        # one scheduler per thread, like separate app processes sharing the store
        pair, _ = SharedPairScheduler(store, rng=random.Random(seed)).draw(names)
        with lock:
            drawn.append(frozenset(pair))

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(60)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    counts = Counter(drawn)  # every draw saw the claims before it: no pair runs away
    assert len(counts) == 6 and max(counts.values()) - min(counts.values()) <= 6


def test_strict_rule_remains_for_counting_tests():
    counts = {frozenset(("a", "b")): 3, ("a", "c"): 1, ("c", "b"): 2}
    for seed in range(20):
        pair = choose_pair(["a", "b", "c"], counts, random.Random(seed), temperature=0, uniform=0)
        assert set(pair) == {"a", "c"}
