"""Do RDL, SRRR and SR from an annotator's acts follow those from reference acts?

    HF_HUB_OFFLINE=1 python benchmarks/acts_metric_agreement.py [--artifact NAME=PATH ...]

For each annotator (the shipped offline annotator by default; `--artifact v13=/path/act_model.safetensors`
adds an earlier artifact, read with its own thresholds and decision), on the held-out parts:
- IARD's held-out part (60 dialogues), IARD's own labels;
- the CRS Arena test part (102 real crowd-user dialogues with the nine systems of the CRS Arena
  study, labelled by hand with the labelling guide; needs ../shared/data/crsarena_dial_texts);
- the ReDial test part (labels from the seekers' answers, on the turns they label: act level only,
  as the answers leave most turns unlabelled, so no per-dialogue metric can be computed from them).
Per dialogue: Kendall tau between each metric from predicted and from reference acts, and the means;
per utterance: precision / recall / F1 of Recommend, Accept and Reject. The validation parts the
decision was chosen on are reported with `--validation` (the figures stored in the artifact are
out of fold; these are in-sample). Prints Markdown.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from acts_quality import weak_comparison  # noqa: E402
from evaluators.acts.data import iard_split, load_crsarena_acts, load_iard  # noqa: E402
from evaluators.acts.metric_calibration import METRICS, agreement  # noqa: E402
from evaluators.acts.redial_weak import load_redial  # noqa: E402
from evaluators.acts.training import is_iard_val  # noqa: E402

REDIAL = ROOT.parent / "shared" / "data" / "redial_dialogues" / "valid_data.jsonl"
CRSARENA_TEXTS = ROOT.parent / "shared" / "data" / "crsarena_dial_texts" / "dialogues.json"


def fmt(v) -> str:
    return "-" if v is None else f"{v:.2f}"


def prf(p) -> str:
    return f"{fmt(p.precision)} / {fmt(p.recall)} / {fmt(p.f1)}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--artifact", action="append", default=[], metavar="NAME=PATH",
                    help="an act model artifact to measure beside the shipped one")
    ap.add_argument("--validation", action="store_true", help="also the validation parts (in-sample)")
    ap.add_argument("--crsarena", type=Path, default=CRSARENA_TEXTS, help="the CRS Arena dialogue texts")
    ap.add_argument("--redial", type=Path, default=REDIAL, help="ReDial dialogues with the seekers' answers")
    args = ap.parse_args(argv)
    from evaluators.acts.offline import OfflineActAnnotator

    annotators = [(f"offline {OfflineActAnnotator().version} (shipped)", OfflineActAnnotator())]
    for spec in args.artifact:
        name, _, path = spec.partition("=")
        annotators.append((name, OfflineActAnnotator(artifact=Path(path))))

    train, held = iard_split(load_iard())
    parts = [("IARD held-out (60 dialogues)", held), ("CRS Arena test part (102 dialogues)", load_crsarena_acts("test", args.crsarena))]
    if args.validation:
        parts += [("IARD val (33, validation)", [d for d in train if is_iard_val(d.dialogue_id)]),
                  ("CRS Arena calibration part (140, validation)", load_crsarena_acts("calibration", args.crsarena))]
    redial_test = load_redial(args.redial, exclude=frozenset(d.dialogue_id for d in load_iard()))["test"] \
        if args.redial.exists() else []

    print("| part | annotator | tau RDL | tau SRRR | tau SR | mean SR predicted / reference "
          "| Recommend P / R / F1 | Accept P / R / F1 | Reject P / R / F1 |")
    print("|---|---|---|---|---|---|---|---|---|")
    for part, dialogues in parts:
        for name, annotator in annotators:
            predicted = [annotator.annotate(d, overwrite=True) for d in dialogues]
            r = agreement(dialogues, predicted)
            taus = " | ".join(fmt(r[m]["tau"]) for m in METRICS)
            acts = r["acts"]
            print(f"| {part} | {name} | {taus} | {r['sr']['mean_predicted']:.2f} / {r['sr']['mean_reference']:.2f} | "
                  f"{prf(acts['Recommend'])} | {prf(acts['Accept'])} | {prf(acts['Reject'])} |")
    for name, annotator in annotators:
        if redial_test:
            w = weak_comparison(annotator, redial_test)
            print(f"| ReDial test ({len(redial_test)} dialogues, seekers' answers) | {name} | - | - | - | - | "
                  f"{prf(w['Recommend'])} | {prf(w['Accept'])} | {prf(w['Reject'])} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
