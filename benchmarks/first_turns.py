"""Start-up and first turns: how soon a fresh `python app.py` answers its first page and its first visitors.

Each configuration is a fresh server process on this machine, in the same run:

- `echo`: a bare Gradio app whose one endpoint echoes its input (the floor of a round trip here);
- `cold`: the app with `ARENA_WARM_START=0`, models loading on first use;
- `warm`: the app with warm-up on, the visitors arriving once `/ready` answers 200 (every model loaded);
- `early`: the app with warm-up on, the visitors arriving as soon as the first page answers, while the
  models still load in the background (a turn for a system still loading waits for it).

The scripted LLM (`ARENA_LLM_PROVIDER=fake`, `--llm-provider` to change it) keeps the time to model
loading and the systems' own work. For each start the script polls `GET /` until it answers 200 (first
page) and `GET /ready` until it answers 200 (every model loaded; a server without `/ready` counts its
first page). Then N clients (gradio_client, one browser session each) start a battle and send the first
message to pane A at the same moment; the first turn's round trip is what a visitor waits, and "start to
last reply" is the time from launching the process to the last of those replies. Prints a Markdown table.

    HF_HUB_OFFLINE=1 nice -n 10 python benchmarks/first_turns.py --sessions 16
    HF_HUB_OFFLINE=1 python benchmarks/first_turns.py --sessions 1 --configs early   # first page, first reply
    HF_HUB_OFFLINE=1 python benchmarks/first_turns.py --configs early --page-only --repeat 4 --compare-dir DIR
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Optional

import httpx

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = ("echo", "cold", "warm", "early")

ECHO_APP = """
import sys
import gradio as gr
with gr.Blocks() as demo:
    box = gr.Textbox()
    out = gr.Textbox()
    box.submit(lambda text: "echo: " + text, box, out, api_name="echo")
demo.queue(default_concurrency_limit=32).launch(server_name="127.0.0.1", server_port=int(sys.argv[1]))
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1))))]


def _status(url: str) -> Optional[int]:
    try:
        return httpx.get(url, timeout=2.0).status_code
    except httpx.HTTPError:
        return None


def wait_for(process: subprocess.Popen, url: str, started: float, *, accept: tuple[int, ...] = (200,),
             limit_s: float = 600.0) -> tuple[float, Optional[int]]:
    """Seconds from `started` until `url` answers one of `accept` (polled every 0.1 s), and that status."""
    while True:
        status = _status(url)
        if status in accept:
            return time.monotonic() - started, status
        if process.poll() is not None:
            raise RuntimeError(f"the server stopped (exit {process.returncode}) before {url} answered")
        if time.monotonic() - started > limit_s:
            raise RuntimeError(f"{url} did not answer within {limit_s:.0f} s")
        time.sleep(0.1)


def first_turns(url: str, sessions: int, echo: bool) -> tuple[list[float], list[float], float, int]:
    """Each session's first-turn round trip, the monotonic time each reply arrived, when the messages
    were sent (the clients connected and their battles started), and how many sessions saw the
    "warming up" line before their reply."""
    from gradio_client import Client

    clients = [Client(url, verbose=False, httpx_kwargs={"timeout": 600}) for _ in range(sessions)]
    if not echo:
        with ThreadPoolExecutor(sessions) as pool:
            list(pool.map(lambda c: c.predict(api_name="/battle_start"), clients))
    sent: list[float] = []
    warming = [False] * sessions
    barrier = threading.Barrier(sessions, action=lambda: sent.append(time.monotonic()))

    def one(i: int) -> tuple[float, float]:
        barrier.wait()
        started = time.perf_counter()
        job = clients[i].submit(f"session {i}: a space movie please", api_name="/echo" if echo else "/battle_send_a")
        job.result()
        took = time.perf_counter() - started
        warming[i] = any("warming up" in str(update) for update in job.outputs())
        return took, time.monotonic()

    with ThreadPoolExecutor(sessions) as pool:
        results = list(pool.map(one, range(sessions)))
    return [r[0] for r in results], [r[1] for r in results], sent[0], sum(warming)


