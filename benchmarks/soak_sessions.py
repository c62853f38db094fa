"""Memory of the public app through many short sessions and then an idle spell.

A server process (the real public app, scripted systems, its own SQLite file) is
started as the app starts: its first step is the app's own
(`webapp.memory_allocator.restart_on_system_allocator`, which `python app.py`
and `crs-arena serve` run), so it runs on the allocators a deployment gets.
Clients in this process (one browser session each, 8 at a time, through Gradio's
queue API as a page calls it) each open a chat, send one message and leave. The
server's resident memory (VmRSS) is read after a warm-up of 20 sessions once
they were forgotten (the baseline), right after the N sessions, and after an
idle spell long enough for idle sessions to be forgotten (ARENA_SESSION_IDLE, set
short here). The target: after the idle spell, within +10% of the baseline in
every one of `--runs` runs (a fresh server each). `--compare` adds a run with
Python's own allocator (PYTHONMALLOC=pymalloc, which the start keeps) and one
whose server never forgets a session (Gradio's own behaviour). Prints a Markdown
table and whether the target was met.

    HF_HUB_OFFLINE=1 nice -n 10 python benchmarks/soak_sessions.py --sessions 1000 --runs 2
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IDLE_S = 30.0  # the smallest ARENA_SESSION_IDLE allowed
TARGET_PCT = 10.0  # after the idle spell, at most this much above the baseline


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(port: int, folder: Path, idle_s: float) -> None:
    """The server process: the public app on `port`, until killed, started as the app starts."""
    sys.path.insert(0, str(ROOT))
    from webapp.memory_allocator import restart_on_system_allocator

    restart_on_system_allocator()  # as `python app.py` does first: the process may start again here
    sys.path.insert(0, str(ROOT / "tests" / "battle"))
    from battle_support import FakeCatalogCRS, make_services

    from webapp.one_port import serve as run
    from webapp.serve import build_app

    # A short turn timeout, so that the idle limit is not raised to twice it (`webapp.serve.build_app`).
    services = make_services(folder, [FakeCatalogCRS("alpha"), FakeCatalogCRS("beta")], max_turns=5,
                             session_idle_s=idle_s, turn_timeout_s=idle_s / 2)
    run(build_app(services), host="127.0.0.1", port=port, on_ready=lambda: print("READY", flush=True))


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def call(client, config: dict, api_name: str, args: list, session: str) -> dict:
    """One event as the page sends it (state inputs are held by the server), answered in full."""
    kinds = {c["id"]: c["type"] for c in config["components"]}
    fn, dep = next((dep.get("id", i), dep) for i, dep in enumerate(config["dependencies"])
                   if dep.get("api_name") == api_name)
    given = iter(args)
    data = [None if kinds[c] == "state" else next(given, None) for c in dep["inputs"]]
    client.post("/gradio_api/queue/join", json={"data": data, "fn_index": fn, "session_hash": session,
                                                "event_data": None, "trigger_id": None}).raise_for_status()
    with client.stream("GET", "/gradio_api/queue/data", params={"session_hash": session}) as stream:
        for line in stream.iter_lines():
            if line.startswith("data:"):
                message = json.loads(line[5:])
                if message.get("msg") == "process_completed":
                    if not message.get("success"):
                        raise RuntimeError(f"{api_name} failed: {message}")
                    return message["output"]
    raise RuntimeError(f"{api_name}: no answer")


def sessions(url: str, n: int, workers: int = 8) -> float:
    import httpx

    with httpx.Client(base_url=url, timeout=120, limits=httpx.Limits(max_connections=workers * 2)) as client:
        config = client.get("/config").json()

        def one(_: int) -> None:
            session = secrets.token_hex(6)
            call(client, config, "chat_start", ["alpha"], session)
            call(client, config, "chat_send", ["a comedy from the nineties, please"], session)

        started = time.monotonic()
        with ThreadPoolExecutor(workers) as pool:
            list(pool.map(one, range(n)))
        return time.monotonic() - started


def run(n: int, idle_s: float, keep: bool, allocator: str | None = None) -> dict[str, float]:
    """One fresh server through the soak; `allocator` set names PYTHONMALLOC for it (else the app's start
    chooses, as in a deployment)."""
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="arena-soak-") as folder:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONMALLOC", "ARROW_DEFAULT_MEMORY_POOL")}
        env.update({"HF_HUB_OFFLINE": "1", "GRADIO_ANALYTICS_ENABLED": "False"})
        if allocator:
            env["PYTHONMALLOC"] = allocator
        server = subprocess.Popen([sys.executable, __file__, "--serve", str(port), "--folder", folder,
                                   "--idle-s", str(10 ** 7 if keep else idle_s)],
                                  cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        ready = threading.Event()
        threading.Thread(target=lambda: [ready.set() for line in server.stdout if "READY" in line],
                         daemon=True).start()
        try:
            if not ready.wait(300):
                raise RuntimeError("the server did not start")
            url = f"http://127.0.0.1:{port}"
            sessions(url, 20)
            time.sleep(idle_s * 1.5 + 10)  # the warm-up's sessions forgotten (when the server forgets)
            base = rss_mb(server.pid)
            took = sessions(url, n)
            peak = rss_mb(server.pid)
            time.sleep(idle_s * 1.5 + 10)
            after = rss_mb(server.pid)
        finally:
            server.terminate()
            server.wait(30)
    return {"base": base, "peak": peak, "after": after, "took": took}


def growth_pct(r: dict[str, float]) -> float:
    return 100 * (r["after"] - r["base"]) / r["base"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=2, help="fresh servers started as the app starts")
    parser.add_argument("--idle-s", type=float, default=IDLE_S)
    parser.add_argument("--compare", action="store_true",
                        help="also run a server on Python's allocator and one that never forgets a session")
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.folder, args.idle_s)
        return 0
    rows = [(f"the app's start (run {i + 1})", run(args.sessions, args.idle_s, keep=False))
            for i in range(args.runs)]
    judged = [r for _, r in rows]
    if args.compare:
        rows.append(("Python's allocator (PYTHONMALLOC=pymalloc)",
                     run(args.sessions, args.idle_s, keep=False, allocator="pymalloc")))
        rows.append(("keeps every session, the app's start", run(args.sessions, args.idle_s, keep=True)))
    print(f"| server | sessions | took s | RSS start MB | after sessions MB | after {args.idle_s * 1.5 + 10:.0f} s idle MB "
          "| after idle vs start |")
    print("|---|---|---|---|---|---|---|")
    for name, r in rows:
        print(f"| {name} | {args.sessions} | {r['took']:.0f} | {r['base']:.0f} | {r['peak']:.0f} | {r['after']:.0f} "
              f"| {growth_pct(r):+.1f}% |")
    if judged:
        met = sum(growth_pct(r) <= TARGET_PCT for r in judged)
        print(f"\ntarget (after idle within +{TARGET_PCT:.0f}% of start, the app's start, every run): "
              f"{'met' if met == len(judged) else 'not met'} ({met} of {len(judged)} runs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
