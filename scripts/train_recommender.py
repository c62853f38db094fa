"""Build the recommender's artifacts: `assets/recommender/<dataset>/{statistics,weights}.json`.

    nice -n 10 python scripts/train_recommender.py [--dataset redial] [--seed 13]

Reads only the iEvaLM training files under `../shared/data/ievalm` (ReDial:
`redial_eval/valid_data_processed.jsonl`; OpenDialKG: `opendialkg_eval/
{train,valid}_data_processed.jsonl`), never a test file; for ReDial also the
IARD ReDial dialogues of ReDial's training range (the project's copy, `assets/iard/`), and
for each dataset the other's training files, titles linked to its catalog
(`crs/recommender/extra_dialogues.py`). See
`crs/recommender/training.py` for the split and the out-of-fold counts. The
same data and seed give byte-identical files. Prints Recall@k on the
development split for the learnt weights and for single signals.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402

from arena.catalogs.catalog import Catalog, load_catalog  # noqa: E402
from crs.recommender.combination import (  # noqa: E402
    LinearCombination,
    TrainingTurn,
    train_lambdamart,
    train_pairwise,
)
from crs.recommender.extra_dialogues import iard_turns, linked_item_sets  # noqa: E402
from crs.recommender.recommender import RECOMMENDER_DIR, Recommender, build_signals  # noqa: E402
from crs.recommender.signals import feature_names  # noqa: E402
from crs.recommender.training import (  # noqa: E402
    evaluate,
    full_matrices,
    read_turns,
    split_dialogues,
    statistics_of,
    training_turns,
)
from evaluators.acts.data import iard_path  # noqa: E402  (the project's copy of IARD)

DATA = ROOT.parent / "shared" / "data" / "ievalm"
TRAINING_FILES = {
    "redial": ["redial_eval/valid_data_processed.jsonl"],
    "opendialkg": ["opendialkg_eval/train_data_processed.jsonl", "opendialkg_eval/valid_data_processed.jsonl"],
}
# The other dataset's training dialogues, titles linked to this catalog (see extra_dialogues.py).
ELSEWHERE = {"redial": "opendialkg", "opendialkg": "redial"}
KS = {"redial": (1, 10, 50), "opendialkg": (1, 10, 25)}
REGULARIZATION = (0.1, 1.0)
# (competitors per target from the top of the current ranking, rounds of re-drawing them): more
# rounds and deeper competitors serve Recall@50 (ReDial development split, R@10 / R@50: 30 x 3
# .216 / .387, 60 x 5 .220 / .420).
HARD_ROUNDS = ((30, 3), (60, 5), (60, 8))
DEV_FRACTION = 0.2
COUNT_FOLDS = 5  # ReDial development split, R@10 / R@50: two folds .176 / .354, five .195 / .368


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


def with_counts(catalog: Catalog, stats) -> Catalog:
    """The catalog whose title linker breaks ties by the counts about to be shipped, as the
    product's will, rather than by whatever `statistics.json` is there now: the build then
    depends on the data and the seed only."""
    by_name: collections.Counter[str] = collections.Counter()
    for item in catalog.items:
        by_name[item.name] += stats.popularity.get(item.item_id, 0)
    return Catalog(catalog.name, catalog.items, catalog.entity2id, catalog.entity_kinds, by_name,
                   dataset=catalog.dataset)


def _code_hash() -> str:
    """Cached features are reused only by the code that computed them."""
    digest = hashlib.sha256()
    sources = sorted((ROOT / "crs" / "recommender").glob("*.py")) + [ROOT / "arena" / "catalogs" / "catalog.py"]
    for path in sources:
        digest.update(path.read_bytes())
    return digest.hexdigest()[:10]


def _save_features(path: Path, examples, dev_matrices) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    arrays = {f"pool{i}": t.features for i, t in enumerate(examples)}
    arrays.update({f"targets{i}": np.asarray(t.targets) for i, t in enumerate(examples)})
    arrays.update({f"dev{i}": m for i, m in enumerate(dev_matrices)})
    np.savez(path, **arrays)


def _load_features(path: Path):
    data = np.load(path)
    n_pool = sum(1 for k in data.files if k.startswith("pool"))
    n_dev = sum(1 for k in data.files if k.startswith("dev"))
    examples = [TrainingTurn(data[f"pool{i}"], [int(t) for t in data[f"targets{i}"]]) for i in range(n_pool)]
    return examples, [data[f"dev{i}"] for i in range(n_dev)]


def train_dataset(dataset: str, seed: int, out_dir: Path, use_dense: bool,
                  feature_cache: Path | None = None, trees: tuple[int, ...] = (),
                  count_folds: int = COUNT_FOLDS, use_extra: bool = True) -> None:
    started = time.monotonic()
    catalog = load_catalog(dataset)
    paths = [DATA / p for p in TRAINING_FILES[dataset]]
    turns, unknown = read_turns(paths, catalog)
    fit, dev = split_dialogues(turns, seed, [1 - DEV_FRACTION, DEV_FRACTION])
    extra = []
    if dataset == "redial" and use_extra:
        # More ReDial dialogues (ReDial's training range only, see crs/recommender/extra_dialogues.py);
        # they join the fitting part and the shipped counts, never the development split.
        extra = iard_turns(iard_path(), catalog, {t.dialog_id.split(":")[-1] for t in turns})
        print(f"[{dataset}] {len(extra)} more turns from {len({t.dialog_id for t in extra})} IARD dialogues")
    fit = fit + extra
    elsewhere = []
    if use_extra:
        other = ELSEWHERE[dataset]
        elsewhere = linked_item_sets([DATA / p for p in TRAINING_FILES[other]], load_catalog(other), catalog)
        print(f"[{dataset}] {len(elsewhere)} {other} training dialogues name films of this catalog")
    shipped_statistics = statistics_of(turns + extra, elsewhere)
    catalog = with_counts(catalog, shipped_statistics)
    folds = split_dialogues(fit, seed + 1, [1.0] * count_folds)
    print(f"[{dataset}] {len(turns)} turns ({unknown} target names not in the catalog); "
          f"fit {len(fit)} / dev {len(dev)} turns")

    matrix = encoder = None
    if use_dense:
        from arena.catalogs.retrieval import ItemRetriever

        retriever = ItemRetriever(catalog, Path(tempfile.gettempdir()) / "arena-recommender-cache")
        matrix = retriever.item_matrix()
        encoder = MemoEncoder(retriever)

    def recommender(stats) -> Recommender:
        return Recommender(catalog, build_signals(catalog, stats, matrix, encoder))

    contexts: dict[tuple[str, int], object] = {}

    def context(rec: Recommender, turn):
        key = (turn.dialog_id, len(turn.context))
        if key not in contexts:
            contexts[key] = rec.context_of_texts(turn.context)
        return contexts[key]

    # Each fold's features use counts from the other folds only (see training.py).
    fold_of = {t.dialog_id: i for i, fold in enumerate(folds) for t in fold}
    fold_recommenders = [
        recommender(statistics_of([t for j, part in enumerate(folds) if j != i for t in part], elsewhere))
        for i in range(count_folds)
    ]
    features = feature_names(fold_recommenders[0].signals)
    rec_dev = recommender(statistics_of(fit, elsewhere))
    cache = feature_cache and (
        feature_cache / f"{dataset}-{seed}-{use_dense}-{count_folds}-{use_extra}-{_code_hash()}.npz")
    if cache and cache.exists():
        examples, dev_matrices = _load_features(cache)
        print(f"[{dataset}] features read from {cache}")
    else:
        if encoder is not None:  # in large batches: much faster than one dialogue at a time
            encoder.warm(t for turn in turns for i, t in enumerate(turn.context) if i % 2 == 0)
            print(f"[{dataset}] encoded {len(encoder.cache)} user utterances")
        examples = training_turns(lambda t: fold_recommenders[fold_of[t.dialog_id]], fit, context, seed)
        dev_matrices = full_matrices(rec_dev, dev, context)
        if cache:
            _save_features(cache, examples, dev_matrices)
    ks = KS[dataset]
    print(f"[{dataset}] features of {len(examples)} fitting and {len(dev)} development turns "
          f"in {time.monotonic() - started:.0f} s")

    results = []
    candidates = [(f"linear C={c} hard={h} rounds={r}",
                   lambda c=c, h=h, r=r: train_pairwise(examples, features, seed=seed, regularization=c,
                                                        hard=h, rounds=r))
                  for c in REGULARIZATION for h, r in HARD_ROUNDS]
    candidates += [(f"lambdamart {n} trees", lambda n=n: train_lambdamart(examples, features, seed=seed, trees=n))
                   for n in trees]
    for label, train in candidates:
        combination = train()
        scores = evaluate(rec_dev, dev, dev_matrices, combination, ks)
        results.append((scores[ks[1]] + scores[ks[2]], label, combination, scores))
        print(f"[{dataset}] {label}: dev " + " ".join(f"R@{k} {v:.3f}" for k, v in scores.items()))
    _, best_label, best, best_scores = max(results, key=lambda r: r[0])
    baselines = {}
    for name in ("popularity", "bm25_last", "dense_last"):
        if name in features:
            single = LinearCombination.uniform(features, {name: 1.0})
            baselines[name] = evaluate(rec_dev, dev, dev_matrices, single, ks)
            print(f"[{dataset}] {name} alone: dev " + " ".join(f"R@{k} {v:.3f}" for k, v in baselines[name].items()))

    best.notes.update({
        "dataset": dataset,
        "training_files": TRAINING_FILES[dataset],
        "extra_training_turns": f"{len(extra)} from IARD (ReDial training range)" if extra else "none",
        "elsewhere": f"{len(elsewhere)} {ELSEWHERE[dataset]} training dialogues naming this catalog's films",
        "split": f"dialogues, seed {seed}: {1 - DEV_FRACTION:.0%} fit ({count_folds} folds for out-of-fold counts), "
                 f"{DEV_FRACTION:.0%} development",
        "chosen": best_label,
        "dev_recall_candidates": {r[1]: {f"R@{k}": round(v, 4) for k, v in r[3].items()} for r in results},
        "dev_recall": {f"R@{k}": round(v, 4) for k, v in best_scores.items()},
        "dev_recall_single_signals": {n: {f"R@{k}": round(v, 4) for k, v in s.items()} for n, s in baselines.items()},
    })
    target = out_dir / dataset
    target.mkdir(parents=True, exist_ok=True)
    shipped_statistics.save(target / "statistics.json")
    (target / "weights.trees.txt").unlink(missing_ok=True)
    best.save(target / "weights.json")
    print(f"[{dataset}] chose {best_label}: {best.version}")
    print(f"[{dataset}] wrote {target} in {time.monotonic() - started:.0f} s")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", choices=sorted(TRAINING_FILES), action="append")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--out", type=Path, default=RECOMMENDER_DIR)
    parser.add_argument("--no-dense", action="store_true", help="leave out the MiniLM signal")
    parser.add_argument("--lambdamart", type=int, nargs="*", default=[], metavar="TREES",
                        help="also try LambdaMART with these numbers of trees (on ReDial's development "
                             "split 150 trees reached R@10 .081 against .151 for the linear model)")
    parser.add_argument("--no-extra", action="store_true", help="leave out the IARD ReDial dialogues")
    parser.add_argument("--count-folds", type=int, default=COUNT_FOLDS,
                        help="folds of the fitting dialogues for the out-of-fold counts")
    parser.add_argument("--feature-cache", type=Path, default=None,
                        help="keep computed features here and reuse them (same code, seed and data)")
    args = parser.parse_args(argv)
    missing = [p for files in TRAINING_FILES.values() for p in files if not (DATA / p).exists()]
    if missing:
        print(f"training data missing under {DATA}: {', '.join(missing)}", file=sys.stderr)
        return 2
    for dataset in args.dataset or sorted(TRAINING_FILES):
        train_dataset(dataset, args.seed, args.out, not args.no_dense, args.feature_cache, tuple(args.lambdamart),
                      args.count_folds, not args.no_extra)
    return 0


if __name__ == "__main__":
    sys.exit(main())
