"""Rebuild the offline act annotator's artifact (assets/acts/act_classifier.npz + .json).

    HF_HUB_OFFLINE=1 python scripts/train_act_classifier.py [--redial ../shared/data/redial_dialogues/valid_data.jsonl]
        [--iard FILE] [--out assets/acts/act_classifier.npz] [--seed 0] [--max-dialogues N]

Data and splits (fixed by hashes of dialogue ids, see evaluators/acts/data.py, redial_weak.py
and training.py): IARD's training part is split into train and val; its held-out part is not
read. ReDial dialogues (minus those IARD annotated) are split into train / val / test; test is
not read. The arena-style sets are training data except test8 and test9 (val) and test10
(the arena-style test set, not read). The model is fitted on the train parts; the decision thresholds are chosen on the
val parts. The same inputs and seed give the same bytes (see tests/acts/test_acts_training.py).
`--embedding-cache FILE` keeps sentence embeddings between runs (they are rounded before use,
so a cached run and a fresh one give the same artifact).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evaluators.acts.data import (  # noqa: E402
    ARENA_SETS, ARENA_VAL, HELD_OUT_MODULUS, iard_path, iard_split, load_arena_style, load_iard,
)
from evaluators.acts.embedding import DIM, MODEL_NAME, shared_encoder  # noqa: E402
from evaluators.acts.features import FEATURE_LAYOUT  # noqa: E402
from evaluators.acts.offline import DEFAULT_ARTIFACT  # noqa: E402
from evaluators.acts.redial_weak import load_redial  # noqa: E402
from arena.title_mentions import shared_linker  # noqa: E402
from evaluators.acts.training import HYPER, from_arena_style, from_iard, from_redial, is_iard_val, train  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
REDIAL = ROOT.parent / "shared" / "data" / "redial_dialogues" / "valid_data.jsonl"
VERSION = "12"
SOURCES = ("iard", "redial", "arena")


class CachedEncoder:
    """The sentence encoder with its vectors kept in a .npz between runs."""

    def __init__(self, encoder, path: Path | None):
        self.encoder, self.path = encoder, path
        self.cache: dict[str, np.ndarray] = {}
        if path is not None and path.exists():
            with np.load(path, allow_pickle=False) as z:
                self.cache = dict(zip(z["texts"].tolist(), z["vectors"]))

    def encode(self, texts):
        missing = sorted({t for t in texts if t and t not in self.cache})
        if missing:
            self.cache.update(zip(missing, self.encoder.encode(missing)))
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for i, t in enumerate(texts):
            if t:
                out[i] = self.cache[t]
        return out

    def save(self) -> None:
        if self.path is not None and self.cache:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            texts = sorted(self.cache)
            np.savez(self.path, texts=np.array(texts), vectors=np.stack([self.cache[t] for t in texts]))


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--iard", type=Path, default=None, help="IARD JSON (default: assets/iard)")
    ap.add_argument("--redial", type=Path, default=REDIAL, help="ReDial dialogues with the seekers' answers")
    ap.add_argument("--out", type=Path, default=DEFAULT_ARTIFACT)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--l2", type=float, default=HYPER["l2"])
    ap.add_argument("--max-dialogues", type=int, default=0, help="use only the first N dialogues of each part")
    ap.add_argument("--embedding-cache", type=Path, default=None)
    ap.add_argument("--version", default=VERSION, help="artifact version recorded in every score")
    args = ap.parse_args(argv)

    started = time.time()
    iard_file = args.iard or iard_path()
    iard_train, iard_held = iard_split(load_iard(iard_file))
    if not args.redial.exists():
        print(f"ReDial dialogues not found at {args.redial}; pass --redial FILE", file=sys.stderr)
        return 2
    redial = load_redial(args.redial, exclude=frozenset(d.dialogue_id for d in [*iard_train, *iard_held]))
    tr = from_iard([d for d in iard_train if not is_iard_val(d.dialogue_id)]) + from_redial(redial["train"])
    va = from_iard([d for d in iard_train if is_iard_val(d.dialogue_id)]) + from_redial(redial["val"])
    for path in ARENA_SETS:
        rows = load_arena_style(path)
        (va if path in ARENA_VAL else tr).extend(from_arena_style(rows, with_items=path not in ARENA_VAL))
    if args.max_dialogues:
        tr = [x for s in SOURCES for x in [d for d in tr if d.source == s][:args.max_dialogues]]
        va = [x for s in SOURCES for x in [d for d in va if d.source == s][:args.max_dialogues]]
    print(f"train {len(tr)} dialogues, val {len(va)} (IARD held out: {len(iard_held)}, "
          f"ReDial test: {len(redial['test'])}; neither read)")
    encoder = CachedEncoder(shared_encoder(), args.embedding_cache)
    hyper = {**HYPER, "l2": args.l2}
    model, report = train(tr, va, encoder, shared_linker(), hyper=hyper,
                          seed=args.seed, version=args.version)
    encoder.save()
    model.meta.update({
        "feature_layout": FEATURE_LAYOUT,
        "embedding_model": MODEL_NAME,
        "title_linker": "catalogs: redial, opendialkg",
        "data": {
            "iard": {"file": iard_file.name, "sha256": sha256(iard_file),
                     "held_out_rule": f"int(sha256(conversation_id)[:8], 16) % {HELD_OUT_MODULUS} == 0",
                     "val_rule": "int(sha256('val:' + conversation_id)[:8], 16) % 5 == 0"},
            "redial": {"file": args.redial.name, "sha256": sha256(args.redial),
                       "split_rule": "int(sha256('redial:' + conversationId)[:8], 16) % 10: 0-1 test, 2 val",
                       "excluded": "dialogues IARD annotated"},
            "arena_style": {"train": [p.name for p in ARENA_SETS if p not in ARENA_VAL],
                            "val": [p.name for p in ARENA_VAL]},
            "max_dialogues": args.max_dialogues,
        },
    })
    model.save(args.out)
    for source, groups in report["validation"].items():
        for name, prf in groups.items():
            p, r, f = (prf[k] if prf[k] is not None else float("nan") for k in ("precision", "recall", "f1"))
            print(f"  val {source:6s} {name:9s} P={p:.3f} R={r:.3f} F1={f:.3f} (n={prf['support']})")
    print("thresholds:", json.dumps(report["thresholds"]))
    print(f"wrote {args.out} and {args.out.with_suffix('.json')} in {time.time() - started:.1f}s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
