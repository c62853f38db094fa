"""One app replica in its own process, for the multi-process test: plays battles, then reports.

    python replica_worker.py DB_URL NAME OPENED BATTLES THREADS

Builds the app's `Services` on the shared database and plays battles through
the Battle tab's own functions (draw, chat in both panes, rate both, vote).
Step by step, each step after a line on stdin (so the test can line the
replicas up): open OPENED battles and print their pairs (people who started
and have not voted yet); finish them and play BATTLES more, several at once,
and print what was stored; print the leaderboard this replica sees.
"""

from __future__ import annotations

import json
import random
import sys
from concurrent.futures import ThreadPoolExecutor

from arena.runtime.config import Settings
from arena.llm import FakeProvider, LLMClient, RetryPolicy
from arena.store import Store
from crs.registry import CRSRegistry
from webapp.leaderboard.table import compute_leaderboard
from webapp.sessions.pairing import SharedPairScheduler
from webapp.services import Services
from webapp.sessions.battle import rate, send, start_battle, vote

from battle_support import FakeCatalogCRS, fake_spec

SYSTEMS = ["alpha", "bravo", "charlie", "delta"]


def main(db: str, name: str, opened: int, battles: int, threads: int) -> None:
    # One scripted process plays every battle without a request: label, battle and vote limits (counted
    # for both replicas in the store) and flags would only measure that (tests/safety has their tests).
    settings = Settings(db_path=db, llm_provider="fake", max_rated_per_user=10_000, max_rated_per_ip=10_000,
                        max_battles_per_user=10_000, max_battles_per_ip=10_000, max_votes_per_user=10_000,
                        max_votes_per_ip=10_000, burst_labels=10_000, min_user_turns=1)
    services = Services(settings=settings, store=Store(db),
                        llm=LLMClient(FakeProvider(default="ok"), retry=RetryPolicy(base_delay_s=0.01)),
                        registry=CRSRegistry([fake_spec(FakeCatalogCRS(s, delay_s=0.01)) for s in SYSTEMS]))
    # The strict least-played rule: an exact balance across the two processes shows that every draw
    # saw the other's claims (the weighted random rule of production is tested in test_battle_pairing).
    services.pair_scheduler = SharedPairScheduler(services.store, temperature=0, uniform=0)

    def open_battle(i: int):
        return start_battle(services, f"{name}-user-{i}")

    def play(i: int, session=None) -> dict:
        rng = random.Random(f"{name}-{i}")
        user = f"{name}-user-{i}"
        session = session or start_battle(services, user)
        for side in ("A", "B"):
            send(services, session, side, f"a film like Alien please ({name} {i})")
            rate(services, session, side, rng.choice(["satisfied", "frustrated"]))
        cast = vote(services, session, rng.choice(["A", "B", "tie", "both_bad"]), "", user)
        return {"vote": cast.vote_id, "pair": [cast.crs_a, cast.crs_b],
                "dialogues": [d.dialogue_id for d in session.dialogues.values()],
                "sentiments": {d.dialogue_id: d.feedback.sentiment for d in session.dialogues.values()}}

    sys.stdin.readline()
    with ThreadPoolExecutor(threads) as pool:
        sessions = list(pool.map(open_battle, range(opened)))
    print(json.dumps({"opened": [[s.dialogues["A"].crs_id, s.dialogues["B"].crs_id] for s in sessions]}), flush=True)
    sys.stdin.readline()
    with ThreadPoolExecutor(threads) as pool:
        played = list(pool.map(play, range(opened), sessions))
        played += list(pool.map(play, range(opened, opened + battles)))
    print(json.dumps({"played": played}), flush=True)
    sys.stdin.readline()
    table = compute_leaderboard(services.store.list_dialogues(), services.store.list_votes(), user_kind="human")
    print(table.to_json(orient="records"), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
