"""Many threads and processes writing one database (SQLite or PostgreSQL) lose nothing; a killed writer corrupts nothing."""

import multiprocessing
import os
import signal
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from arena.store import Store

import store_workers
from store_strategies import battle

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def test_threads_lose_nothing(db_location):
    store = Store(db_location)
    barrier = threading.Barrier(8)

    def work(worker):
        barrier.wait()
        ids = []
        for i in range(50):
            d = store_workers.rich_dialogue(f"crs-{worker}", f"user-{worker}-{i}")
            store.save_dialogue(d)
            ids.append(d.dialogue_id)
            if i % 10 == 0:  # readers interleaved with writers
                assert store.get_dialogue(d.dialogue_id) is not None
        a, b, vote = battle(f"crs-{worker}", "crs-x")
        store.save_battle(a, b, vote)
        return ids

    with ThreadPoolExecutor(8) as pool:
        written = [i for ids in pool.map(work, range(8)) for i in ids]
    assert len(set(written)) == 400
    assert store.count_dialogues() == 400 + 16
    stored = {d.dialogue_id for d in store.list_dialogues()}
    assert set(written) <= stored
    assert len(store.list_votes()) == 8
    assert store.integrity_check() == "ok"
    store.close()


def test_processes_lose_nothing(db_location):
    db = db_location
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(4) as pool:
        results = pool.starmap(store_workers.write_dialogues, [(db, w, 50) for w in range(4)])
    written = {i for ids in results for i in ids}
    assert len(written) == 200
    with Store(db) as store:
        assert {d.dialogue_id for d in store.list_dialogues()} == written
        assert store.count_dialogues(crs_id="crs-3") == 50
        assert store.integrity_check() == "ok"


def test_kill_minus_nine_keeps_every_reported_commit(tmp_path):
    db = tmp_path / "killed.sqlite3"
    paths = [str(ROOT), str(HERE)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    child = subprocess.Popen([sys.executable, str(HERE / "store_workers.py"), str(db)],
                             stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    reported = []
    try:
        while len(reported) < 40:
            line = child.stdout.readline()
            assert line, "writer exited early"
            reported.append(line.strip())
        os.kill(child.pid, signal.SIGKILL)
        rest, _ = child.communicate(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == -signal.SIGKILL
    reported += [line.strip() for line in rest.splitlines() if line.strip()]
    # Leftover WAL and shared-memory files are expected after a kill.
    with Store(db) as store:
        assert store.integrity_check() == "ok"
        for dialogue_id in reported:
            d = store.get_dialogue(dialogue_id)
            assert d is not None and len(d.utterances) == 40 and d.scores["rdl"].value == 0.3
        assert store.count_dialogues() >= len(reported)
