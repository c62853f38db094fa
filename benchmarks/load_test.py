"""Load test of the Battle tab: N people battling at once against fast fake systems.

Launches the real app in-process on 127.0.0.1 (fake systems that answer after
a fixed delay) and drives N concurrent browser sessions through gradio_client
from a separate process (each session: both panes chatting at the same time,
both ratings, a vote with a comment). It then checks that every dialogue,
rating and vote was stored exactly once and unmixed, and prints the latency
the arena adds per turn (client round trip minus the system's answer time).

For scale, the same clients also drive a bare Gradio echo app with the same
pattern: what Gradio and the client cost on this machine before any arena code.

    HF_HUB_OFFLINE=1 python benchmarks/load_test.py --sessions 1 16 32 --turns 3
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "battle"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

from battle_support import (  # noqa: E402
    BattleResult,
    FakeCatalogCRS,
    check_stored_exactly_once,
    free_port,
    launch,
    make_services,
    percentile,
    run_sessions,
)


def _client_process(mode: str, url: str, sessions: int, turns: int) -> list[dict]:
    """Run the clients in a separate process, so they do not share the server's interpreter."""
    out = subprocess.run(
        [sys.executable, __file__, f"--{mode}", url, "--sessions", str(sessions), "--turns", str(turns)],
        check=True, capture_output=True, text=True,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def _echo_sessions(url: str, sessions: int, turns: int) -> list[dict]:
    """Client side of the baseline: the battle's request pattern against a bare echo endpoint."""
    from concurrent.futures import ThreadPoolExecutor

    from gradio_client import Client

    def session(i: int) -> dict:
        client = Client(url, verbose=False, httpx_kwargs={"timeout": 120})
        seconds: list[float] = []
        for turn in range(turns):
            for side in "AB":
                started = time.perf_counter()
                client.predict(f"s{i} {side} {turn}", api_name="/echo")
                seconds.append(time.perf_counter() - started)
        return {"turn_seconds": seconds}

    with ThreadPoolExecutor(max_workers=sessions) as pool:
        return list(pool.map(session, range(sessions)))


def _summary(seconds: list[float], wall: float) -> dict:
    return {"turns": len(seconds), "wall_s": wall, "p50_ms": 1000 * percentile(seconds, 50),
            "p95_ms": 1000 * percentile(seconds, 95), "max_ms": 1000 * max(seconds)}


def measure_battle(sessions: int, turns: int, delay_s: float) -> dict:
    import webapp.ui.battle_tab as battle_tab

    handler_seconds: list[float] = []
    original_send = battle_tab.send

    def timed_send(*args, **kwargs):  # server-side time of the arena's turn handler
        started = time.perf_counter()
        try:
            return original_send(*args, **kwargs)
        finally:
            handler_seconds.append(time.perf_counter() - started - delay_s)

    battle_tab.send = timed_send
    with tempfile.TemporaryDirectory() as tmp:
        systems = [FakeCatalogCRS(n, delay_s=delay_s) for n in ("alpha", "beta", "gamma", "delta")]
        services = make_services(Path(tmp), systems, max_turns=max(turns, 2))
        demo, url = launch(services)
        try:
            started = time.perf_counter()
            results = [BattleResult(**r) for r in _client_process("drive", url, sessions, turns)]
            wall = time.perf_counter() - started
            problems = check_stored_exactly_once(services.store, results, turns)
        finally:
            demo.close()
            services.store.close()
            battle_tab.send = original_send
    added = [t - delay_s for r in results for t in r.turn_seconds]
    return {**_summary(added, wall), "handler_p95_ms": 1000 * percentile(handler_seconds, 95),
            "problems": problems}


def measure_echo(sessions: int, turns: int) -> dict:
    import gradio as gr

    with gr.Blocks() as demo:
        box_in, box_out = gr.Textbox(), gr.Textbox()
        box_in.submit(lambda text: text, box_in, box_out, api_name="echo")
    demo.queue(default_concurrency_limit=32)
    port = free_port()
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    try:
        started = time.perf_counter()
        results = _client_process("drive-echo", f"http://127.0.0.1:{port}/", sessions, turns)
        wall = time.perf_counter() - started
    finally:
        demo.close()
    return _summary([t for r in results for t in r["turn_seconds"]], wall)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, nargs="+", default=[1, 16, 32])
    parser.add_argument("--turns", type=int, default=3, help="turns per pane")
    parser.add_argument("--delay", type=float, default=0.05, help="fake system answer time, seconds")
    parser.add_argument("--no-baseline", action="store_true", help="skip the bare Gradio echo baseline")
    parser.add_argument("--drive", metavar="URL", help=argparse.SUPPRESS)  # client side of a battle run
    parser.add_argument("--drive-echo", metavar="URL", help=argparse.SUPPRESS)  # client side of the baseline
    args = parser.parse_args()
    if args.drive:
        print(json.dumps([asdict(r) for r in run_sessions(args.drive, args.sessions[0], turns=args.turns)]))
        return 0
    if args.drive_echo:
        print(json.dumps(_echo_sessions(args.drive_echo, args.sessions[0], args.turns)))
        return 0

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"{os.cpu_count()} CPUs, load average {load:.1f}; fake system answer time "
          f"{args.delay * 1000:.0f} ms; {args.turns} turns per pane, 2 panes per session")
    print("| concurrent sessions | app | turns | wall s | added p50 ms | added p95 ms | added max ms "
          "| handler p95 ms | stored exactly once |")
    print("|---|---|---|---|---|---|---|---|---|")
    failed = False
    for n in args.sessions:
        r = measure_battle(n, args.turns, args.delay)
        ok = not r["problems"]
        failed |= not ok
        print(f"| {n} | arena battle | {r['turns']} | {r['wall_s']:.1f} | {r['p50_ms']:.0f} "
              f"| {r['p95_ms']:.0f} | {r['max_ms']:.0f} | {r['handler_p95_ms']:.0f} "
              f"| {'yes' if ok else 'NO'} |", flush=True)
        for p in r["problems"][:10]:
            print(f"    problem: {p}")
        if not args.no_baseline:
            e = measure_echo(n, args.turns)
            print(f"| {n} | bare Gradio echo | {e['turns']} | {e['wall_s']:.1f} | {e['p50_ms']:.0f} "
                  f"| {e['p95_ms']:.0f} | {e['max_ms']:.0f} | – | – |", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
