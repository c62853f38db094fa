"""Pair drawing: least-played pair first, random ties and sides, battles under way counted (in the store)."""

import random
import threading
from collections import Counter

import pytest

from arena.dialogue import Dialogue, UserInfo, UserKind, Vote
from arena.store import Store
from webapp.pairing import NotEnoughSystems, SharedPairScheduler, choose_pair, least_played_pairs, normalise_counts


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
    pairs = [frozenset(scheduler.draw(["a", "b", "c"])[0]) for _ in range(3)]
    assert len(set(pairs)) == 3 and scheduler.pending() == 3


def test_scheduler_forgets_stored_released_and_expired_battles(store):
    scheduler = SharedPairScheduler(store, rng=random.Random(0))
    (a, b), ticket = scheduler.draw(["a", "b", "c"])
    scheduler.complete(ticket, lambda: store.save_battle(*stored_battle(a, b), claim_id=ticket))
    assert scheduler.pending() == 0
    pair, second = scheduler.draw(["a", "b", "c"])
    assert set(pair) != {a, b}
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

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(30)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(Counter(drawn).values()) == [5] * 6
