"""Quota cells are shared through the store: many workers reserving at once, on SQLite and PostgreSQL,
never take more places than a cell has, and the places fill evenly."""

from __future__ import annotations

import threading
from collections import Counter

from arena.crowd.study import parse_study
from arena.store import Store
from study_support import study_yaml


def test_concurrent_reservations_never_exceed_a_quota(db_location):
    study = parse_study(study_yaml(quota_per_cell=3, tasks_per_participant=1))
    stores = [Store(db_location) for _ in range(2)]  # two app processes' stores on one database
    got: list = []
    lock = threading.Lock()

    def worker(n: int) -> None:
        held = stores[n % 2].reserve_cell(study, f"w{n}")
        with lock:
            got.append(held)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(14)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    taken = Counter(held[0] for held in got if held is not None)
    assert taken == Counter(alpha=3, beta=3, gamma=3)  # every place taken once, none twice
    assert sum(held is None for held in got) == 5
    assert {cell: n["reserved"] for cell, n in stores[0].cell_fill(study).items()} == dict(taken)
    for store in stores:
        store.close()


def test_places_fill_evenly_one_worker_after_another(tmp_path):
    study = parse_study(study_yaml(quota_per_cell=4, tasks_per_participant=1, quotas={"gamma": 2}))
    store = Store(tmp_path / "arena.sqlite3")
    cells = [store.reserve_cell(study, f"w{n}")[0] for n in range(10)]
    # Fill is a share of each cell's quota: gamma (quota 2) takes one place for every two of the others.
    assert Counter(cells[:3]) == Counter(alpha=1, beta=1, gamma=1)
    assert Counter(cells[:5]) == Counter(alpha=2, beta=2, gamma=1)
    assert Counter(cells) == Counter(alpha=4, beta=4, gamma=2)
    assert store.reserve_cell(study, "late") is None
    store.close()
