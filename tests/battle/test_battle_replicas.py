"""Two app processes on one PostgreSQL database: fair pairing, nothing lost or doubled, one leaderboard."""

import json
import os
import subprocess
import sys
from collections import Counter
from itertools import combinations
from pathlib import Path

from arena.store import Store

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SYSTEMS = ["alpha", "bravo", "charlie", "delta"]
OPENED = {"left": 7, "right": 5}  # 12 battles under way at once = 2 for each of the 6 pairs
MORE = {"left": 11, "right": 13}  # then 36 battles in all = 6 for each pair


def _step(replicas, key):
    for p in replicas:
        p.stdin.write("go\n")
        p.stdin.flush()
    lines = [p.stdout.readline() for p in replicas]
    return [json.loads(line)[key] for line in lines] if key else lines


def test_two_replicas_share_pairing_storage_and_leaderboard(postgres_server):
    db = postgres_server.create_database("replicas")
    Store(db).close()  # schema in place; the replicas' own start-up upgrade is then a no-op
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(HERE)])}
    replicas = [subprocess.Popen([sys.executable, str(HERE / "replica_worker.py"), db, name, str(OPENED[name]),
                                  str(MORE[name]), "3"],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT)
                for name in OPENED]
    try:
        opened = _step(replicas, "opened")
        reports = _step(replicas, "played")
        boards = _step(replicas, None)
        for p in replicas:
            assert p.wait(timeout=60) == 0
    finally:
        for p in replicas:
            if p.poll() is None:
                p.kill()
    # Fair: every draw saw the battles of both replicas, stored or still under way.
    under_way = Counter(frozenset(pair) for pairs in opened for pair in pairs)
    assert under_way == {frozenset(p): 2 for p in combinations(SYSTEMS, 2)}
    played = reports[0] + reports[1]
    assert [len(r) for r in reports] == [OPENED[n] + MORE[n] for n in OPENED]
    pairs = Counter(frozenset(b["pair"]) for b in played)
    assert pairs == {frozenset(p): 6 for p in combinations(SYSTEMS, 2)}

    # Exactly once: every dialogue, rating and vote, nothing more.
    with Store(db) as store:
        votes = store.list_votes()
        assert sorted(v.vote_id for v in votes) == sorted(b["vote"] for b in played)
        stored = {d.dialogue_id: d for d in store.list_dialogues()}
        reported = {i: s for b in played for i, s in b["sentiments"].items()}
        assert len(reported) == 2 * len(played) and set(stored) == set(reported)
        assert {i: d.feedback.sentiment for i, d in stored.items()} == reported
        assert all(len(d.utterances) == 2 for d in stored.values())
        assert store.open_claims() == 0

    # One leaderboard, whichever replica is asked.
    assert boards[0] == boards[1]
    board = json.loads(boards[0])
    assert sorted(row["system"] for row in board) == SYSTEMS
    assert sum(row["battles"] for row in board) == 2 * len(played)
