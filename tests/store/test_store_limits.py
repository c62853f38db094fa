"""Hard limits and the login lockout counted in the store hold under simultaneous requests, on SQLite
and PostgreSQL, from threads and from separate processes."""

import multiprocessing
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from arena.store import Cap, CapReached, Store

import store_workers
from store_strategies import battle

BURST = 32


def _all_at_once(count, action):
    """Run `action(i)` for i in range(count) on `count` threads released together; the results."""
    barrier = threading.Barrier(count)

    def go(i):
        barrier.wait()
        return action(i)

    with ThreadPoolExecutor(count) as pool:
        return list(pool.map(go, range(count)))


def _admitted(store, caps):
    try:
        store.admit_capped(caps)
        return True
    except CapReached:
        return False


def test_a_cap_admits_exactly_its_limit_under_32_simultaneous_requests(store):
    caps = [Cap("vote:user", "u1", 5, 3600), Cap("vote:ip", "ip1", 7, 3600)]
    outcomes = _all_at_once(BURST, lambda i: _admitted(store, caps))
    assert sum(outcomes) == 5
    assert store.capped_count("vote:user", "u1", 3600) == 5 and store.capped_count("vote:ip", "ip1", 3600) == 5


def test_fresh_sessions_from_one_address_stop_at_the_address_cap(store):
    # 32 different sessions (each under its own cap) from one address: the address's cap decides.
    outcomes = _all_at_once(BURST, lambda i: _admitted(store, [Cap("rated:user", f"s{i}", 20, 3600),
                                                               Cap("rated:ip", "ip1", 9, 3600)]))
    assert sum(outcomes) == 9
    assert sum(store.capped_count("rated:user", f"s{i}", 3600) for i in range(BURST)) == 9


def test_two_processes_share_one_cap(db_location):
    """Two app processes on one database, 16 simultaneous requests each: the cap holds for both together."""
    Store(db_location).close()  # migrated once, before the workers race
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(2) as pool:
        admitted = pool.starmap(store_workers.admit_many, [(db_location, "vote:ip", "shared", 6, BURST // 2)] * 2)
    assert sum(admitted) == 6
    with Store(db_location) as store:
        assert store.capped_count("vote:ip", "shared", 3600) == 6


def test_the_window_moves_and_a_burst_count_never_refuses(store):
    cap = Cap("battle:user", "u", 2, 100)
    store.admit_capped([cap], now=1000)
    store.admit_capped([cap], now=1050)
    with pytest.raises(CapReached) as refused:
        store.admit_capped([cap], now=1099)
    assert refused.value.cap == cap
    store.admit_capped([cap], now=1101)  # the first action left the window
    burst = Cap("battle:user", "u", None, 10)
    counted = store.admit_capped([Cap("battle:user", "u", 3, 100), burst], now=1105)
    assert counted.counts == (3, 2)  # three within 100 s, two (1101 and 1105) within 10 s


def test_a_taken_back_action_frees_its_place(store):
    cap = Cap("rated:user", "u", 1, 3600)
    admitted = store.admit_capped([cap])
    with pytest.raises(CapReached):
        store.admit_capped([cap])
    store.take_back(admitted.hit_ids)
    store.admit_capped([cap])
    assert store.capped_count("rated:user", "u", 3600) == 1


@pytest.mark.parametrize("attempts", [32, 200])
def test_parallel_login_attempts_get_at_most_the_configured_tries(store, attempts):
    tries = _all_at_once(attempts, lambda i: store.begin_login("addr", max_failures=10, lockout_s=900))
    checked = [t for t in tries if t.locked_s == 0]
    assert len(checked) == 10
    assert sorted(t.earlier_failures for t in checked) == list(range(10))
    assert sum(t.locks for t in checked) == 1
    failures, locked = store.login_state("addr", lockout_s=900)
    assert locked > 800


def test_a_lockout_ends_and_a_success_forgets_failures(store):
    for i in range(2):
        store.begin_login("a", max_failures=3, lockout_s=100, now=10 + i)
    assert store.login_state("a", lockout_s=100, now=12) == (2, 0.0)
    store.login_succeeded("a")
    assert store.login_state("a", lockout_s=100, now=12) == (0, 0.0)
    for i in range(3):
        store.begin_login("a", max_failures=3, lockout_s=100, now=20 + i)
    assert store.begin_login("a", max_failures=3, lockout_s=100, now=50).locked_s == pytest.approx(72)
    fresh = store.begin_login("a", max_failures=3, lockout_s=100, now=123)  # the lockout is over
    assert fresh.locked_s == 0 and fresh.earlier_failures == 0


def test_a_burst_of_simultaneous_votes_from_one_address_is_flagged_exactly(store):
    battles = [battle(f"crs-{i % 3}", f"crs-{i % 3 + 3}", user_id=f"user-{i}") for i in range(BURST)]

    def cast(i):
        a, b, vote = battles[i]
        return store.save_battle_once(a, b, vote, user_key=f"user:{i}", ip_key="ip:one", started_at=None,
                                      burst_votes=5, burst_window_s=600, min_battle_s=0)

    flags = _all_at_once(BURST, cast)
    assert sum(flag is not None for flag in flags) == BURST - 5  # the sixth and every later vote
    assert len(store.flagged_votes()) == BURST - 5
