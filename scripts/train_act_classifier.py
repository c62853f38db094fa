"""Rebuild the offline act annotator's artifact (assets/acts/act_classifier.npz + .json).

    HF_HUB_OFFLINE=1 python scripts/train_act_classifier.py [--labels second|iard] [--iard FILE]
        [--out assets/acts/act_classifier.npz]

Trains on IARD's training part only (see evaluators/acts/data.py for the fixed
held-out split). Accept and Reject come from the second annotation of that
part (assets/acts/iard_train_second_annotation.jsonl, read with
LABELING_GUIDE.md, the metrics' reading) unless `--labels iard` keeps IARD's
own; the other intents are IARD's. Decision thresholds are picked on
out-of-fold predictions of a 5-fold, dialogue-grouped cross-validation inside
the training part: the best F1, and for Accept and Reject the best F1 among
thresholds whose out-of-fold precision reaches PRECISION_FLOOR. The run is
deterministic: the same data gives the same weights.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arena.dialogue import Role  # noqa: E402
from evaluators.acts import classifier  # noqa: E402
from evaluators.acts.data import (  # noqa: E402
    HELD_OUT_MODULUS, TRAIN_SECOND_ANNOTATION, iard_path, iard_split, load_iard, load_second_annotation,
    with_second_annotation,
)
from evaluators.acts.embedding import MODEL_NAME, shared_encoder  # noqa: E402
from evaluators.acts.features import FEATURE_LAYOUT, feature_rows, view_dialogue  # noqa: E402
from evaluators.acts.offline import DEFAULT_ARTIFACT, REC, ActModel, decide  # noqa: E402
from evaluators.acts.quality import compare  # noqa: E402
from arena.title_mentions import shared_linker  # noqa: E402
from evaluators.acts.schema import AGENT_INTENTS, RECOMMEND, USER_INTENTS, intents_of  # noqa: E402

LABELS = {Role.USER: list(USER_INTENTS), Role.AGENT: list(AGENT_INTENTS) + [REC]}
HYPER = {"l2": 0.03, "epochs": 300, "lr": 0.05}
N_FOLDS = 5
GRID = np.round(np.arange(0.1, 0.96, 0.05), 2)
PRECISION_FLOOR = {"ACC": 0.8, "REJ": 0.8}


def gold_labels(utt) -> set[str]:
    labels = intents_of(utt)
    if utt.role == Role.AGENT and labels & RECOMMEND:
        labels.add(REC)
    return labels


def build(dialogues, encoder):
    """Per dialogue: its views, and per role the feature rows and gold label sets."""
    out = []
    linker = shared_linker()
    all_views = [view_dialogue(d, linker) for d in dialogues]
    # One big batch first: per-dialogue calls then hit the encoder's cache.
    encoder.encode([v.masked for views in all_views for v in views])
    for d, views in zip(dialogues, all_views):
        rows = feature_rows(views, encoder)
        out.append((d, views, rows))
    return out


def stack(built, role):
    X = [rows[role][1] for _, _, rows in built if rows[role][0]]
    Y = []
    for d, _, rows in built:
        for i in rows[role][0]:
            labels = gold_labels(d.utterances[i])
            Y.append([lab in labels for lab in LABELS[role]])
    return np.vstack(X), np.array(Y, dtype=float)


def fit_models(built, thresholds=None):
    models = {}
    for role in (Role.USER, Role.AGENT):
        X, Y = stack(built, role)
        model = classifier.fit(X, Y, LABELS[role], **HYPER)
        if thresholds is not None:
            model.thresholds = np.array([thresholds[role][lab] for lab in LABELS[role]])
        models[role] = model
    return models


def out_of_fold_probabilities(built):
    """Probabilities for every training utterance from a model that did not see its dialogue."""
    folds = [i % N_FOLDS for i in range(len(built))]
    probs = [[None] * len(d.utterances) for d, _, _ in built]
    for k in range(N_FOLDS):
        train = [b for b, f in zip(built, folds) if f != k]
        models = fit_models(train)
        for j, (d, views, rows) in enumerate(built):
            if folds[j] != k:
                continue
            for role, (idx, X) in rows.items():
                if not idx:
                    continue
                P = models[role].predict_proba(X)
                for row, i in zip(P, idx):
                    probs[j][i] = dict(zip(LABELS[role], (float(p) for p in row)))
    return probs


def _f1(tp, fp, fn):
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


def pick_thresholds(built, probs):
    """Per label, the grid threshold with the best out-of-fold F1."""
    thresholds = {}
    for role in (Role.USER, Role.AGENT):
        thresholds[role] = {}
        gold, pred = [], []
        for (d, views, rows), p in zip(built, probs):
            for i in rows[role][0]:
                gold.append(gold_labels(d.utterances[i]))
                pred.append(p[i])
        for lab in LABELS[role]:
            y = np.array([lab in g for g in gold])
            s = np.array([p[lab] for p in pred])
            counts = [(int((s >= t)[y].sum()), int((s >= t)[~y].sum()), int((s < t)[y].sum())) for t in GRID]
            scores = [_f1(*c) for c in counts]
            floor = PRECISION_FLOOR.get(lab) if role == Role.USER else None
            if floor is not None:
                precise = [f if tp + fp and tp / (tp + fp) >= floor else -1.0 for f, (tp, fp, _) in zip(scores, counts)]
                if max(precise) > 0:
                    scores = precise
            thresholds[role][lab] = float(GRID[int(np.argmax(scores))])
    return thresholds


def evaluate_decisions(built, probs, model, use_rules=True):
    pairs = []
    for (d, views, _), p in zip(built, probs):
        for utt, intents in zip(d.utterances, decide(views, p, model, use_rules=use_rules)):
            pairs.append((utt.role, intents_of(utt), set(intents)))
    return compare(pairs)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--iard", type=Path, default=None, help="IARD JSON (default: assets/iard)")
    ap.add_argument("--out", type=Path, default=DEFAULT_ARTIFACT)
    ap.add_argument("--version", default="4", help="artifact version recorded in every score")
    ap.add_argument("--labels", choices=["second", "iard"], default="second",
                    help="Accept/Reject for training: the second annotation (default) or IARD's own")
    args = ap.parse_args(argv)

    started = time.time()
    train, held = iard_split(load_iard(args.iard))
    print(f"IARD: {len(train)} training dialogues, {len(held)} held out (not used)")
    if args.labels == "second":
        train = with_second_annotation(train, load_second_annotation(TRAIN_SECOND_ANNOTATION))
    encoder = shared_encoder()
    built = build(train, encoder)
    print(f"features built in {time.time() - started:.1f}s")

    probs = out_of_fold_probabilities(built)
    thresholds = pick_thresholds(built, probs)
    decision = {"rec_without_title": 0.8}
    cv_models = {role: classifier.MultiLabelLogReg(
        labels=LABELS[role], weights=np.zeros((1, len(LABELS[role]))), bias=np.zeros(len(LABELS[role])),
        mean=np.zeros(1), scale=np.ones(1), thresholds=np.array([thresholds[role][lab] for lab in LABELS[role]]))
        for role in (Role.USER, Role.AGENT)}
    cv_model = ActModel(cv_models, {"decision": decision, "version": "cv"})
    best = None
    for cut in (0.7, 0.8, 0.9, 0.95, 1.01):  # 1.01: never without a title
        cv_model.meta["decision"]["rec_without_title"] = cut
        f1 = evaluate_decisions(built, probs, cv_model)["Recommend"].f1
        print(f"  recommend without a title above {cut}: out-of-fold F1 {f1:.3f}")
        if best is None or f1 > best[0] + 1e-9:
            best = (f1, cut)
    decision["rec_without_title"] = best[1]
    cv = {}
    for use_rules in (False, True):
        metrics = evaluate_decisions(built, probs, cv_model, use_rules=use_rules)
        cv["with_rules" if use_rules else "classifier_only"] = {k: v.as_dict() for k, v in metrics.items()}
        print(f"cross-validated on training part ({'with' if use_rules else 'without'} cues):")
        for name, prf in metrics.items():
            print(f"  {name:9s} P={prf.precision:.3f} R={prf.recall:.3f} F1={prf.f1:.3f} (n={prf.support})")

    models = fit_models(built, thresholds)
    meta = {
        "version": args.version,
        "feature_layout": FEATURE_LAYOUT,
        "embedding_model": MODEL_NAME,
        "title_linker": "catalogs: redial, opendialkg",
        "hyperparameters": HYPER,
        "decision": decision,
        "training": {
            "data": str(Path(args.iard).name if args.iard else iard_path().name),
            "dialogues": len(train),
            "accept_reject_labels": TRAIN_SECOND_ANNOTATION.name if args.labels == "second" else "iard",
            "precision_floor": PRECISION_FLOOR,
            "utterances": sum(len(d.utterances) for d in train),
            "held_out_rule": f"int(sha256(conversation_id)[:8], 16) % {HELD_OUT_MODULUS} == 0",
            "held_out_dialogues": len(held),
            "cross_validation": cv,
        },
    }
    ActModel(models, meta).save(args.out)
    print(f"wrote {args.out} and {args.out.with_suffix('.json')} in {time.time() - started:.1f}s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
