"""How far two human readings of IARD's Accept and Reject agree: the ceiling of any annotator scored on IARD.

    HF_HUB_OFFLINE=1 python benchmarks/acts_reference_agreement.py

No model runs here. IARD's user utterances carry IARD's own labels and the project's second annotation
(`training_data/acts/iard_*_second_annotation.jsonl`, read with `assets/acts/LABELING_GUIDE.md`, without
IARD's labels at hand). This script reads the second annotation as if it were an annotator's output
and scores it against IARD's labels, per part (IARD's training part, its val dialogues alone, the
held-out part), in three ways:
- **as read**: the second annotation's Accept and Reject;
- **where IARD marks no critique or SEE**: its Reject kept only where IARD gives the utterance no
  critique (CRI-F, CRI-A, CRI-C) and no SEE. It reads IARD's own labels of those intents: what a
  reader would reach that had learnt, without error, IARD's habit of calling a complaint about a
  feature a critique, not a turn-down;
- **where they part**: the intents IARD gives to the turn-downs the second reading finds and IARD does
  not call Reject.
An annotator trained to the guide's reading cannot be expected to score higher against IARD than the
second reading does; a target above it asks for IARD's labelling habits, not for the act.
Prints Markdown.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evaluators.acts.data import (  # noqa: E402
    SECOND_ANNOTATION, TRAIN_SECOND_ANNOTATION, iard_split, load_iard, load_second_annotation,
)
from evaluators.acts.quality import PRF, reading_agreement  # noqa: E402
from evaluators.acts.training import is_iard_val  # noqa: E402


def fmt(prf: PRF) -> str:
    return " / ".join("-" if v is None else f"{v:.2f}" for v in (prf.precision, prf.recall, prf.f1))


def main() -> int:
    train, held = iard_split(load_iard())
    val = [d for d in train if is_iard_val(d.dialogue_id)]
    second = {**load_second_annotation(TRAIN_SECOND_ANNOTATION), **load_second_annotation(SECOND_ANNOTATION)}
    parts = [("IARD training part (train + val)", train), ("IARD val dialogues alone", val),
             ("IARD held-out part", held)]
    results = [(name, len(dialogues), reading_agreement(dialogues, second)) for name, dialogues in parts]
    print("**The second annotation read as a prediction of IARD's labels (P / R / F1, IARD's support)**\n")
    print("| part | dialogues | user utterances | Accept | Reject, as read "
          "| Reject where IARD marks no critique or SEE |")
    print("|---|---:|---:|---|---|---|")
    for name, n, r in results:
        print(f"| {name} | {n} | {r.users} | {fmt(r.accept)} ({r.accept.support}) | "
              f"{fmt(r.reject)} ({r.reject.support}) | {fmt(r.reject_without_critique)} |")
    print("\n**Where they part: IARD's intents on the turn-downs it does not call Reject**\n")
    print("| part | the second reading's Reject that IARD calls something else | most common IARD intents there |")
    print("|---|---:|---|")
    for name, _, r in results:
        common = ", ".join(f"{k} {v}" for k, v in r.parted.most_common(5))
        print(f"| {name} | {sum(r.parted.values())} | {common} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
