"""Chat turns while 16 visitors keep pressing the leaderboard's Refresh: does the board slow the arena?

A store with `--votes` battles (as `board_growth.py` makes them) and the live background board job
(`webapp.leaderboard.snapshot`) run in this process, as in the app. One person chats with a fast fake system
answering in `--delay` seconds (`webapp.sessions.chat.send_message`, the store write included) for `--turns` turns, first with nobody on
the leaderboard, then while `--clients` threads each ask for a fresh board, its table and its plot, in a loop
(the Leaderboard tab's `render` work: the table and plot are drawn once per published result). Prints chat turn p50 / p95 both ways and their ratio.

    HF_HUB_OFFLINE=1 python benchmarks/board_refresh_load.py [--votes 10000] [--clients 16] [--turns 60] [--delay 0.05]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "battle"))
sys.path.insert(0, str(ROOT / "benchmarks"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from battle_support import FakeCatalogCRS, make_services, percentile  # noqa: E402
from board_growth import fill  # noqa: E402
from webapp.leaderboard.table import display_table, leaderboard_figure  # noqa: E402
from webapp.sessions.chat import send_message, start_conversation  # noqa: E402
from webapp.ui.leaderboard_tab import LeaderboardCache  # noqa: E402


def chat_turns(services, turns: int) -> list[float]:
    times, dialogue = [], None
    for k in range(turns):
        if dialogue is None or dialogue.num_turns >= 6:
            dialogue, _ = start_conversation(services, "kbrd_redial", f"bench-{k}")
        t = time.perf_counter()
        dialogue, _ = send_message(services, dialogue, f"a thriller from the nineties please, number {k}")
        times.append(time.perf_counter() - t)
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--votes", type=int, default=10_000)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--turns", type=int, default=60)
    parser.add_argument("--delay", type=float, default=0.05, help="the fake system's answer time (s)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        services = make_services(Path(tmp), [FakeCatalogCRS("kbrd_redial", args.delay),
                                               FakeCatalogCRS("unicrs_redial", args.delay)])
        fill(services.store, 0, args.votes)
        cache = LeaderboardCache(services)
        first = time.perf_counter()
        cache.get("human")
        print(f"{args.votes} votes: first board published {time.perf_counter() - first:.1f} s after start")
        idle = chat_turns(services, args.turns)
        stop, refreshes, drawn = threading.Event(), [0], [None]

        def visitor() -> None:
            while not stop.is_set():
                table, _, read = cache.board("human", fresh=True)
                if drawn[0] is not read:  # the tab draws each published result once (webapp.ui.leaderboard_tab)
                    drawn[0] = read
                    display_table(table)
                    leaderboard_figure(table)
                refreshes[0] += 1

        visitors = [threading.Thread(target=visitor, daemon=True) for _ in range(args.clients)]
        for v in visitors:
            v.start()
        busy = chat_turns(services, args.turns)
        stop.set()
        for v in visitors:
            v.join()
        cache.snapshots.job.stop()
        p50_i, p95_i = percentile(idle, 50), percentile(idle, 95)
        p50_b, p95_b = percentile(busy, 50), percentile(busy, 95)
        print(f"chat turn idle p50 {p50_i * 1000:.0f} ms p95 {p95_i * 1000:.0f} ms; with {args.clients} visitors "
              f"refreshing ({refreshes[0]} refreshes) p50 {p50_b * 1000:.0f} ms p95 {p95_b * 1000:.0f} ms; "
              f"p95 ratio {p95_b / p95_i:.2f}; load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
