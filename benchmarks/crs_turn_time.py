"""Offline turn time of ChatCRS (bundled model, grounded replies) and CRB-CRS.

Loads each system through the registry as the app does (not timed), answers
two warm-up turns, then times `respond` on --turns contexts of the iEvaLM
ReDial file (used here only as realistic dialogue contexts; nothing is
learnt from it). The LLM response cache is off, so every ChatCRS turn runs
the model. Targets: ChatCRS p95 <= 1 s and CRB-CRS p95 <= 0.2 s, the state update included.
Besides wall-clock time it reports the CPU time of each turn (this process,
all threads), which on a machine shared with other work is closer to what the
turn costs than the wall clock.

    HF_HUB_OFFLINE=1 nice -n 10 python benchmarks/crs_turn_time.py [--turns 50] [--write]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.runtime.config import Settings  # noqa: E402
from arena.llm import build_client  # noqa: E402
from crs.registry import CRSRegistry  # noqa: E402
from crs.reply_cli import context_dialogue  # noqa: E402
from crs.systems import system_specs  # noqa: E402

CONTEXTS = ROOT / "assets" / "catalogs" / "redial_eval" / "test_data_processed.jsonl"
# Raw output, not tracked: the figures of record are in BENCHMARKS.md.
RESULTS = Path(__file__).resolve().parent / "out" / "crs_turn_time.md"
TARGETS = {"chatcrs_redial": (None, 1.0), "crb_crs_redial": (None, 0.2)}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def time_system(registry: CRSRegistry, name: str, contexts: list[list[str]]) -> dict[str, float]:
    started = time.perf_counter()
    crs = registry.get(name)
    load_s = time.perf_counter() - started
    for context in contexts[:2]:
        crs.respond(context_dialogue(context, crs))
    times, cpu = [], []
    for context in contexts[2:]:
        dialogue = context_dialogue(context, crs)
        started, started_cpu = time.perf_counter(), time.process_time()
        crs.respond(dialogue)
        times.append(time.perf_counter() - started)
        cpu.append(time.process_time() - started_cpu)
    return {
        "load_s": load_s, "turns": len(times), "p50": statistics.median(times),
        "p95": percentile(times, 0.95), "mean": statistics.fmean(times), "max": max(times),
        "cpu_p50": statistics.median(cpu), "cpu_p95": percentile(cpu, 0.95),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--systems", default="crb_crs_redial,chatcrs_redial")
    parser.add_argument("--act-reader", choices=["learnt", "rules"], default="learnt",
                        help="how ChatCRS reads the user's act (the app: the learnt act model; CRB-CRS: rules)")
    parser.add_argument("--write", action="store_true", help=f"write the table to {RESULTS}")
    args = parser.parse_args(argv)
    with CONTEXTS.open(encoding="utf-8") as lines:
        contexts = [json.loads(line)["context"] for line, _ in zip(lines, range(args.turns + 2))]
    cache = Path(tempfile.mkdtemp(prefix="crs-turn-time-"))
    settings = Settings.from_env(
        {**os.environ, "ARENA_LLM_PROVIDER": "local", "ARENA_LLM_CACHE": "0",
         "ARENA_CACHE_DIR": os.environ.get("ARENA_CACHE_DIR", str(cache))}
    )
    act_reader = None
    if args.act_reader == "learnt":
        from evaluators.acts.intent_readers import UserActReader

        act_reader = UserActReader()
    registry = CRSRegistry(system_specs(settings, build_client(settings), act_reader=act_reader))
    load_before = os.getloadavg()[0]
    rows = {name: time_system(registry, name, contexts) for name in args.systems.split(",")}
    load_after = os.getloadavg()[0]
    lines = [
        f"Machine: {platform.machine()}, {os.cpu_count()} CPU cores, no GPU, Python {platform.python_version()}; "
        f"run under `nice -n 10` on a machine shared with other work "
        f"(load average {load_before:.1f} before, {load_after:.1f} after).",
        f"Command: `python benchmarks/crs_turn_time.py --turns {args.turns} --act-reader {args.act_reader}`; "
        f"{args.turns} timed turns "
        "per system after two warm-up turns, LLM response cache off.",
        "",
        "| system | turns | p50 (s) | p95 (s) | mean (s) | max (s) | target (wall clock) | CPU p50 / p95 (s) | load (s) |",
        "|---|---:|---:|---:|---:|---:|---|---:|---:|",
    ]
    for name, row in rows.items():
        p50_target, p95_target = TARGETS.get(name, (None, None))
        target = ", ".join(
            f"{label} <= {value:g} s {'met' if row[label] <= value else 'MISSED'}"
            for label, value in (("p50", p50_target), ("p95", p95_target)) if value is not None
        )
        lines.append(
            f"| {name} | {row['turns']} | {row['p50']:.2f} | {row['p95']:.2f} | {row['mean']:.2f} | "
            f"{row['max']:.2f} | {target} | {row['cpu_p50']:.2f} / {row['cpu_p95']:.2f} | {row['load_s']:.1f} |"
        )
    table = "\n".join(lines)
    print(table)
    if args.write:
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text("# CRS turn time\n\n" + table + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
