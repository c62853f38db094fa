"""Build the recommender's artifacts: `assets/recommender/<dataset>/{statistics,weights}.json`.

    nice -n 10 python scripts/train_recommender.py [--dataset redial] [--seed 13]

Reads only the iEvaLM training files under `../shared/data/ievalm` (ReDial:
`redial_eval/valid_data_processed.jsonl`; OpenDialKG: `opendialkg_eval/
{train,valid}_data_processed.jsonl`), never a test file. See
`crs/recommender/training.py` for the split and the out-of-fold counts. The
same data and seed give byte-identical files. Prints Recall@k on the
development split for the learnt weights and for single signals.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402

from arena.catalog import load_catalog  # noqa: E402
from crs.recommender.combination import LinearCombination, train_pairwise  # noqa: E402
from crs.recommender.recommender import RECOMMENDER_DIR, Recommender, build_signals  # noqa: E402
from crs.recommender.signals import feature_names  # noqa: E402
from crs.recommender.training import (  # noqa: E402
    evaluate,
    read_turns,
    split_dialogues,
    statistics_of,
    training_turns,
)

DATA = ROOT.parent / "shared" / "data" / "ievalm"
TRAINING_FILES = {
    "redial": ["redial_eval/valid_data_processed.jsonl"],
    "opendialkg": ["opendialkg_eval/train_data_processed.jsonl", "opendialkg_eval/valid_data_processed.jsonl"],
}
KS = {"redial": (1, 10, 50), "opendialkg": (1, 10, 25)}
REGULARIZATION = (0.1, 1.0, 10.0)
DEV_FRACTION = 0.2


class MemoEncoder:
    """Encodes each distinct text once (the training turns repeat their history)."""

    def __init__(self, retriever):
        self.retriever = retriever
        self.cache: dict[str, np.ndarray] = {}

    def warm(self, texts) -> None:
        todo = sorted({t for t in texts if t not in self.cache})
        for start in range(0, len(todo), 256):
            chunk = todo[start:start + 256]
            for text, vector in zip(chunk, self.retriever.encode(chunk)):
                self.cache[text] = vector

    def __call__(self, texts):
        self.warm(texts)
        return np.stack([self.cache[t] for t in texts])


def train_dataset(dataset: str, seed: int, out_dir: Path, use_dense: bool) -> None:
    started = time.monotonic()
    catalog = load_catalog(dataset)
    paths = [DATA / p for p in TRAINING_FILES[dataset]]
    turns, unknown = read_turns(paths, catalog)
    fit, dev = split_dialogues(turns, seed, [1 - DEV_FRACTION, DEV_FRACTION])
    fold_a, fold_b = split_dialogues(fit, seed + 1, [0.5, 0.5])
    print(f"[{dataset}] {len(turns)} turns ({unknown} target names not in the catalog); "
          f"fit {len(fit)} / dev {len(dev)} turns")

    matrix = encoder = None
    if use_dense:
        from arena.retrieval import ItemRetriever

        retriever = ItemRetriever(catalog, Path(tempfile.gettempdir()) / "arena-recommender-cache")
        matrix = retriever.item_matrix()
        encoder = MemoEncoder(retriever)
        encoder.warm(t for turn in turns for i, t in enumerate(turn.context) if i % 2 == 0)
        print(f"[{dataset}] encoded {len(encoder.cache)} user utterances")

    def recommender(stats) -> Recommender:
        return Recommender(catalog, build_signals(catalog, stats, matrix, encoder))

    contexts: dict[tuple[str, int], object] = {}

    def context(rec: Recommender, turn):
        key = (turn.dialog_id, len(turn.context))
        if key not in contexts:
            contexts[key] = rec.context_of_texts(turn.context)
        return contexts[key]

    in_a = {t.dialog_id for t in fold_a}
    rec_for_a, rec_for_b = recommender(statistics_of(fold_b)), recommender(statistics_of(fold_a))
    examples = training_turns(lambda t: rec_for_a if t.dialog_id in in_a else rec_for_b, fit, context, seed)
    features = feature_names(rec_for_a.signals)
    rec_dev = recommender(statistics_of(fit))
    ks = KS[dataset]

    results = []
    for regularization in REGULARIZATION:
        combination = train_pairwise(examples, features, seed=seed, regularization=regularization)
        scores = evaluate(rec_dev, dev, ks, combination, context)
        results.append((scores[ks[1]] + scores[ks[2]], regularization, combination, scores))
        print(f"[{dataset}] C={regularization}: dev " + " ".join(f"R@{k} {v:.3f}" for k, v in scores.items()))
    _, best_c, best, best_scores = max(results, key=lambda r: (r[0], -r[1]))
    baselines = {}
    for name in ("popularity", "bm25_last", "dense_dialogue"):
        if name in features:
            single = LinearCombination.uniform(features, {name: 1.0})
            baselines[name] = evaluate(rec_dev, dev, ks, single, context)
            print(f"[{dataset}] {name} alone: dev " + " ".join(f"R@{k} {v:.3f}" for k, v in baselines[name].items()))

    best.notes.update({
        "dataset": dataset,
        "training_files": TRAINING_FILES[dataset],
        "split": f"dialogues, seed {seed}: {1 - DEV_FRACTION:.0%} fit (two folds for out-of-fold counts), "
                 f"{DEV_FRACTION:.0%} development",
        "chosen_regularization": best_c,
        "dev_recall": {f"R@{k}": round(v, 4) for k, v in best_scores.items()},
        "dev_recall_single_signals": {n: {f"R@{k}": round(v, 4) for k, v in s.items()} for n, s in baselines.items()},
    })
    target = out_dir / dataset
    target.mkdir(parents=True, exist_ok=True)
    statistics_of(turns).save(target / "statistics.json")
    best.save(target / "weights.json")
    print(f"[{dataset}] weights {best.version}: " + ", ".join(
        f"{n} {w:+.2f}" for n, w in zip(features, best.weights)))
    print(f"[{dataset}] wrote {target} in {time.monotonic() - started:.0f} s")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", choices=sorted(TRAINING_FILES), action="append")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--out", type=Path, default=RECOMMENDER_DIR)
    parser.add_argument("--no-dense", action="store_true", help="leave out the MiniLM signal")
    args = parser.parse_args(argv)
    missing = [p for files in TRAINING_FILES.values() for p in files if not (DATA / p).exists()]
    if missing:
        print(f"training data missing under {DATA}: {', '.join(missing)}", file=sys.stderr)
        return 2
    for dataset in args.dataset or sorted(TRAINING_FILES):
        train_dataset(dataset, args.seed, args.out, not args.no_dense)
    return 0


if __name__ == "__main__":
    sys.exit(main())
