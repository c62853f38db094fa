"""Turn time with one vs two app replicas on one PostgreSQL database, under the same load.

    HF_HUB_OFFLINE=1 nice -n 10 python benchmarks/replica_turns.py [--sessions 16] [--turns 3] [--delay 0.05]

Starts a throw-away PostgreSQL cluster with its default durability (fsync on),
then, for 1 and for 2 replicas, a fresh database and that many real public
apps, each in its own process (fast fake systems answering after `--delay`
seconds, the store on the shared database). `--sessions` people battle at the
same moment over HTTP (gradio_client, from client processes apart from the
servers): with two replicas half of them go to each, as a load balancer would
spread them. Prints the client round trip per turn (p50, p95) and checks that
every dialogue, rating and vote was stored exactly once.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "battle"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

from battle_support import BattleResult, check_stored_exactly_once, percentile, play_battle  # noqa: E402

SYSTEMS = ("alpha", "beta", "gamma", "delta")


def serve(db: str, delay_s: float, turns: int) -> None:
    """One replica: the public app on the shared database; prints its URL, serves until stdin closes."""
    from arena.runtime.config import Settings
    from arena.llm import FakeProvider, LLMClient, RetryPolicy
    from arena.store import Store
    from battle_support import FakeCatalogCRS, fake_spec, launch
    from crs.registry import CRSRegistry
    from webapp.services import Services

    settings = Settings(db_path=db, llm_provider="fake", max_turns=max(turns, 2), min_battle_s=0.0,
                        burst_votes=10_000, burst_labels=10_000, min_user_turns=1, max_rated_per_user=10_000,
                        max_rated_per_ip=10_000)
    services = Services(settings=settings, store=Store(db),
                        llm=LLMClient(FakeProvider(default="ok"), retry=RetryPolicy(base_delay_s=0.01)),
                        registry=CRSRegistry([fake_spec(FakeCatalogCRS(n, delay_s=delay_s)) for n in SYSTEMS]))
    demo, url = launch(services)
    print(url, flush=True)
    sys.stdin.read()
    demo.close()
    services.store.close()


def drive(url: str, prefix: str, sessions: int, turns: int) -> list[dict]:
    """Client side: `sessions` battles at once against one replica, tagged with `prefix`."""
    choices = ["A", "B", "tie", "both_bad"]
    with ThreadPoolExecutor(max_workers=sessions) as pool:
        futures = [pool.submit(play_battle, url, f"{prefix}{i:03d}", turns=turns, choice=choices[i % 4])
                   for i in range(sessions)]
        return [asdict(f.result()) for f in futures]


def measure(server, replicas: int, sessions: int, turns: int, delay_s: float) -> dict:
    from arena.store import Store

    db = server.create_database(f"replicas{replicas}")
    Store(db).close()  # the schema in place before the replicas start
    here = [sys.executable, __file__]
    apps = [subprocess.Popen([*here, "--serve", db, "--delay", str(delay_s), "--turns", str(turns)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) for _ in range(replicas)]
    try:
        urls = [app.stdout.readline().strip() for app in apps]
        shares = [sessions // replicas + (1 if i < sessions % replicas else 0) for i in range(replicas)]
        started = time.perf_counter()
        clients = [subprocess.Popen([*here, "--drive", url, "--prefix", f"r{i}s", "--sessions", str(n),
                                     "--turns", str(turns)], stdout=subprocess.PIPE, text=True)
                   for i, (url, n) in enumerate(zip(urls, shares))]
        results = []
        for client in clients:
            out, _ = client.communicate()
            results += [BattleResult(**r) for r in json.loads(out.strip().splitlines()[-1])]
        wall = time.perf_counter() - started
    finally:
        for app in apps:
            app.stdin.close()
            app.wait(timeout=60)
    with Store(db) as store:
        problems = check_stored_exactly_once(store, results, turns)
    seconds = [t for r in results for t in r.turn_seconds]
    return {"turns": len(seconds), "wall_s": wall, "p50_ms": 1000 * percentile(seconds, 50),
            "p95_ms": 1000 * percentile(seconds, 95), "problems": problems}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=16)
    parser.add_argument("--turns", type=int, default=3, help="turns per pane")
    parser.add_argument("--delay", type=float, default=0.05, help="fake system answer time, seconds")
    parser.add_argument("--replicas", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--serve", metavar="DB", help=argparse.SUPPRESS)  # one replica's process
    parser.add_argument("--drive", metavar="URL", help=argparse.SUPPRESS)  # one client process
    parser.add_argument("--prefix", default="s", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.delay, args.turns)
        return 0
    if args.drive:
        print(json.dumps(drive(args.drive, args.prefix, args.sessions, args.turns)))
        return 0

    from tests.support.postgres import MISSING, PostgresServer, find_bin_dir

    bin_dir = find_bin_dir()
    if bin_dir is None:
        print(MISSING, file=sys.stderr)
        return 1
    server = PostgresServer(bin_dir, durable=True).start()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"{os.cpu_count()} CPUs, load average {load:.1f}; PostgreSQL (fsync on); fake systems answer in "
          f"{args.delay * 1000:.0f} ms; {args.sessions} battles at once, {args.turns} turns per pane")
    print("| replicas | turns | wall s | turn p50 ms | turn p95 ms | stored exactly once |")
    print("|---|---|---|---|---|---|")
    failed = False
    try:
        for n in args.replicas:
            r = measure(server, n, args.sessions, args.turns, args.delay)
            ok = not r["problems"]
            failed |= not ok
            print(f"| {n} | {r['turns']} | {r['wall_s']:.1f} | {r['p50_ms']:.0f} | {r['p95_ms']:.0f} "
                  f"| {'yes' if ok else 'NO'} |", flush=True)
            for p in r["problems"][:10]:
                print(f"    problem: {p}")
    finally:
        server.stop()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
