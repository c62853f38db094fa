"""Load test of the public app with an LLM endpoint: N concurrent battle sessions, scoring kept up.

Systems and the background scorer's act annotator call an OpenAI-compatible
stub server (`tests/support/openai_stub_server.py`, fixed latency per call);
clients drive the real public app over HTTP from a separate process. Prints,
per configuration, how long the sessions took, the turn round trip, and how
long the durable scoring queue needed after the last vote to score every
dialogue; and checks that every dialogue, rating and vote was stored exactly once.

    HF_HUB_OFFLINE=1 nice -n 10 python benchmarks/public_load.py --sessions 32 --turns 2 --workers 1 2 4
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "safety"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

from public_load import run_public_load  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, nargs="+", default=[32])
    parser.add_argument("--turns", type=int, default=2, help="turns per pane")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4], help="scoring workers")
    parser.add_argument("--latency", type=float, default=0.05, help="stub LLM latency per call, seconds")
    args = parser.parse_args()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"{os.cpu_count()} CPUs, load average {load:.1f}; stub LLM latency {args.latency * 1000:.0f} ms per call; "
          f"{args.turns} turns per pane, 2 panes per session; metrics acts,rdl,srrr,sr (LLM act annotator)")
    print("| sessions | scoring workers | sessions played s | turn p50 ms | turn p95 ms | LLM calls "
          "| backlog drained after last vote s | stored exactly once, all scored |")
    print("|---|---|---|---|---|---|---|---|")
    failed = False
    for n in args.sessions:
        for workers in args.workers:
            with tempfile.TemporaryDirectory() as tmp:
                r = run_public_load(Path(tmp), n, args.turns, workers, stub_latency_s=args.latency)
            ok = not r["problems"]
            failed |= not ok
            print(f"| {n} | {workers} | {r['played_s']:.1f} | {r['turn_p50_ms']:.0f} | {r['turn_p95_ms']:.0f} "
                  f"| {r['llm_calls']} | {r['drain_after_last_vote_s']:.1f} | {'yes' if ok else 'NO'} |", flush=True)
            for p in r["problems"][:10]:
                print(f"    problem: {p}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
