"""Scaling out: the thread engine vs Ray on one simulated run, and the store on SQLite vs PostgreSQL.

    nice -n 10 python benchmarks/scale_out.py [--dialogues 100] [--concurrency 8] [--latency 0.3]
                                              [--store-n 1000] [--skip-runs] [--skip-store]

1. The same simulated run (LLM-US users against the local stub LLM server,
   `--latency` s per call, the small genre recommender of sim_concurrency.py)
   with `--engine threads` and with `--engine ray` (a local Ray with 2 CPUs,
   `--concurrency` tasks in flight, 1/concurrency CPU each). Ray is timed on a
   cold start (its worker processes start and build their systems) and again
   warm (same workers), after `ray.init` itself, which is reported apart.
2. Store throughput on a SQLite file (WAL, synchronous=NORMAL) and on a
   throw-away local PostgreSQL 15 cluster with its default durability (fsync
   on): writes from 1 and 8 threads, score merges, reads.
Both pairs are measured in one run, one after the other.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(ROOT), str(HERE)]

from arena.runtime.config import Settings  # noqa: E402
from arena.conversation.crs_interface import CRSSpec  # noqa: E402
from arena.dialogue import Score  # noqa: E402
from arena.llm import LLMClient, OpenAIProvider, RetryPolicy  # noqa: E402
from arena.store import Store  # noqa: E402
from crs.registry import CRSRegistry  # noqa: E402
from simulators import catalog_view  # noqa: E402
from store import make_dialogue, write_from_threads  # noqa: E402  (benchmarks/store.py)
from sim_concurrency import GenreRecommender, stub_user  # noqa: E402
from tests.support.openai_stub_server import OpenAIStubServer  # noqa: E402
from webapp.runs.evaluation import RunConfig, RunManager  # noqa: E402


@dataclass(frozen=True)
class BenchRecipe:
    """The run manager of this benchmark, built the same way in this process and in each Ray worker."""

    db: str
    base_url: str
    concurrency: int

    def __call__(self) -> RunManager:
        llm = LLMClient(OpenAIProvider(self.base_url, default_model="stub-user"), timeout_s=60,
                        retry=RetryPolicy(max_retries=2, base_delay_s=0.1), concurrency=self.concurrency)
        registry = CRSRegistry([CRSSpec("genre-rec", "bench", "redial", "benchmark system", GenreRecommender)])
        return RunManager(store=Store(self.db), llm=llm, settings=Settings(db_path=self.db, turn_timeout_s=60),
                          registry=registry)


def simulated_run(recipe: BenchRecipe, engine: str, n: int, max_turns: int, run_id: str) -> dict:
    local = recipe()
    manager = RunManager(store=local.store, llm=local.llm, settings=local.settings, registry=local.registry,
                         engine=engine, worker_recipe=recipe, task_cpus=1.0 / recipe.concurrency)
    config = RunConfig(systems=["genre-rec"], simulator="llm_us", n_dialogues=n, max_turns=max_turns, seed=1,
                       concurrency=recipe.concurrency)
    started = time.perf_counter()
    state = manager.run(config, run_id=run_id)
    wall = time.perf_counter() - started
    stored = [d for d in local.store.list_dialogues() if d.metadata.get("run_id") == run_id]
    return {"engine": engine, "wall_s": wall, "done": state["done"], "failed": state["failed"],
            "stored": len(stored), "turns": sum(d.num_turns for d in stored)}


def runs(args: argparse.Namespace) -> None:
    import ray

    from arena.runtime import distributed
    catalog_view("redial")
    with OpenAIStubServer(default=stub_user, latency_s=args.latency) as server, \
            tempfile.TemporaryDirectory() as tmp:
        recipe = BenchRecipe(str(Path(tmp) / "runs.sqlite3"), server.base_url, args.concurrency)
        rows = [simulated_run(recipe, "threads", args.dialogues, args.max_turns, "run-threads")]
        started = time.perf_counter()
        distributed.connect(num_cpus=2)
        ray_init = time.perf_counter() - started
        rows.append(simulated_run(recipe, "ray", args.dialogues, args.max_turns, "run-ray-cold"))
        rows.append(simulated_run(recipe, "ray", args.dialogues, args.max_turns, "run-ray-warm"))
        calls = len(server.chat_requests)
        ray.shutdown()
    print(f"{args.dialogues} LLM-US dialogues, max {args.max_turns} turns, {args.latency * 1000:.0f} ms per LLM "
          f"call, {args.concurrency} dialogues at once; {calls} LLM calls in all; ray.init {ray_init:.1f} s")
    print(f"{'engine':<12} {'wall s':>8} {'stored':>7} {'failed':>6} {'turns':>6} {'dialogues/s':>11}")
    for label, r in zip(("threads", "ray (cold)", "ray (warm)"), rows):
        print(f"{label:<12} {r['wall_s']:>8.1f} {r['stored']:>7} {r['failed']:>6} {r['turns']:>6} "
              f"{r['stored'] / r['wall_s']:>11.2f}")


def store_throughput(location: str, n: int) -> dict[str, float]:
    store = Store(location)
    out = {}

    def timed(label, count, fn):
        started = time.perf_counter()
        fn()
        out[label] = count / (time.perf_counter() - started)

    timed("save_dialogue, 1 thread", n, lambda: [store.save_dialogue(make_dialogue(i)) for i in range(n)])
    per = n // 8
    timed("save_dialogue, 8 threads", per * 8, lambda: write_from_threads(store, n, per))
    ids = [d.dialogue_id for d in store.list_dialogues(limit=500)]
    timed("save_scores, 1 thread", len(ids), lambda: [store.save_scores(
        i, {"core.overall": Score(value=70.0, scorer="core", version="1")}) for i in ids])
    timed("get_dialogue", len(ids), lambda: [store.get_dialogue(i) for i in ids])
    total = store.count_dialogues()
    timed("list_dialogues (all, with scores)", total, lambda: store.list_dialogues())
    store.close()
    return out


def stores(args: argparse.Namespace) -> None:
    from tests.support.postgres import PostgresServer, find_bin_dir

    with tempfile.TemporaryDirectory() as tmp:
        sqlite = store_throughput(str(Path(tmp) / "bench.sqlite3"), args.store_n)
    server = PostgresServer(find_bin_dir(), durable=True).start()
    try:
        postgres = store_throughput(server.create_database("bench"), args.store_n)
    finally:
        server.stop()
    print(f"store throughput, {args.store_n} dialogues of 8 turns (operations per second)")
    print(f"{'operation':<36} {'SQLite':>9} {'PostgreSQL':>11} {'PG/SQLite':>9}")
    for label in sqlite:
        print(f"{label:<36} {sqlite[label]:>9.0f} {postgres[label]:>11.0f} {postgres[label] / sqlite[label]:>9.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dialogues", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--latency", type=float, default=0.3, help="seconds per LLM call")
    parser.add_argument("--max-turns", type=int, default=3)
    parser.add_argument("--store-n", type=int, default=1000)
    parser.add_argument("--skip-runs", action="store_true")
    parser.add_argument("--skip-store", action="store_true")
    args = parser.parse_args()
    if not args.skip_store:
        stores(args)
    if not args.skip_runs:
        runs(args)


if __name__ == "__main__":
    main()
