"""First turns with N sessions at once: the real app started cold, started warm, and a bare echo app.

Each configuration is a fresh `python app.py` process (ARENA_WARM_START=0 or 1, the scripted LLM so
only model loading and the systems' own work count) or a bare Gradio app whose one endpoint echoes
its input, all on this machine in the same run. Once a server reports ready, N clients
(gradio_client, one browser session each) start a battle and send the first message to pane A at
the same moment; the first turn's round trip is what a visitor waits. Prints a Markdown table.

    HF_HUB_OFFLINE=1 nice -n 10 python benchmarks/first_turns.py --sessions 16
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

ROOT = Path(__file__).resolve().parent.parent

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


def start(command: list[str], env: dict[str, str], ready: str, port: int) -> tuple[subprocess.Popen, float]:
    started = time.monotonic()
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True)
    seen = threading.Event()

    def read() -> None:
        for line in process.stdout:
            if ready in line:
                seen.set()

    threading.Thread(target=read, daemon=True).start()
    while not seen.wait(0.2):
        if process.poll() is not None or time.monotonic() - started > 600:
            raise RuntimeError(f"{command} did not start")
        try:  # the echo app prints nothing useful: its port answering is its readiness
            if not ready and socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
        except OSError:
            pass
    return process, time.monotonic() - started


def first_turns(url: str, sessions: int, echo: bool) -> list[float]:
    from gradio_client import Client

    clients = [Client(url, verbose=False, httpx_kwargs={"timeout": 300}) for _ in range(sessions)]
    if not echo:
        with ThreadPoolExecutor(sessions) as pool:
            list(pool.map(lambda c: c.predict(api_name="/battle_start"), clients))
    barrier = threading.Barrier(sessions)

    def one(i: int) -> float:
        barrier.wait()
        started = time.perf_counter()
        if echo:
            clients[i].predict(f"session {i}: a space movie please", api_name="/echo")
        else:
            clients[i].predict(f"session {i}: a space movie please", api_name="/battle_send_a")
        return time.perf_counter() - started

    with ThreadPoolExecutor(sessions) as pool:
        return list(pool.map(one, range(sessions)))


def run(label: str, sessions: int, tmp: Path) -> dict[str, float]:
    port = free_port()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "GRADIO_ANALYTICS_ENABLED": "False", "ARENA_LLM_PROVIDER": "fake",
           "ARENA_PORT": str(port), "ARENA_DB": str(tmp / f"{label}.sqlite3"),
           "ARENA_MAX_BATTLES_PER_IP": "1000", "ARENA_MAX_VOTES_PER_IP": "1000"}
    if label == "echo":
        script = tmp / "echo_app.py"
        script.write_text(ECHO_APP)
        process, ready_s = start([sys.executable, str(script), str(port)], env, "", port)
    else:
        env["ARENA_WARM_START"] = "1" if label == "warm" else "0"
        process, ready_s = start([sys.executable, "app.py"], env, "CRS Arena ready", port)
    try:
        times = first_turns(f"http://127.0.0.1:{port}/", sessions, echo=label == "echo")
    finally:
        process.terminate()
        process.wait(timeout=60)
    return {"ready_s": ready_s, "p50": percentile(times, 50), "p95": percentile(times, 95), "max": max(times)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=16)
    parser.add_argument("--configs", nargs="+", default=["echo", "cold", "warm"])
    args = parser.parse_args()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"{os.cpu_count()} CPUs, load average {load:.1f} before; {args.sessions} sessions, first turn of pane A")
    print("| app | start to ready s | first turn p50 s | p95 s | max s |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for label in args.configs:
            r = run(label, args.sessions, Path(tmp))
            print(f"| {label} | {r['ready_s']:.1f} | {r['p50']:.2f} | {r['p95']:.2f} | {r['max']:.2f} |", flush=True)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average {load:.1f} after")
    return 0


if __name__ == "__main__":
    sys.exit(main())
