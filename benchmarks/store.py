"""Store throughput: writes (1 and 8 threads, 4 processes), reads, score merges, export, IARD import.

    python benchmarks/store.py [--n 2000]
"""

from __future__ import annotations

import argparse
import io
import multiprocessing
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.dialogue import Dialogue, Feedback, RecommendedItem, Score, UserInfo  # noqa: E402
from arena.corpus.records import export_jsonl, import_dialogues  # noqa: E402
from arena.store import Store  # noqa: E402

IARD = ROOT / "assets" / "iard" / "formatted_IARD_annotated_partially.json"  # the project's copy


def make_dialogue(i: int, turns: int = 8) -> Dialogue:
    d = Dialogue(crs_id=f"crs-{i % 8}", user=UserInfo(id=f"user-{i:06d}"))
    for t in range(turns):
        d.add_user(f"I'd like a thriller from the nineties, turn {t}")
        d.add_agent("How about Heat (1995)?", items=[RecommendedItem(item_id="1", title="Heat (1995)")])
    d.feedback = Feedback(sentiment="satisfied")
    d.set_score("rdl", Score(value=0.5, scorer="rdl", version="1"))
    d.end("user_stopped")
    return d


def _write_batch(db: str, start: int, count: int) -> None:
    store = Store(db)
    for i in range(start, start + count):
        store.save_dialogue(make_dialogue(i))
    store.close()


def write_from_threads(store: Store, first: int, per_thread: int, threads: int = 8) -> None:
    """`threads` threads sharing one Store, each saving `per_thread` new dialogues."""
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(lambda w: [store.save_dialogue(make_dialogue(first + w * per_thread + i))
                                 for i in range(per_thread)], range(threads)))


def timed(label: str, n: int, fn) -> None:
    t = time.perf_counter()
    fn()
    dt = time.perf_counter() - t
    print(f"{label:<44} {n:>6} in {dt:7.3f} s  = {n / dt:9.0f} /s")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=2000)
    n = parser.parse_args().n
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "bench.sqlite3")
        store = Store(db)
        timed("save_dialogue, 1 thread (8-turn dialogues)", n, lambda: _write_batch(db, 0, n))
        per = n // 8
        timed("save_dialogue, 8 threads", per * 8, lambda: write_from_threads(store, n, per))
        per_proc = n // 4

        def procs():
            with multiprocessing.get_context("spawn").Pool(4) as pool:
                pool.starmap(_write_batch, [(db, 10 * n + w * per_proc, per_proc) for w in range(4)])

        timed("save_dialogue, 4 processes (incl. spawn)", per_proc * 4, procs)
        total = store.count_dialogues()
        timed("list_dialogues (all, with scores)", total, lambda: store.list_dialogues())
        ids = [d.dialogue_id for d in store.list_dialogues(limit=500)]
        timed("get_dialogue", len(ids), lambda: [store.get_dialogue(i) for i in ids])
        timed("save_scores (one metric)", len(ids),
              lambda: [store.save_scores(i, {"core.overall": Score(value=70.0, scorer="core", version="1")})
                       for i in ids])
        timed("export_jsonl (pseudonymised)", total, lambda: export_jsonl(store, io.StringIO(), salt="s"))
        if IARD.exists():
            timed("import IARD file (parse + one transaction)", 259, lambda: import_dialogues(store, IARD))
        print(f"database size: {Path(db).stat().st_size / 1e6:.1f} MB for {store.count_dialogues()} dialogues")
        store.close()


if __name__ == "__main__":
    main()
