"""Code run in other processes by the concurrency tests (must be importable by name)."""

from __future__ import annotations

import sys

from arena.store import Store

from store_strategies import rich_dialogue


def write_dialogues(db_path: str, worker: int, count: int) -> list[str]:
    store = Store(db_path)
    ids = []
    for i in range(count):
        d = rich_dialogue(f"crs-{worker}", f"user-{worker}-{i:04d}")
        store.save_dialogue(d)
        ids.append(d.dialogue_id)
    store.close()
    return ids


def admit_many(db_path: str, scope: str, key: str, limit: int, threads: int) -> int:
    """Ask for a place under one cap shared by every process from `threads` threads at once; how many of
    this process's requests were admitted."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from arena.store import Cap, CapReached

    store = Store(db_path)
    barrier = threading.Barrier(threads)

    def ask(_: int) -> bool:
        barrier.wait()
        try:
            store.admit_capped([Cap(scope, key, limit, 3600)])
            return True
        except CapReached:
            return False

    with ThreadPoolExecutor(threads) as pool:
        admitted = sum(pool.map(ask, range(threads)))
    store.close()
    return admitted


def write_forever(db_path: str) -> None:
    """Save dialogues until killed, announcing each id only after its commit."""
    store = Store(db_path)
    i = 0
    while True:
        d = rich_dialogue("crs-loop", f"user-loop-{i:06d}", n_turns=20)
        store.save_dialogue(d)
        sys.stdout.write(d.dialogue_id + "\n")
        sys.stdout.flush()
        i += 1


if __name__ == "__main__":
    write_forever(sys.argv[1])
