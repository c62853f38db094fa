"""Memory of one replica under a long mixed load: chat, battles, boards, exports and a study.

A server process (the real one-port app: public pages, the study page and the
researcher pages behind their login; scripted systems; its own SQLite file) is
started as the app starts (`webapp.memory_allocator.restart_on_system_allocator`).
Client threads in this process each loop, for `--minutes`, over one visit at a
time, each visit a new browser session through Gradio's queue API as a page
calls it (gradio_client), chosen by weight:

- chat: open a chat, two messages, a rating;
- battle: two turns in each pane, both ratings, a vote with a comment;
- board: the leaderboard, read;
- export: a researcher logs in and prepares the corpus download;
- study: a new worker enters the study, consents, chats, rates and submits.

A pause after each visit keeps the rate low (the machine is shared). With
`--rate N` the visits are paced instead: N visits a minute across all clients,
one starting every 60/N seconds on a common schedule (a client free earlier
waits for the next start), so the ten-minute level and the end are measured
under the same load whatever else the machine does meanwhile. The schedule
never bursts to catch up: starts missed while every client was busy are counted
(`behind`) and skipped, and the report gives the visits a minute achieved before
and after the ten-minute mark, so a machine that could not hold N shows it. The
server's resident memory (VmRSS) is read every `--sample-s` seconds. The rule:
from the ten-minute mark on, RSS stays within +20% of its level at ten minutes
(the last sample and the largest). With `--trace`, the server keeps a
`tracemalloc` trace (started once the app is built) and writes every
`--trace-every-min` minutes the sources whose live memory grew most since it
was ready (`--trace-out`).

    HF_HUB_OFFLINE=1 nice -n 10 python benchmarks/mixed_soak.py --minutes 30 --clients 4 --rate 40
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_PCT = 20.0
BASELINE_MIN = 10.0
PASSWORD = "a long enough password for the soak"
WEIGHTS = {"chat": 4, "battle": 3, "board": 2, "export": 1, "study": 2}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(port: int, folder: Path, trace_out: str | None, trace_every_s: float, keep_closed: bool) -> None:
    """The server process, until killed, started as the app starts."""
    sys.path.insert(0, str(ROOT))
    from webapp.memory_allocator import restart_on_system_allocator

    restart_on_system_allocator()
    sys.path.insert(0, str(ROOT / "tests" / "battle"))
    sys.path.insert(0, str(ROOT / "tests" / "study"))
    from battle_support import FakeCatalogCRS, make_services
    from study_support import publish

    from webapp.one_port import serve as run
    from webapp.protection.admin_auth import admin_checker, hash_password
    from webapp.serve import build_app

    services = make_services(folder, [FakeCatalogCRS(n) for n in ("alpha", "beta", "gamma")], max_turns=6,
                             admin_users=("ada",), admin_password_hash=hash_password(PASSWORD, iterations=1000),
                             # one address plays every visitor here: its limits are lifted
                             max_study_workers_per_ip=10 ** 6, max_battles_per_ip=10 ** 6,
                             max_votes_per_ip=10 ** 6, login_max_failures=10 ** 6,
                             # --keep-closed: closed pages' sessions wait for the idle hour, as before
                             **({"closed_session_grace_s": 10.0 ** 7} if keep_closed else {}))
    publish(services, quota_per_cell=10 ** 6, tasks_per_participant=1)
    app = build_app(services, admin_auth=admin_checker(services.settings))
    if trace_out:  # started once the app is built: what the visits allocate is traced, not the imports
        import tracemalloc

        tracemalloc.start(int(os.environ.get("MIXED_SOAK_TRACE_FRAMES", "1")))
        threading.Thread(target=_trace_reports, args=(Path(trace_out), trace_every_s), daemon=True).start()
    run(app, host="127.0.0.1", port=port, on_ready=lambda: print("READY", flush=True))


def _trace_reports(out: Path, every_s: float) -> None:
    """Every `every_s`: the 40 sources whose live memory grew most since the first snapshot (taken when
    the server is ready)."""
    import tracemalloc

    first = tracemalloc.take_snapshot()
    count = 0
    while True:
        time.sleep(every_s)
        count += 1
        now = tracemalloc.take_snapshot().filter_traces([tracemalloc.Filter(False, tracemalloc.__file__)])
        stats = now.compare_to(first, "traceback" if tracemalloc.get_traceback_limit() > 1 else "lineno")[:40]
        lines = [f"report {count}: traced now {tracemalloc.get_traced_memory()[0] / 2 ** 20:.1f} MiB"]
        for stat in stats:
            lines.append(f"{stat.size_diff / 2 ** 20:+.2f} MiB {stat.count_diff:+d} blocks")
            lines.extend("    " + line for line in stat.traceback.format()[-16:])
        out.with_name(f"{out.stem}-{count}{out.suffix}").write_text("\n".join(lines) + "\n")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def _new_client(url: str, **kwargs):
    from gradio_client import Client

    return Client(url, verbose=False, httpx_kwargs={"timeout": 120}, **kwargs)


def visit(url: str, kind: str, n: int) -> None:
    """One visit; its clients are closed at the end, as a closed browser tab ends its page's heartbeat."""
    clients: list = []

    def _client(address: str, **kwargs):
        client = _new_client(address, **kwargs)
        clients.append(client)
        return client

    try:
        _steps(url, kind, n, _client)
    finally:
        for client in clients:
            client.close()


