"""Quality of the dialogue-act annotators on Recommend / Accept / Reject.

    HF_HUB_OFFLINE=1 python benchmarks/acts_quality.py [--annotator offline|llm] [--errors]

Measures precision, recall and F1 (per utterance) on IARD's held-out part
(60 dialogues, fixed split, never trained on) and on the hand-written
arena-style sets (eval: measured only; dev: what the cues were tuned on), and
how far per-dialogue RDL/SRRR/SR from predicted acts are from those computed
from IARD's gold acts. Prints Markdown.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evaluators import metrics as M  # noqa: E402
from evaluators.acts.data import ARENA_DEV, ARENA_EVAL, iard_split, load_arena_style, load_iard  # noqa: E402
from evaluators.acts.quality import compare_dialogues, evaluate_rows  # noqa: E402
from evaluators.meta import kendall_tau  # noqa: E402


def fmt(v):
    return "-" if v is None else f"{v:.2f}"


def table(title, results):
    print(f"\n**{title}**\n")
    print("| annotator | intent | precision | recall | F1 | support |")
    print("|---|---|---|---|---|---|")
    for name, metrics in results:
        for intent, prf in metrics.items():
            print(f"| {name} | {intent} | {fmt(prf.precision)} | {fmt(prf.recall)} | {fmt(prf.f1)} | {prf.support} |")


def metric_agreement(gold, predicted):
    print("\n**Per-dialogue metrics from predicted vs gold acts (IARD held-out)**\n")
    print("| metric | mean (gold acts) | mean (predicted) | mean abs. difference | Kendall tau over dialogues |")
    print("|---|---|---|---|---|")
    for name, fn in (("rdl", M.rdl), ("srrr", M.srrr), ("sr", M.success)):
        g = [fn(d) for d in gold]
        p = [fn(d) for d in predicted]
        diff = statistics.mean(abs(a - b) for a, b in zip(g, p))
        tau = kendall_tau(g, p)
        print(f"| {name} | {statistics.mean(g):.3f} | {statistics.mean(p):.3f} | {diff:.3f} | {fmt(tau)} |")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--annotator", choices=["offline", "llm"], default="offline")
    ap.add_argument("--errors", action="store_true", help="list the arena-style eval rows it gets wrong")
    args = ap.parse_args(argv)

    if args.annotator == "offline":
        from evaluators.acts.offline import OfflineActAnnotator

        variants = [("offline (classifier + cues)", OfflineActAnnotator()),
                    ("offline (classifier only)", OfflineActAnnotator(use_rules=False))]
    else:
        from arena.config import Settings
        from arena.llm import build_client
        from evaluators.acts.llm import LLMActAnnotator

        client = build_client(Settings.from_env())
        variants = [(f"llm ({client.describe()})", LLMActAnnotator(client))]

    _, held = iard_split(load_iard())
    eval_rows, dev_rows = load_arena_style(ARENA_EVAL), load_arena_style(ARENA_DEV)
    iard_results, eval_results, dev_results = [], [], []
    predicted_main = None
    for name, annotator in variants:
        started = time.time()
        predicted = [annotator.annotate(d, overwrite=True) for d in held]
        n_utts = sum(len(d.utterances) for d in held)
        elapsed = time.time() - started
        print(f"<!-- {name}: {len(held)} IARD dialogues, {n_utts} utterances in {elapsed:.1f}s"
              f" ({n_utts / elapsed:.0f} utterances/s, model loading included) -->")
        iard_results.append((name, compare_dialogues(held, predicted)))
        predicted_main = predicted_main or predicted
        counts, listing = evaluate_rows(annotator, eval_rows)
        eval_results.append((name, counts))
        if args.errors and predicted_main is predicted:
            keys = {"REC-S", "REC-E", "ACC", "REJ"}
            for rid, gold, pred in listing:
                if (gold & keys) != (pred & keys) and not ({"REC-S", "REC-E"} & gold and {"REC-S", "REC-E"} & pred
                                                          and (gold & {"ACC", "REJ"}) == (pred & {"ACC", "REJ"})):
                    print(f"<!-- miss {rid}: gold {sorted(gold)} predicted {sorted(pred)} -->")
        dev_results.append((name, evaluate_rows(annotator, dev_rows)[0]))
    print(f"IARD held-out: {len(held)} dialogues; arena-style eval: {len(eval_rows)} utterances; "
          f"dev: {len(dev_rows)} utterances.")
    table("IARD held-out part", iard_results)
    table("Arena-style evaluation set (assets/acts/eval_arena_style.jsonl)", eval_results)
    table("Arena-style development set (assets/acts/dev_arena_style.jsonl, cues tuned here)", dev_results)
    metric_agreement(held, predicted_main)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
