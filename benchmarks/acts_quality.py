"""Quality of the dialogue-act annotators on Recommend / Accept / Reject.

    HF_HUB_OFFLINE=1 python benchmarks/acts_quality.py [--annotator offline|llm] [--errors]

Measures precision, recall and F1 (per utterance) on
- IARD's held-out part (60 dialogues, fixed split, never trained on), twice:
  against IARD's own labels and against the second annotation of Accept/Reject;
- the arena-style test set (assets/acts/test_arena_style.jsonl: written blind,
  never trained or tuned on);
and how far per-dialogue RDL/SRRR/SR from predicted acts are from those
computed from gold acts. It also prints how the two human-readable label sets
of IARD agree with each other, the ceiling any annotator is measured against.
Prints Markdown.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evaluators import metrics as M  # noqa: E402
from evaluators.acts.data import (  # noqa: E402
    ARENA_TEST, SECOND_ANNOTATION, iard_split, load_arena_style, load_iard, load_second_annotation, with_second_annotation,
)
from evaluators.acts.quality import compare_dialogues, evaluate_rows  # noqa: E402
from evaluators.meta import kendall_tau  # noqa: E402

KEYS = {"REC-S", "REC-E", "ACC", "REJ"}


def fmt(v):
    return "-" if v is None else f"{v:.2f}"


def table(title, results):
    print(f"\n**{title}**\n")
    print("| annotator | intent | precision | recall | F1 | support |")
    print("|---|---|---|---|---|---|")
    for name, metrics in results:
        for intent, prf in metrics.items():
            print(f"| {name} | {intent} | {fmt(prf.precision)} | {fmt(prf.recall)} | {fmt(prf.f1)} | {prf.support} |")


def metric_agreement(title, gold, predicted):
    print(f"\n**Per-dialogue metrics from predicted vs gold acts ({title})**\n")
    print("| metric | mean (gold acts) | mean (predicted) | mean abs. difference | Kendall tau over dialogues |")
    print("|---|---|---|---|---|")
    for name, fn in (("rdl", M.rdl), ("srrr", M.srrr), ("sr", M.success)):
        g = [fn(d) for d in gold]
        p = [fn(d) for d in predicted]
        diff = statistics.mean(abs(a - b) for a, b in zip(g, p))
        tau = kendall_tau(g, p)
        print(f"| {name} | {statistics.mean(g):.3f} | {statistics.mean(p):.3f} | {diff:.3f} | {fmt(tau)} |")


def _differs(gold: set[str], pred: set[str]) -> bool:
    rec = {"REC-S", "REC-E"}
    return bool(gold & rec) != bool(pred & rec) or (gold & {"ACC", "REJ"}) != (pred & {"ACC", "REJ"})


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--annotator", choices=["offline", "llm"], default="offline")
    ap.add_argument("--errors", action="store_true", help="list the arena-style test rows it gets wrong")
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
    held_second = with_second_annotation(held, load_second_annotation()) if SECOND_ANNOTATION.exists() else None
    test_rows = load_arena_style(ARENA_TEST)
    iard_results, second_results, test_results = [], [], []
    main_predicted = None
    for name, annotator in variants:
        started = time.time()
        predicted = [annotator.annotate(d, overwrite=True) for d in held]
        n_utts = sum(len(d.utterances) for d in held)
        elapsed = time.time() - started
        print(f"<!-- {name}: {len(held)} IARD dialogues, {n_utts} utterances in {elapsed:.1f}s"
              f" ({n_utts / elapsed:.0f} utterances/s, model loading included) -->")
        iard_results.append((name, compare_dialogues(held, predicted)))
        if held_second is not None:
            second_results.append((name, compare_dialogues(held_second, predicted)))
        counts, listing = evaluate_rows(annotator, test_rows)
        test_results.append((name, counts))
        if main_predicted is None:
            main_predicted = predicted
            if args.errors:
                for rid, gold, pred in listing:
                    if _differs(gold, pred):
                        print(f"<!-- miss {rid}: gold {sorted(gold & KEYS)} predicted {sorted(pred & KEYS)} -->")
    print(f"IARD held-out: {len(held)} dialogues; arena-style test set: {len(test_rows)} utterances.")
    table("IARD held-out part, IARD's own labels", iard_results)
    if held_second is not None:
        table("IARD held-out part, Accept/Reject from the second annotation", second_results)
        table("Second annotation read as a prediction of IARD's labels (held-out part)",
              [("second annotation", compare_dialogues(held, held_second))])
    table(f"Arena-style test set ({ARENA_TEST.relative_to(ARENA_TEST.parents[2])})", test_results)
    metric_agreement("IARD held-out, IARD's labels", held, main_predicted)
    if held_second is not None:
        metric_agreement("IARD held-out, second annotation", held_second, main_predicted)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
