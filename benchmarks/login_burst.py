"""Public request latency while one address guesses the researcher password in a burst.

The one-port app (public pages at `/`, researcher pages at `/admin`, the login
limit counted in the store, the default PBKDF2 cost of 200,000 iterations and
the default lockout of 10 failures) runs in its own process. This process
times sequential public requests (`GET /`, the page a visitor opens) while the
server is idle (before and after the burst's process has started), then while
that process sends N simultaneous wrong logins
from one address; it prints p50/p95 for both, their ratio (the target is at
most 1.5x), how many guesses got a password check, and how long the burst took.

    HF_HUB_OFFLINE=1 nice -n 10 python benchmarks/login_burst.py --bursts 32 200 --rounds 3
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "battle"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

PASSWORD = "correct horse battery staple"


def serve(folder: str, port: int) -> None:
    """The app as deployed (one port, login limit in the store), with scripted systems."""
    from battle_support import FakeCatalogCRS, make_services

    from webapp.one_port import serve as serve_app
    from webapp.protection.admin_auth import admin_checker, hash_password
    from webapp.serve import build_app

    services = make_services(Path(folder), [FakeCatalogCRS("alpha"), FakeCatalogCRS("beta")],
                             admin_users=("ada",), admin_password_hash=hash_password(PASSWORD))
    app = build_app(services, admin_auth=admin_checker(services.settings))
    serve_app(app, host="127.0.0.1", port=port, proxies=(), on_ready=lambda: print("ready", flush=True))


def guesses(url: str, count: int, ready: Any, go_on: Any, out: Any) -> None:
    import httpx

    ready.set()  # imported and started: the burst itself is all this process does from here
    go_on.wait()

    async def go() -> list[int]:
        async with httpx.AsyncClient(timeout=300, limits=httpx.Limits(max_connections=count)) as client:
            answers = await asyncio.gather(*(client.post(url + "/admin/login",
                                                         data={"username": "ada", "password": f"guess{i}"})
                                             for i in range(count)))
        return [a.status_code for a in answers]

    started = time.monotonic()
    codes = asyncio.run(go())
    out.put((codes, time.monotonic() - started))


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]


def probe(client, url: str) -> float:
    started = time.perf_counter()
    response = client.get(url + "/")
    response.raise_for_status()
    return (time.perf_counter() - started) * 1000


def main() -> int:
    import httpx

    from tests.support.asgi_server import free_port

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bursts", type=int, nargs="+", default=[32, 200], help="simultaneous guesses")
    parser.add_argument("--idle", type=int, default=200, help="public requests timed while idle")
    parser.add_argument("--rounds", type=int, default=1, help="runs of each burst size (a row each)")
    parser.add_argument("--trace", action="store_true", help="each request's time during the burst (stderr)")
    args = parser.parse_args()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"{os.cpu_count()} CPUs, load average {load:.1f}; PBKDF2 200,000 iterations; lockout after 10 failures")
    print("| guesses at once | password checks | answered 429 | burst s | idle p50 / p95 ms "
          "| during burst p50 / p95 ms (requests) | p95 ratio |")
    print("|---|---|---|---|---|---|---|")
    failed = False
    ctx = multiprocessing.get_context("spawn")
    for count in [n for n in args.bursts for _ in range(args.rounds)]:
        with tempfile.TemporaryDirectory() as folder:
            port = free_port()
            log = open(Path(folder) / "server.log", "w")
            server = subprocess.Popen(
                [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(ROOT)!r}); "
                 f"from benchmarks.login_burst import serve; serve({folder!r}, {port})"],
                stdout=subprocess.PIPE, stderr=log, text=True, cwd=ROOT)
            try:
                assert server.stdout.readline().strip() == "ready", "the server did not start"
                url = f"http://127.0.0.1:{port}"
                with httpx.Client(timeout=60) as client:
                    for _ in range(20):  # warm up
                        probe(client, url)
                    idle = [probe(client, url) for _ in range(args.idle)]
                    out, ready, go_on = ctx.Queue(), ctx.Event(), ctx.Event()
                    burst = ctx.Process(target=guesses, args=(url, count, ready, go_on, out))
                    burst.start()
                    ready.wait(120)
                    time.sleep(2)  # the new process's start-up is over
                    idle += [probe(client, url) for _ in range(args.idle)]  # idle again, just before
                    go_on.set()
                    during, began = [], time.monotonic()
                    while burst.is_alive() and out.empty():
                        during.append(probe(client, url))
                        if args.trace:
                            print(f"  {time.monotonic() - began:6.2f} s {during[-1]:7.1f} ms", file=sys.stderr)
                    codes, took = out.get(timeout=600)
                    burst.join()
            finally:
                server.terminate()
                server.wait(timeout=60)
                log.close()
            # Each password check that failed is logged once by the server; the check that starts the
            # lockout is answered 429, so the answers alone undercount the checks by one.
            checks = (Path(folder) / "server.log").read_text().count("researcher login refused")
        idle_p50, idle_p95 = percentiles(idle)
        busy_p50, busy_p95 = percentiles(during)
        ratio = busy_p95 / idle_p95
        failed |= checks > 10 or ratio > 1.5
        print(f"| {count} | {checks} | {codes.count(429)} | {took:.1f} | {idle_p50:.1f} / {idle_p95:.1f} "
              f"| {busy_p50:.1f} / {busy_p95:.1f} ({len(during)}) | {ratio:.2f} |", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
