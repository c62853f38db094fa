"""How the leaderboard refresh grows with the data: every board (3 audiences x 5 categories, style control and
intervals included) computed from the store's compact rows at 1k, 10k and 100k votes (twice as many battle
dialogues of 8 utterances), on SQLite and on PostgreSQL, with the memory it takes.

    python benchmarks/board_growth.py [--votes 1000 10000 100000] [--stores sqlite postgresql] [--extras]
                                      [--lazy]

Each line: the store, the votes, the seconds to read the compact rows, to compute every board, the whole
refresh (best of `--repeat`) with the CPU seconds it used (this process; on a machine others share, the wall
time also counts their load, printed beside it), and the peak memory the refresh allocated (tracemalloc, a
separate run). With `--extras`, a second line per size times the job as the app runs it: the boards and
then the tables shown beside them (metric means against satisfaction, metric-vs-rating correlations with
their bootstrap), each table made afresh (no result kept from an earlier run); 5% of the dialogues carry
an aspect rating, so the few dialogues read whole are read. With `--lazy`, a line per size times a
counting board of a category other than All as the first page to ask for it gets it (the largest category,
"short", for people: first votes only, then ties left out), and the memory the rows kept for such boards
hold until the next refresh (tracemalloc, a separate run).
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# One BLAS thread: the products are thin, and on a shared machine a second thread only waits for a core.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

from arena.dialogue import (  # noqa: E402
    Dialogue, Feedback, Rating, RecommendedItem, Score, UserInfo, UserKind, Vote,
)
from arena.store import Store  # noqa: E402
from webapp.leaderboard.board_select import StoreFrames  # noqa: E402
from webapp.leaderboard.snapshot import compute_boards, compute_extras  # noqa: E402
from webapp.leaderboard.table import LeaderboardOptions  # noqa: E402

SYSTEMS = ["kbrd_redial", "barcor_redial", "unicrs_redial", "chatgpt_redial",
           "kbrd_opendialkg", "barcor_opendialkg", "unicrs_opendialkg", "chatgpt_opendialkg"]
STRENGTH = {name: i * 0.15 for i, name in enumerate(SYSTEMS)}
BATCH = 2000
RATED_SHARE = 0.05  # dialogues with an aspect rating (read whole for the correlation tables)


def battle(rng: random.Random, k: int) -> tuple[Dialogue, Dialogue, Vote]:
    rated = random.Random(k)
    a, b = rng.sample(SYSTEMS, 2)
    user = UserInfo(kind=UserKind.HUMAN, id=f"user-{rng.randrange(5000)}")
    pair = []
    turns = rng.choice([2, 4, 6]) // 2 + 1  # 8 utterances on average across the mix
    for crs in (a, b):
        d = Dialogue(crs_id=crs, user=user, metadata={"source": "battle", "battle_id": f"b{k}"})
        for t in range(turns):
            d.add_user(f"a thriller from the nineties, please ({t})")
            d.add_agent("How about Heat (1995)? " * rng.randint(1, 4),
                        items=[RecommendedItem(item_id="1", title="Heat (1995)")] * rng.randint(0, 2))
        if rng.random() < 0.5:
            d.feedback = Feedback(sentiment=rng.choice(["satisfied", "frustrated"]))
        if rng.random() < 0.3:
            d.set_score("rdl", Score(value=rng.random(), scorer="rdl", version="1"))
        if rated.random() < RATED_SHARE:  # its own generator: the boards' data stay those of earlier runs
            d.ratings.append(Rating(values={"overall_impression": rated.randint(0, 4)}, rater_id=user.id,
                                    form_version="aspects_v1"))
        pair.append(d)
    diff = STRENGTH[a] - STRENGTH[b]
    r = rng.random()
    choice = "tie" if r < 0.1 else ("both_bad" if r < 0.15 else ("A" if rng.random() < 1 / (1 + 10 ** -diff) else "B"))
    vote = Vote(battle_id=f"b{k}", dialogue_a=pair[0].dialogue_id, dialogue_b=pair[1].dialogue_id, crs_a=a, crs_b=b,
                choice=choice, user_id=user.id)
    return pair[0], pair[1], vote


def fill(store: Store, start: int, stop: int, seed: int = 0) -> None:
    """Battles `start` .. `stop` (each two dialogues and a vote), written in batches of `BATCH`."""
    rng = random.Random(seed * 1_000_003 + start)
    for first in range(start, stop, BATCH):
        made = [battle(rng, k) for k in range(first, min(stop, first + BATCH))]
        store.restore_rows(dialogues=[d for a, b, _ in made for d in (a, b)],
                           scores={d.dialogue_id: d.scores for a, b, _ in made for d in (a, b) if d.scores},
                           votes=[(v, None) for _, _, v in made], hidden=[], moderation=[], tables={})


def refresh_times(store: Store, repeat: int) -> tuple[float, float, float, float, float, int]:
    """(read s, compute s, whole refresh s and its CPU s (best of `repeat`), peak MiB, boards)."""
    options = LeaderboardOptions()
    best = read_s = cpu = float("inf")
    boards = 0
    for _ in range(repeat):
        t = time.perf_counter()
        StoreFrames.of(store.board_rows())
        read_s = min(read_s, time.perf_counter() - t)
        t, c = time.perf_counter(), time.process_time()
        published = compute_boards(store, options)
        best, cpu = min(best, time.perf_counter() - t), min(cpu, time.process_time() - c)
        boards = len(published.boards) + len(published.studies)
    tracemalloc.start()
    compute_boards(store, options)
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return read_s, best - read_s, best, cpu, peak, boards


def job_times(store: Store, repeat: int) -> tuple[float, float, float, float]:
    """The job with the tables beside the boards, as the app makes them: (wall s and CPU s, best of `repeat`;
    of which the tables' wall s; peak MiB, a separate run)."""
    from arena.crowd.aspects import load_form
    from webapp.ui.leaderboard_tab import side_tables
    from webapp.ui.parts.meta_view import CorrelationMemo

    form = load_form()

    def extra() -> Callable:
        memo = CorrelationMemo()  # afresh: every table computed, as after any change to the store
        return lambda kind, category, dialogues: side_tables(memo, form, (kind, category), dialogues)

    def job() -> float:
        """The job's run: the boards, then the tables from the same rows; the tables' seconds."""
        published = compute_boards(store, options, keep_frames=True)
        t = time.perf_counter()
        compute_extras(store, published.frames, extra())
        return time.perf_counter() - t

    options = LeaderboardOptions()
    best = cpu = tables = float("inf")
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        tables_s = job()
        best, cpu = min(best, time.perf_counter() - t), min(cpu, time.process_time() - c)
        tables = min(tables, tables_s)
    tracemalloc.start()
    job()
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return best, cpu, tables, peak


LAZY_CATEGORY = "short"  # about two thirds of the battles: the largest category but All


def lazy_times(store: Store) -> tuple[list[tuple[str, float, float]], float]:
    """([(counting, wall s, CPU s)] of one counting board of `LAZY_CATEGORY` computed on first request, the
    MiB the rows kept for those boards hold after a refresh (a separate run)."""
    options = LeaderboardOptions()
    source = compute_boards(store, options).source
    times = []
    for name, counting in (("first votes only", (True, "half")), ("ties left out", (False, "drop"))):
        t, c = time.perf_counter(), time.process_time()
        source.board("human", LAZY_CATEGORY, counting)
        times.append((name, time.perf_counter() - t, time.process_time() - c))
    del source
    gc.collect()
    tracemalloc.start()
    kept = compute_boards(store, options).source  # the result is dropped, what a lazy board needs is kept
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] / 2**20
    tracemalloc.stop()
    del kept
    return times, held


