"""Command line for simulated evaluation runs: `crs-arena simulate ...` (or `python -m simulators ...`).

    crs-arena simulate run --crs NAME[,NAME...] --simulator KIND -n N --max-turns T --seed S [--concurrency C]
        [--rate-aspects]   (the simulator also fills the aspect rating form)
        [--engine threads|ray [--address ADDR] [--task-cpus F]] [--db FILE|URL]
    crs-arena simulate run --resume RUN_ID [--engine ...]   # finish an interrupted run
    crs-arena simulate list     # simulator kinds and systems (with availability)
    crs-arena simulate runs     # evaluation runs recorded in the database
    crs-arena simulate fetch-movielens   # MovieLens-100K for the PEPPER simulator, ahead of first use

Dialogues go to the database of `Settings.from_env()` (ARENA_DB) and are
queued for automatic scoring when the scorer is available.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from statistics import mean
from typing import Any, Optional, Sequence

from arena.runtime.config import reports_bad_settings
from arena.runtime.distributed import ENGINES
from simulators import KINDS, resolve_kind
from webapp.runs.scorer import BackgroundScorer
from webapp.services import Services, build_services

POLL_S = 0.5


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="crs-arena simulate", description="Simulated evaluation of CRSs.")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="simulate dialogues with one or more systems")
    run.add_argument("--crs", default=None, help="system name(s), comma-separated")
    run.add_argument("--simulator", default=None, help=f"one of: {', '.join(KINDS)}")
    run.add_argument("-n", "--dialogues", type=int, default=10, help="dialogues per system (default 10)")
    run.add_argument("--max-turns", type=int, default=None, help="user turns per dialogue (default ARENA_MAX_TURNS)")
    run.add_argument("--seed", type=int, default=0)
    run.add_argument("--concurrency", type=int, default=4, help="dialogues run at once (default 4)")
    run.add_argument("--nlg", choices=("llm", "template"), default="llm",
                     help="ABUS only: messages by the LLM or by templates (template + offline NLU needs no LLM)")
    run.add_argument("--nlu", choices=("llm", "offline"), default=None,
                     help="ABUS only: system acts from the LLM or the offline annotator (default: follows --nlg)")
    run.add_argument("--no-score", action="store_true", help="do not queue automatic scoring")
    run.add_argument("--rate-aspects", action="store_true",
                     help="the simulator fills the aspect rating form at the end of each dialogue (needs an LLM)")
    run.add_argument("--db", default=None, help="database file or postgresql:// URL (default ARENA_DB)")
    run.add_argument("--engine", choices=ENGINES, default="threads",
                     help="threads in this process (default) or one Ray task per dialogue")
    run.add_argument("--address", default=None,
                     help="Ray only: cluster address (e.g. ray://head:10001 or auto; default: a local Ray)")
    run.add_argument("--task-cpus", type=float, default=1.0,
                     help="Ray only: CPUs reserved per dialogue task (below 1 for LLM-bound simulators)")
    run.add_argument("--resume", metavar="RUN_ID", default=None,
                     help="continue an interrupted run with its stored settings, skipping stored dialogues")
    sub.add_parser("list", help="simulator kinds and systems")
    runs = sub.add_parser("runs", help="evaluation runs in the database")
    runs.add_argument("--db", default=None)
    sub.add_parser("fetch-movielens", help="download MovieLens-100K (for PEPPER) into the cache folder now")
    return parser


def _services(db: Optional[str], score: bool = True) -> Services:
    from arena.runtime.config import Settings

    settings = Settings.from_env(db_path=db or None)
    if score:
        try:
            return build_services(settings)
        except ImportError as exc:  # the scoring stack is optional for simulation
            print(f"note: automatic scoring unavailable ({exc}); dialogues are stored unscored", file=sys.stderr)
    return build_services(settings, metrics="")


def summarise(rows: Sequence[dict[str, Any]]) -> str:
    """A per-system table of a finished run."""
    by_system: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_system[row["system"]].append(row)
    lines = [f"{'system':<28} {'dialogues':>9} {'turns':>6} {'satisfied':>9} {'errors':>6} {'R@10':>6} {'PC':>6}"]
    for system, group in sorted(by_system.items()):
        sat = sum(1 for r in group if r.get("feedback") == "satisfied") / len(group)
        recall = [r["recall@10"] for r in group if "recall@10" in r]
        coverage = [r["pc"] for r in group if "pc" in r]
        lines.append(
            f"{system:<28} {len(group):>9} {mean(r['turns'] for r in group):>6.1f} {sat:>9.0%} "
            f"{sum(1 for r in group if r['errors']):>6} "
            f"{(f'{mean(recall):.3f}' if recall else '-'):>6} {(f'{mean(coverage):.3f}' if coverage else '-'):>6}"
        )
    return "\n".join(lines)


def _wait_for_scoring(scorer: BackgroundScorer, timeout_s: float = 1800.0) -> None:
    wait = getattr(scorer, "wait", None)
    if callable(wait) and not wait(timeout=timeout_s):
        print("scoring is still running; unscored dialogues can be scored later with python -m evaluators",
              file=sys.stderr)


def cmd_run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from arena.store import describe_location
    from webapp.runs.evaluation import RunConfig, rating_options
    from webapp.runs.workers import WorkerRecipe

    if args.resume is None and not (args.crs and args.simulator):
        print("error: a new run needs --crs and --simulator (or --resume RUN_ID)", file=sys.stderr)
        return 2
    try:
        kind = resolve_kind(args.simulator) if args.resume is None else None
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    services = _services(args.db, score=not args.no_score)
    manager = services.run_manager(engine=args.engine, ray_address=args.address, task_cpus=args.task_cpus,
                                   worker_recipe=WorkerRecipe(services.settings) if args.engine == "ray" else None)
    config = None if args.resume is not None else RunConfig(
        systems=args.crs.split(","),
        simulator=kind,
        n_dialogues=args.dialogues,
        max_turns=args.max_turns or services.settings.max_turns,
        seed=args.seed,
        concurrency=args.concurrency,
        options={**({"nlg": args.nlg, "nlu": args.nlu or ("llm" if args.nlg == "llm" else "offline")}
                    if kind == "abus" else {}),
                 **(rating_options(services.settings) if args.rate_aspects else {})},
    )
    try:
        run_id = manager.start(config, args.resume, resume=args.resume is not None)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        services.close()
        return 2
    state = manager.status(run_id)
    config = RunConfig.from_dict(state["config"])
    resumed = f", {state['done']} already stored" if args.resume else ""
    print(f"run {run_id}: {config.total} dialogues{resumed}, simulator {config.simulator}, engine {args.engine}, "
          f"database {describe_location(services.store.location)}")
    if services.llm is not None and config.concurrency > services.llm.concurrency:
        print(f"note: at most {services.llm.concurrency} LLM calls run at once; raise ARENA_LLM_CONCURRENCY "
              f"to match --concurrency {config.concurrency}", file=sys.stderr)
    state = manager.status(run_id)
    with tqdm(total=config.total, unit="dialogue", dynamic_ncols=True) as bar:
        try:
            failed = 0
            while manager.is_active(run_id):
                time.sleep(POLL_S)
                state = manager.status(run_id) or state
                if state["failed"] != failed:
                    failed = state["failed"]
                    bar.set_postfix(failed=failed, refresh=False)
                if state["done"] > bar.n:  # redraw on progress only, so logs stay short
                    bar.update(state["done"] - bar.n)
        except KeyboardInterrupt:
            print("\ncancelling: running dialogues stop at their next turn...", file=sys.stderr)
            manager.cancel(run_id)
            manager.wait(run_id)
        state = manager.status(run_id) or state
        if state["done"] > bar.n:
            bar.update(state["done"] - bar.n)
    print(summarise(state["dialogues"]) if state["dialogues"] else "no dialogues")
    print(f"status: {state['status']}; {state['done']} dialogues stored, {state['failed']} with errors")
    if state.get("error"):
        print(f"error: {state['error']}", file=sys.stderr)
    if services.scorer is not None and state["dialogues"]:
        print("waiting for automatic scoring to finish...")
        _wait_for_scoring(services.scorer)
    services.close()
    errored = report_errored(state["dialogues"])
    return 0 if state["status"] in ("finished", "cancelled") and not errored else 1


def report_errored(rows: Sequence[dict[str, Any]]) -> int:
    """One line on stderr per stored dialogue that ended in an error (its first error); how many.

    Such a dialogue is kept (a run's failures are part of its record) but the command does not exit 0
    with it: a run whose dialogues broke is not a run that worked."""
    errored = [row for row in rows if row.get("errors")]
    for row in errored:
        why = row.get("error") or "ended in an error"
        print(f"error: dialogue {row['dialogue_id']} ({row['system']}): {why}", file=sys.stderr)
    return len(errored)


def cmd_list(_: argparse.Namespace) -> int:
    print("simulators:")
    for kind, label in KINDS.items():
        print(f"  {kind:<14} {label}")
    services = _services(None, score=False)
    print("systems:")
    for row in services.registry.status_table():
        why = f" ({row['why']})" if row["why"] else ""
        print(f"  {row['system']:<28} {row['status']}{why}")
    services.close()
    return 0


def cmd_runs(args: argparse.Namespace) -> int:
    from arena.runtime.config import Settings
    from webapp.runs.evaluation import mark_stale
    from arena.store import Store

    store = Store(Settings.from_env(db_path=args.db or None).db_path)
    for run_id, state in store.list_runs():
        held = store.run_lease(run_id)
        state = mark_stale(state, held[1] if held else None)
        config = state.get("config", {})
        print(f"{run_id}  {state.get('status'):<11} {state.get('done')}/{state.get('total')}  "
              f"{config.get('simulator')}  {','.join(config.get('systems', []))}  {state.get('created_at')}")
    return 0


def cmd_fetch_movielens(args: argparse.Namespace) -> int:
    from arena.runtime.config import Settings
    from simulators.movielens import MovieLensUnavailable, fetch_movielens

    try:
        print(fetch_movielens(Settings.from_env().cache_dir))
    except MovieLensUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


@reports_bad_settings
def main(argv: Optional[Sequence[str]] = None) -> int:
    args = _parser().parse_args(argv)
    commands = {"run": cmd_run, "list": cmd_list, "runs": cmd_runs, "fetch-movielens": cmd_fetch_movielens}
    return commands[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
