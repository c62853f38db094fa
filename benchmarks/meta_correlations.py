"""How long the metric-vs-human meta-evaluation takes, for the CLI (1000 resamples) and the Leaderboard (300).

    PYTHONPATH=. python benchmarks/meta_correlations.py [--dialogues 1000] [--metrics 16]

Builds a synthetic rated corpus (random scores and ratings; the figures are
about time, not about correlations), then times `correlation_records` for
each bootstrap size in one run, together with a run without intervals as the
floor. Prints a Markdown table for BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import random
import time

import numpy as np
from scipy import stats

from arena.crowd.aspects import load_form
from arena.dialogue import Dialogue, Feedback, Rating, Score, UserInfo, UserKind
from evaluators.meta_correlations import correlation_records, resample_ranks


def corpus(n: int, n_metrics: int, seed: int = 0) -> list[Dialogue]:
    rng = random.Random(seed)
    form = load_form()
    out = []
    for i in range(n):
        d = Dialogue(crs_id=f"sys{i % 8}_redial", user=UserInfo(kind=UserKind.HUMAN, id=f"p{i}"))
        d.add_user("hi")
        d.add_agent("a reply").ratings.append(
            Rating(values={"relevance": rng.randint(0, 3)}, rater_id=f"p{i}", form_version=form.version))
        for m in range(n_metrics):
            value = None if rng.random() < 0.05 else rng.random()  # some unscored
            d.scores[f"metric{m}"] = Score(value=value, scorer="bench", version="1")
        values = {a.name: rng.randint(a.low, a.high) for a in form.dialogue if rng.random() < 0.9}
        d.ratings.append(Rating(values=values, rater_id=f"p{i}", form_version=form.version))
        d.feedback = Feedback(sentiment=rng.choice(["satisfied", "frustrated"]))
        out.append(d)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dialogues", type=int, default=1000)
    parser.add_argument("--metrics", type=int, default=16)
    args = parser.parse_args()
    ds = corpus(args.dialogues, args.metrics)
    print(f"{args.dialogues} dialogues, {args.metrics} metrics, 7 judgements (5 aspects, relevance, satisfaction)")
    print("| bootstrap resamples | records | seconds |")
    print("|---|---|---|")
    for rounds in (1, 300, 1000):
        started = time.perf_counter()
        records = correlation_records(ds, rounds=rounds)
        print(f"| {rounds} | {len(records)} | {time.perf_counter() - started:.2f} |")
    # The bootstrap's ranking step: counting draws (resample_ranks) against sorting every row (scipy).
    rng = np.random.default_rng(0)
    values = rng.random(args.dialogues)
    idx = rng.integers(0, args.dialogues, size=(1000, args.dialogues))
    timings = {}
    for name, rank in (("scipy.stats.rankdata(axis=1)", lambda: stats.rankdata(values[idx], axis=1)),
                       ("resample_ranks", lambda: resample_ranks(values, idx))):
        started = time.perf_counter()
        for _ in range(5):
            rank()
        timings[name] = (time.perf_counter() - started) / 5
    print(f"\nranking 1000 resamples of {args.dialogues} values (mean of 5):")
    for name, seconds in timings.items():
        print(f"- {name}: {seconds * 1000:.0f} ms")
    print(f"- ratio: {timings['scipy.stats.rankdata(axis=1)'] / timings['resample_ranks']:.1f}x")


if __name__ == "__main__":
    main()