def _steps(url: str, kind: str, n: int, _client) -> None:
    if kind == "chat":
        c = _client(url)
        c.predict(random.choice(["alpha", "beta", "gamma"]), api_name="/chat_start")
        c.predict(f"visitor {n}: a comedy from the nineties", api_name="/chat_send")
        c.predict(f"visitor {n}: something shorter, please", api_name="/chat_send")
        c.predict(f"comment {n}", api_name=random.choice(["/chat_satisfied", "/chat_frustrated"]))
    elif kind == "battle":
        c = _client(url)
        c.predict(api_name="/battle_start")
        for turn in range(2):
            for side in ("a", "b"):
                c.predict(f"visitor {n} turn {turn}: a space movie", api_name=f"/battle_send_{side}")
        c.predict(api_name="/battle_satisfied_a")
        c.predict(api_name="/battle_frustrated_b")
        c.predict(f"comment {n}", api_name=random.choice(["/battle_vote_a", "/battle_vote_b", "/battle_vote_tie"]))
    elif kind == "board":
        _client(url).predict(api_name="/leaderboard")
    elif kind == "export":
        _client(url + "admin/", auth=("ada", PASSWORD)).predict([], "all", api_name="/download")
    elif kind == "study":
        from arena.crowd.aspects import load_form

        c = _client(url + "study/")
        c.predict("pilot", f"W{n:06d}", f"browser-{n}", api_name="/study_enter")
        c.predict(api_name="/study_consent")
        c.predict(api_name="/study_start")
        c.predict(f"worker {n}: robots in space", api_name="/study_send_a")
        c.predict(api_name="/study_satisfied_a")
        c.predict(None, None, *([None] * len(load_form().dialogue)), api_name="/study_submit")


class Pacer:
    """Visit starts every `60 / per_minute` seconds on one schedule shared by the clients; a start that
    every client was too busy to take is skipped (counted in `behind`), never made up in a burst."""

    def __init__(self, per_minute: float, start: float):
        self.interval = 60.0 / per_minute
        self.next_at = start
        self.behind = 0
        self._lock = threading.Lock()

    def wait(self) -> None:
        """Until this client's turn to start a visit."""
        with self._lock:
            now = time.monotonic()
            late = int((now - self.next_at) / self.interval)
            if late > 0:  # the schedule fell behind the clients: go on from now
                self.behind += late
                self.next_at += late * self.interval
            at, self.next_at = self.next_at, self.next_at + self.interval
        time.sleep(max(0.0, at - time.monotonic()))


