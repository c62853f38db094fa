"""Offline Recall@k of the recommender against single signals and the published CRSs.

    nice -n 10 python benchmarks/recommender_recall.py [--split test|dev] [--limit N]

`--split test` (the default) ranks every turn of the iEvaLM test files in
`assets/catalogs/*_eval/` once, with the shipped artifacts; nothing is tuned on
them. `--split dev` uses the development split of the training files instead
(the one `scripts/train_recommender.py` selects on). Each turn is ranked over the
whole catalog with nothing left out (the iEvaLM protocol); every target item is
one sample. The single-signal rows score the same feature matrix with one weight,
so all rows come from one run. Latency is per call (reading the dialogue, all
signals, combining, sorting), as the live system does it: turns of a dialogue
arrive in order, so earlier utterances are cached as they are in a conversation.
Writes `benchmarks/out/recommender.md` (not tracked; the figures of record are in BENCHMARKS.md).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from arena.catalogs.catalog import CATALOG_DIR, load_catalog  # noqa: E402
from arena.catalogs.retrieval import ItemRetriever  # noqa: E402
from crs.recommender import load_recommender  # noqa: E402
from crs.recommender.signals import feature_matrix  # noqa: E402
from crs.recommender.training import recall_per_target  # noqa: E402

KS = {"redial": (1, 10, 50), "opendialkg": (1, 10, 25)}
# iEvaLM (Wang et al., 2023), Table 2, as quoted in issue 13.
PUBLISHED = {
    "UniCRS (iEvaLM paper)": {"redial": (0.050, 0.215, 0.413), "opendialkg": (0.308, 0.513, 0.574)},
    "MESE (iEvaLM paper)": {"redial": (0.056, 0.256, 0.455), "opendialkg": (0.279, 0.592, 0.666)},
}
SINGLE = {"popularity": "popularity", "BM25 alone": "bm25_last", "dense alone": "dense_last"}


def dev_turns(dataset: str, catalog):
    sys.path.insert(0, str(ROOT / "scripts"))
    from train_recommender import DATA, DEV_FRACTION, TRAINING_FILES

    from crs.recommender.training import read_turns, split_dialogues

    turns, _ = read_turns([DATA / p for p in TRAINING_FILES[dataset]], catalog)
    _, dev = split_dialogues(turns, 13, [1 - DEV_FRACTION, DEV_FRACTION])
    return [(t.context, [catalog.get(i).name for i in t.targets]) for t in dev]


def test_turns(dataset: str):
    path = CATALOG_DIR / f"{dataset}_eval" / "test_data_processed.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [(row["context"], list(row.get("rec") or ())) for row in rows]


def run(dataset: str, split: str, limit: int | None) -> dict:
    catalog = load_catalog(dataset)
    recommender = load_recommender(dataset, ItemRetriever(catalog, Path("/tmp/arena-recommender-cache")))
    turns = test_turns(dataset) if split == "test" else dev_turns(dataset, catalog)
    turns = turns[:limit] if limit else turns
    features = recommender.features
    ks = KS[dataset]
    weights = {"ours": None, "live": None}
    for label, name in SINGLE.items():
        vector = np.zeros(len(features), np.float32)
        vector[features.index(name)] = 1.0
        weights[label] = vector
    rankings = {label: [] for label in weights}
    seconds = []
    recommender.rank_texts(["hello"], k=1)  # loads the model and warms the caches of the code path
    for context, _ in turns:
        started = time.perf_counter()
        ctx = recommender.context_of_texts(context)
        with threadpool_limits(1, user_api="blas"):
            matrix = feature_matrix(recommender.signals, ctx)
            ranked = recommender.top(recommender.combination.score(matrix), max(ks))
        seconds.append(time.perf_counter() - started)
        rankings["ours"].append([r.item.name for r in ranked])
        live = recommender.top(recommender.live_scores(matrix), max(ks))
        rankings["live"].append([r.item.name for r in live])
        for label, vector in weights.items():
            if vector is not None:
                s = matrix @ vector
                order = np.argsort(-s, kind="stable")[: max(ks)]
                rankings[label].append([catalog.items[i].name for i in order])
    targets = [t for _, t in turns]
    scores = {label: recall_per_target(r, targets, ks)[0] for label, r in rankings.items()}
    ordered = sorted(seconds)
    return {
        "dataset": dataset, "ks": ks, "turns": len(turns), "samples": sum(len(t) for t in targets), "scores": scores, "version": recommender.version,
        "p50_ms": statistics.median(ordered) * 1000, "p95_ms": ordered[int(len(ordered) * 0.95) - 1] * 1000,
    }


def table(results: list[dict], split: str) -> str:
    lines = [f"Recall@k on the iEvaLM {split} turns (every target item one sample; nothing excluded)", ""]
    lines.append("| system | ReDial R@1 / R@10 / R@50 | OpenDialKG R@1 / R@10 / R@25 |")
    lines.append("|---|---|---|")
    by = {r["dataset"]: r for r in results}
    labels = ["ours", "live"] + list(SINGLE)
    for label in labels:
        cells = []
        for dataset in ("redial", "opendialkg"):
            r = by.get(dataset)
            cells.append(" / ".join(f"{r['scores'][label][k]:.3f}" for k in r["ks"]) if r else "-")
        name = {"ours": "ours (crs/recommender, learnt combination)",
                "live": "ours, live two-stage (40 best request matches, then learnt order)"}.get(label, label)
        lines.append(f"| {name} | {cells[0]} | {cells[1]} |")
    if split == "test":
        for label, rows in PUBLISHED.items():
            lines.append(f"| {label} | {' / '.join(f'{v:.3f}' for v in rows['redial'])} | "
                         f"{' / '.join(f'{v:.3f}' for v in rows['opendialkg'])} |")
    lines.append("")
    for r in results:
        lines.append(f"- {r['dataset']}: {r['turns']} turns, {r['samples']} target items; per call "
                     f"p50 {r['p50_ms']:.0f} ms, p95 {r['p95_ms']:.0f} ms; artifacts {r['version']}")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=["test", "dev"], default="test")
    parser.add_argument("--dataset", choices=sorted(KS), action="append")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "out" / "recommender.md")
    args = parser.parse_args(argv)
    results = [run(d, args.split, args.limit) for d in args.dataset or ("redial", "opendialkg")]
    text = table(results, args.split)
    print(text)
    if args.split == "test" and not args.limit:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