def run(location: str, label: str, sizes: list[int], repeat: int, extras: bool = False,
        lazy: bool = False) -> list[tuple]:
    store = Store(location)
    done, out = 0, []
    for votes in sizes:
        t = time.perf_counter()
        fill(store, done, votes)
        done = votes
        filled = time.perf_counter() - t
        read_s, compute_s, total, cpu, peak, boards = refresh_times(store, repeat)
        out.append((label, votes, read_s, compute_s, total, peak))
        print(f"{label:<10} {votes:>7} votes {2 * votes:>7} dialogues  read {read_s:6.2f} s  compute {compute_s:6.2f} s"
              f"  refresh {total:6.2f} s (CPU {cpu:6.2f} s)  peak {peak:7.1f} MiB  ({boards} boards; "
              f"filled in {filled:.0f} s; load {os.getloadavg()[0]:.1f})", flush=True)
        if extras:
            job, job_cpu, tables, job_peak = job_times(store, repeat)
            print(f"{label:<10} {votes:>7} votes  with the tables beside the boards: job {job:6.2f} s "
                  f"(CPU {job_cpu:6.2f} s; the tables {tables:6.2f} s)  peak {job_peak:7.1f} MiB  "
                  f"(load {os.getloadavg()[0]:.1f})", flush=True)
        if lazy:
            times, held = lazy_times(store)
            boards = "; ".join(f"{name} {wall:5.2f} s (CPU {cpu:5.2f} s)" for name, wall, cpu in times)
            print(f"{label:<10} {votes:>7} votes  one lazy board of {LAZY_CATEGORY!r}: {boards}; rows kept for "
                  f"them {held:6.1f} MiB  (load {os.getloadavg()[0]:.1f})", flush=True)
    store.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--votes", type=int, nargs="+", default=[1000, 10_000, 100_000])
    parser.add_argument("--stores", nargs="+", default=["sqlite", "postgresql"], choices=["sqlite", "postgresql"])
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--extras", action="store_true",
                        help="also time the job with the tables shown beside the boards")
    parser.add_argument("--lazy", action="store_true",
                        help="also time one counting board of a category other than All, computed on request")
    args = parser.parse_args()
    sizes = sorted(args.votes)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        if "sqlite" in args.stores:
            results += run(str(Path(tmp) / "growth.sqlite3"), "sqlite", sizes, args.repeat, args.extras,
                           args.lazy)
        if "postgresql" in args.stores:
            from tests.support.postgres import MISSING, PostgresServer, find_bin_dir

            bin_dir = find_bin_dir()
            if bin_dir is None:
                print(f"postgresql: skipped ({MISSING})")
            else:
                server = PostgresServer(bin_dir).start()
                try:
                    results += run(server.create_database("growth"), "postgresql", sizes, args.repeat,
                                   args.extras, args.lazy)
                finally:
                    server.stop()
    for store in args.stores:
        rows = {votes: total for label, votes, _, _, total, _ in results if label == store}
        if 10_000 in rows and 100_000 in rows:
            print(f"{store}: growth 10k -> 100k votes = {rows[100_000] / rows[10_000]:.1f}x")


if __name__ == "__main__":
    main()