def load(url: str, clients: int, until: float, pause_s: float, done: Counter, errors: list[str],
         only: tuple[str, ...] = (), pacer: Pacer | None = None, ended: list[float] | None = None) -> None:
    """`clients` threads visiting until `until`: paced by `pacer` when given, else `pause_s` after each
    visit; `ended` gets the time each visit ended (monotonic)."""
    kinds, weights = zip(*((k, w) for k, w in WEIGHTS.items() if not only or k in only))
    counter = iter(range(10 ** 9))
    lock = threading.Lock()

    def loop(seed: int) -> None:
        rng = random.Random(seed)
        while time.monotonic() < until:
            if pacer is not None:
                pacer.wait()
                if time.monotonic() >= until:
                    break
            kind = rng.choices(kinds, weights)[0]
            with lock:
                n = next(counter)
            try:
                visit(url, kind, n)
                with lock:
                    done[kind] += 1
                    if ended is not None:
                        ended.append(time.monotonic())
            except Exception as exc:  # counted and shown: a soak that fails its visits measures nothing
                with lock:
                    errors.append(f"{kind}: {' '.join(repr(exc).split())[:200]}")
            if pacer is None:
                time.sleep(pause_s)

    threads = [threading.Thread(target=loop, args=(i,), daemon=True) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--pause-s", type=float, default=0.5, help="each client's pause after a visit")
    parser.add_argument("--rate", type=float, help="visits a minute across the clients, paced (instead of "
                        "--pause-s), so that the load is the same before and after the ten-minute mark")
    parser.add_argument("--sample-s", type=float, default=30.0)
    parser.add_argument("--baseline-min", type=float, default=BASELINE_MIN)
    parser.add_argument("--trace", action="store_true", help="tracemalloc in the server (slower)")
    parser.add_argument("--trace-out", type=Path, default=Path("mixed-soak-trace.txt"),
                        help="reports go to NAME-1.txt, NAME-2.txt, ...")
    parser.add_argument("--trace-every-min", type=float, default=5.0, help="minutes between trace reports")
    parser.add_argument("--json", type=Path, help="write the samples here")
    parser.add_argument("--kinds", default="",
                        help=f"comma-separated visit kinds to run alone ({', '.join(WEIGHTS)}; default: all, "
                        "by their weights), to find which kind of request moves the memory")
    parser.add_argument("--keep-closed", action="store_true",
                        help="the server keeps closed pages' sessions until the idle hour (the code before)")
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--trace-file", help=argparse.SUPPRESS)
    args = parser.parse_args()
    unknown = sorted(set(k for k in args.kinds.split(",") if k) - set(WEIGHTS))
    if unknown:
        parser.error(f"unknown visit kind(s) {', '.join(unknown)}; the kinds are {', '.join(WEIGHTS)}")
    if args.rate is not None and args.rate <= 0:
        parser.error(f"--rate must be a positive number of visits a minute, not {args.rate:g}")
    if args.serve:
        serve(args.serve, args.folder, args.trace_file, args.trace_every_min * 60, args.keep_closed)
        return 0
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="arena-mixed-soak-") as folder:
        from arena.runtime.config import SERVER_ALLOCATORS

        env = {k: v for k, v in os.environ.items() if k not in SERVER_ALLOCATORS}  # the app's start sets them
        env.update({"HF_HUB_OFFLINE": "1", "GRADIO_ANALYTICS_ENABLED": "False"})
        command = [sys.executable, __file__, "--serve", str(port), "--folder", folder] + (
            ["--keep-closed"] if args.keep_closed else [])
        if args.trace:
            command += ["--trace-file", str(args.trace_out.resolve()), "--trace-every-min", str(args.trace_every_min)]
        server = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  text=True)
        ready = threading.Event()
        tail: list[str] = []

        def read() -> None:
            for line in server.stdout:
                tail.append(line)
                del tail[:-50]
                if "READY" in line:
                    ready.set()

        threading.Thread(target=read, daemon=True).start()
        samples: list[tuple[float, float]] = []
        done: Counter = Counter()
        errors: list[str] = []
        ended: list[float] = []
        pacer: Pacer | None = None
        try:
            if not ready.wait(900):
                raise RuntimeError("the server did not start:\n" + "".join(tail))
            url = f"http://127.0.0.1:{port}/"
            started = time.monotonic()
            until = started + args.minutes * 60
            only = tuple(k for k in args.kinds.split(",") if k)
            pacer = Pacer(args.rate, started) if args.rate else None
            driver = threading.Thread(target=load, daemon=True, args=(url, args.clients, until, args.pause_s, done,
                                                                      errors, only, pacer, ended))
            driver.start()
            while driver.is_alive():
                driver.join(args.sample_s)
                minute = (time.monotonic() - started) / 60
                samples.append((minute, rss_mb(server.pid)))
                print(f"{minute:5.1f} min  RSS {samples[-1][1]:7.1f} MB  visits {sum(done.values())} "
                      f"errors {len(errors)}" + (f" behind {pacer.behind}" if pacer else ""), flush=True)
        finally:
            server.terminate()
            try:
                server.wait(60)
            except subprocess.TimeoutExpired:  # a loaded machine: its graceful shutdown is not measured
                server.kill()
                server.wait(30)
    ended_min = [(t - started) / 60 for t in ended]
    behind = pacer.behind if pacer else None
    if args.json:
        args.json.write_text(json.dumps({"samples": samples, "visits": done, "errors": errors[:50],
                                         "visit_ends_min": ended_min, "behind": behind}))
    return report(samples, done, errors, args, ended_min, behind)


