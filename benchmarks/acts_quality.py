"""Quality of the dialogue-act annotators on Recommend / Accept / Reject.

    HF_HUB_OFFLINE=1 python benchmarks/acts_quality.py [--annotator offline|llm] [--errors]

Measures precision, recall and F1 (per utterance) on
- IARD's held-out part (60 dialogues, fixed split, never trained on), twice:
  against IARD's own labels and against the second annotation of Accept/Reject;
- the ReDial test part (`redial_weak`: 20% of the ReDial dialogues by a hash of the
  id, never trained on), against labels from the seekers' answers, on the turns
  those answers label;
- the arena-style held-out set (test10, 90 utterances, never tuned on);
- every other arena-style set in training_data/acts (12 sets, 1,229 utterances; the
  learnt annotator trains on ten of them and chooses thresholds on test8 and
  test9, so these are development figures);
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

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evaluators import metrics as M  # noqa: E402
from evaluators.acts.data import (  # noqa: E402
    ARENA_HELD_OUT, ARENA_SETS, SECOND_ANNOTATION, iard_split, load_arena_style, load_iard, load_second_annotation, with_second_annotation,
)
from evaluators.acts.quality import PRF, compare_dialogues, evaluate_rows  # noqa: E402
from evaluators.acts.redial_weak import load_redial  # noqa: E402
from evaluators.acts.schema import intents_of  # noqa: E402
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


def arena_table(title, per_set):
    print(f"\n**{title}**\n")
    print("| set | positives | Recommend P / R / F1 | Accept P / R / F1 | Reject P / R / F1 |")
    print("|---|---|---|---|---|")
    pooled = {intent: PRF() for intent in per_set[0][1]}
    for set_name, counts in per_set:
        cells = []
        for intent, c in counts.items():
            pooled[intent].tp += c.tp
            pooled[intent].fp += c.fp
            pooled[intent].fn += c.fn
            cells.append(f"{fmt(c.precision)} / {fmt(c.recall)} / {fmt(c.f1)}")
        print(f"| {set_name} | {sum(c.tp + c.fn for c in counts.values())} | " + " | ".join(cells) + " |")
    cells = [f"{fmt(c.precision)} / {fmt(c.recall)} / {fmt(c.f1)}" for c in pooled.values()]
    print("| all | | " + " | ".join(cells) + " |")


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


def weak_comparison(annotator, test) -> dict[str, PRF]:
    """P/R/F1 against the weak labels, on the turns they label (None = skipped)."""
    out = {"Recommend": PRF(), "Accept": PRF(), "Reject": PRF()}
    keys = {"REC": ("Recommend", {"REC-S", "REC-E"}), "ACC": ("Accept", {"ACC"}), "REJ": ("Reject", {"REJ"})}
    for w in test:
        predicted = annotator.annotate(w.dialogue, overwrite=True)
        for utt, labels in zip(predicted.utterances, w.labels):
            for key, gold in labels.items():
                if gold is None:
                    continue
                name, intents = keys[key]
                hit = bool(intents_of(utt) & intents)
                out[name].tp += gold and hit
                out[name].fp += hit and not gold
                out[name].fn += gold and not hit
    return out


def _differs(gold: set[str], pred: set[str]) -> bool:
    rec = {"REC-S", "REC-E"}
    return bool(gold & rec) != bool(pred & rec) or (gold & {"ACC", "REJ"}) != (pred & {"ACC", "REJ"})


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--annotator", choices=["offline", "llm"], default="offline")
    ap.add_argument("--errors", action="store_true", help="list the arena-style rows it gets wrong")
    ap.add_argument("--redial", type=Path, default=ROOT.parent / "shared" / "data" / "redial_dialogues" / "valid_data.jsonl")
    args = ap.parse_args(argv)

    if args.annotator == "offline":
        from evaluators.acts.offline import OfflineActAnnotator

        offline = OfflineActAnnotator()
        variants = [(f"offline {offline.version}", offline)]
    else:
        from arena.runtime.config import Settings
        from arena.llm import build_client
        from evaluators.acts.llm import LLMActAnnotator

        client = build_client(Settings.from_env())
        variants = [(f"llm ({client.describe()})", LLMActAnnotator(client))]

    _, held = iard_split(load_iard())
    held_second = with_second_annotation(held, load_second_annotation()) if SECOND_ANNOTATION.exists() else None
    arena_sets = [(path.name.replace("_arena_style.jsonl", ""), load_arena_style(path)) for path in ARENA_SETS]
    held_out_rows = load_arena_style(ARENA_HELD_OUT)
    held_out_results = []
    iard_results, second_results, arena_results = [], [], []
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
        per_set = []
        for set_name, rows in arena_sets:
            counts, listing = evaluate_rows(annotator, rows)
            per_set.append((set_name, counts))
            if main_predicted is None and args.errors:
                for rid, gold, pred in listing:
                    if _differs(gold, pred):
                        print(f"<!-- miss {rid}: gold {sorted(gold & KEYS)} predicted {sorted(pred & KEYS)} -->")
        arena_results.append((name, per_set))
        held_out_results.append((name, evaluate_rows(annotator, held_out_rows)[0]))
        if main_predicted is None:
            main_predicted = predicted
    redial_results = []
    if args.redial.exists():
        test = load_redial(args.redial, exclude=frozenset(d.dialogue_id for d in load_iard()))["test"]
        for name, annotator in variants:
            redial_results.append((name, weak_comparison(annotator, test)))
    n_arena = sum(len(rows) for _, rows in arena_sets)
    print(f"IARD held-out: {len(held)} dialogues; arena-style sets: {len(arena_sets)} sets, {n_arena} utterances.")
    table("IARD held-out part, IARD's own labels", iard_results)
    if held_second is not None:
        table("IARD held-out part, Accept/Reject from the second annotation", second_results)
        table("Second annotation read as a prediction of IARD's labels (held-out part)",
              [("second annotation", compare_dialogues(held, held_second))])
    if redial_results:
        table("ReDial test part (150 dialogues), labels from the seekers' answers", redial_results)
    table(f"Arena-style held-out set ({ARENA_HELD_OUT.name}: written before this annotator ran on it, never tuned on)",
          held_out_results)
    for name, per_set in arena_results:
        arena_table(f"Arena-style sets, {name} (development figures: every set has been tuned on)", per_set)
    metric_agreement("IARD held-out, IARD's labels", held, main_predicted)
    if held_second is not None:
        metric_agreement("IARD held-out, second annotation", held_second, main_predicted)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