def run(label: str, sessions: int, tmp: Path, llm_provider: str, app_dir: Path = ROOT,
        page_only: bool = False) -> dict[str, float]:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "GRADIO_ANALYTICS_ENABLED": "False",
           "ARENA_LLM_PROVIDER": llm_provider, "ARENA_PORT": str(port),
           "ARENA_DB": str(tmp / f"{label}-{time.monotonic_ns()}.sqlite3"),
           "ARENA_MAX_BATTLES_PER_IP": "1000", "ARENA_MAX_VOTES_PER_IP": "1000"}
    if label == "echo":
        script = tmp / "echo_app.py"
        script.write_text(ECHO_APP)
        command = [sys.executable, str(script), str(port)]
    else:
        env["ARENA_WARM_START"] = "0" if label == "cold" else "1"
        command = [sys.executable, "app.py"]
    started = time.monotonic()
    process = subprocess.Popen(command, cwd=app_dir, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        page_s, _ = wait_for(process, base + "/", started)
        if page_only:
            return {"page_s": page_s}
        readiness: dict[str, float] = {"ready_s": page_s}
        if label != "echo":  # polled beside the visitors; 404: a server from before /ready, ready when it answers

            def poll_ready() -> None:
                ready_s, status = wait_for(process, base + "/ready", started, accept=(200, 404))
                readiness["ready_s"] = page_s if status == 404 else ready_s

            poller = threading.Thread(target=poll_ready, daemon=True)
            poller.start()
            if label == "warm":  # these visitors arrive once every model has loaded
                poller.join()
        times, arrivals, sent, warmed = first_turns(base + "/", sessions, echo=label == "echo")
        if label != "echo":
            poller.join()
    finally:
        process.terminate()
        process.wait(timeout=60)
    return {"page_s": page_s, "ready_s": readiness["ready_s"], "p50": percentile(times, 50),
            "p95": percentile(times, 95), "max": max(times), "sent_s": sent - started,
            "last_reply_s": max(arrivals) - started, "warming": warmed}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=16)
    parser.add_argument("--configs", nargs="+", choices=CONFIGS, default=list(CONFIGS))
    parser.add_argument("--llm-provider", default="fake", choices=("fake", "local", "openai"),
                        help="the app's LLM (fake: scripted, so the figures are model loading and the systems)")
    parser.add_argument("--compare-dir", type=Path, default=None,
                        help="another checkout of the app (e.g. `git archive` of an older commit): each app "
                        "configuration also runs from there, alternating with this one, rows marked 'before'")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each configuration (alternating)")
    parser.add_argument("--page-only", action="store_true",
                        help="time the first page alone (each server stopped once it answers, 3 s apart)")
    args = parser.parse_args()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"{os.cpu_count()} CPUs, load average {load:.1f} before; {args.sessions} sessions, first turn of pane A, "
          f"LLM {args.llm_provider}")
    print("| app | start to first page s | start to ready s | start to messages sent s | first turn p50 s | p95 s "
          "| max s | start to last reply s | sessions shown \"warming up\" |")
    print("|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        runs = [(label, None) for label in args.configs]
        if args.compare_dir is not None:
            runs = [(label, where) for label in args.configs
                    for where in ((args.compare_dir, None) if label != "echo" else (None,))]
        for repeat in range(args.repeat):
            # Every other round in reverse order: a start right after another is slower (the earlier server's
            # last work still holds a core), so neither app always comes second.
            for label, where in (runs if repeat % 2 == 0 else runs[::-1]):
                if args.page_only:
                    time.sleep(3)
                    r = run(label, args.sessions, Path(tmp), args.llm_provider, where or ROOT, page_only=True)
                    print(f"| {f'{label}, before' if where is not None else label} | {r['page_s']:.1f} | | | | | | | |",
                          flush=True)
                    continue
                r = run(label, args.sessions, Path(tmp), args.llm_provider, where or ROOT)
                name = f"{label}, before" if where is not None else label
                print(f"| {name} | {r['page_s']:.1f} | {r['ready_s']:.1f} | {r['sent_s']:.1f} | {r['p50']:.2f} | {r['p95']:.2f} | "
                      f"{r['max']:.2f} | {r['last_reply_s']:.1f} | {r['warming']} |", flush=True)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average {load:.1f} after")
    return 0


if __name__ == "__main__":
    sys.exit(main())