def visit_rates(ended_min: list[float], mark: float, end: float) -> tuple[float, float]:
    """Visits a minute that ended before the mark, and from it to the end."""
    before = sum(1 for m in ended_min if m < mark)
    return before / mark if mark > 0 else 0.0, (len(ended_min) - before) / (end - mark) if end > mark else 0.0


def report(samples: list[tuple[float, float]], done: Counter, errors: list[str], args,
           ended_min: list[float] = (), behind: int | None = None) -> int:
    base = next((rss for minute, rss in samples if minute >= args.baseline_min), None)
    print(f"\nvisits: {dict(done)}; failed visits: {len(errors)}")
    if samples:
        early, late = visit_rates(list(ended_min), args.baseline_min, samples[-1][0])
        print(f"visits a minute: {early:.1f} before {args.baseline_min:.0f} min, {late:.1f} after"
              + (f" (asked {args.rate:g}; starts skipped as every client was busy: {behind})"
                 if args.rate else ""))
    for line in sorted(set(errors))[:10]:
        print(f"    {line}")
    if base is None:
        print("the run was shorter than the baseline mark")
        return 1
    later = [rss for minute, rss in samples if minute >= args.baseline_min]
    first = samples[0][1]
    end, peak = later[-1], max(later)
    print(f"| minutes | clients | visits | RSS at {samples[0][0]:.1f} min MB | at {args.baseline_min:.0f} min MB "
          f"| at end MB | largest after {args.baseline_min:.0f} min MB | end vs {args.baseline_min:.0f} min "
          "| largest vs it |")
    print("|---|---|---|---|---|---|---|---|---|")
    print(f"| {samples[-1][0]:.0f} | {args.clients} | {sum(done.values())} | {first:.0f} | {base:.0f} | {end:.0f} "
          f"| {peak:.0f} | {100 * (end - base) / base:+.1f}% | {100 * (peak - base) / base:+.1f}% |")
    met = peak <= base * (1 + TARGET_PCT / 100) and not errors
    print(f"\ntarget (from {args.baseline_min:.0f} min on, RSS within +{TARGET_PCT:.0f}% of its level then; "
          f"no failed visit): {'met' if met else 'not met'}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
