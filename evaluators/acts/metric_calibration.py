"""Decisions chosen for the metrics they feed: RDL and SR from predicted acts should follow the reference.

Version 13 chose each threshold for precision 0.95 on its own; Accept recall fell to about .4
and the metrics that count acceptances with it. Here the decision is chosen on validation
dialogues by what a researcher reads off it: per dialogue, Kendall's tau between RDL from
predicted and from reference acts, the same for SR, minus the gap between the mean predicted
and reference SR (`objective`), averaged over the validation parts (IARD's val part and the
CRS Arena calibration part: ReDial-style chat and the arena's own distribution).

`fit_context_decision` fits the context decision (`context_decision.py`) and picks the Accept
and Reject thresholds on out-of-fold probabilities (folds by dialogue), so that the thresholds
are judged on dialogues the regression did not see; the regression shipped is then refitted
on every validation dialogue.
"""

from __future__ import annotations

import hashlib
import itertools
import statistics
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

import numpy as np

from arena.dialogue import Dialogue, Role
from arena.runtime.imports import heavy_imports
from evaluators import metrics as M
from evaluators.acts.context_decision import ACC, REJ, ContextDecision, feature_matrix
from evaluators.acts.offline import MixedDecisions, decide
from evaluators.acts.quality import PRF, compare_dialogues
from evaluators.acts.schema import intents_of, make_acts
from evaluators.meta import kendall_tau

ACCEPT_GRID = (0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7)
REJECT_GRID = (0.2, 0.3, 0.4, 0.5, 0.6)
C_GRID = (0.1, 1.0)  # inverse L2 strength of the regression
FOLDS = 5
METRICS: dict[str, Callable[[Dialogue], float]] = {"rdl": M.rdl, "srrr": M.srrr, "sr": M.success}


@dataclass
class Scored:
    """A reference-annotated dialogue and the network's outputs for each of its utterances."""

    dialogue: Dialogue
    roles: list[Role]
    probs: np.ndarray
    facts: Optional[np.ndarray] = None  # `context_decision.utterance_facts` (the Reject decision reads them)
    # distinct titles each utterance names (`MixedDecisions.by_items` reads them)
    titles: Optional[list[int]] = None


def decided(item: Scored, probs: np.ndarray, threshold: np.ndarray, decided_first: bool = False,
            mixed: Optional[MixedDecisions] = None) -> list[list[str]]:
    """`offline.decide` over `item`'s utterances, with their texts and titles."""
    return decide(item.roles, probs, threshold, decided_first=decided_first, mixed=mixed,
                  texts=[u.text for u in item.dialogue.utterances], titles=item.titles)


def with_predicted_acts(item: Scored, probs: np.ndarray, threshold: np.ndarray, decided_first: bool = False,
                        mixed: Optional[MixedDecisions] = None) -> Dialogue:
    copy = item.dialogue.model_copy(deep=True)
    for utt, intents in zip(copy.utterances, decided(item, probs, threshold, decided_first, mixed)):
        utt.dialogue_acts = make_acts(intents)
    return copy


def agreement(reference: Sequence[Dialogue], predicted: Sequence[Dialogue]) -> dict[str, Any]:
    """Per-dialogue metric agreement and act-level P/R/F1 of predicted against reference acts."""
    # "acts": the act-level PRF by act; each metric: its tau and means
    out: dict[str, Any] = {"acts": compare_dialogues(list(reference), list(predicted))}
    for name, fn in METRICS.items():
        ref = [fn(d) for d in reference]
        pred = [fn(d) for d in predicted]
        out[name] = {"tau": kendall_tau(ref, pred), "mean_reference": statistics.mean(ref),
                     "mean_predicted": statistics.mean(pred)}
    return out


def objective(result: dict[str, Any]) -> float:
    """tau(RDL) + tau(SR) - |mean predicted SR - mean reference SR| (a tau that is undefined counts 0)."""
    rdl, sr = result["rdl"], result["sr"]
    return (rdl["tau"] or 0.0) + (sr["tau"] or 0.0) - abs(sr["mean_predicted"] - sr["mean_reference"])


def fold_of(part: str, index: int) -> int:
    """The fold (of FOLDS) of the `index`-th dialogue of validation part `part`."""
    return int(hashlib.sha256(f"{part}:{index}".encode("utf-8")).hexdigest()[:8], 16) % FOLDS


def _labels(item: Scored, users: list[int]) -> np.ndarray:
    return np.array(["ACC" in intents_of(item.dialogue.utterances[i]) for i in users], dtype=bool)


def _training_rows(parts: dict[str, list[Scored]], feats: dict[str, list], keep: Callable[[str, int], bool]
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Feature rows and Accept labels of the user utterances of every dialogue `keep(part, index)` admits."""
    chosen = [(rows, _labels(s, users)) for name, items in parts.items()
              for k, (s, (users, rows)) in enumerate(zip(items, feats[name])) if users and keep(name, k)]
    return np.concatenate([r for r, _ in chosen]), np.concatenate([y for _, y in chosen])


def _fit(rows: np.ndarray, labels: np.ndarray, c: float) -> ContextDecision:
    with heavy_imports():
        from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(C=c, max_iter=2000).fit(rows, labels)
    return ContextDecision(coef=model.coef_[0].astype(np.float64), intercept=float(model.intercept_[0]))


def _best_thresholds(parts: dict[str, list[Scored]], accept_probs: dict[str, list[np.ndarray]],
                     base: np.ndarray) -> tuple[float, float, float, dict[str, dict]]:
    """(objective, Accept threshold, Reject threshold, per-part agreement) of the best grid point."""
    best: Optional[tuple[float, float, float, dict[str, dict]]] = None
    for t_acc, t_rej in itertools.product(ACCEPT_GRID, REJECT_GRID):
        threshold = base.copy()
        threshold[ACC], threshold[REJ] = t_acc, t_rej
        results = {
            name: agreement(
                [s.dialogue for s in items],
                [with_predicted_acts(s, p, threshold) for s, p in zip(items, accept_probs[name])],
            )
            for name, items in parts.items()
        }
        score = statistics.mean(objective(r) for r in results.values())
        if best is None or score > best[0]:
            best = (score, t_acc, t_rej, results)
    assert best is not None
    return best


def fit_context_decision(parts: dict[str, list[Scored]], base_threshold: np.ndarray) -> dict[str, object]:
    """The context decision and thresholds that maximise the mean `objective` over `parts`.

    Returns {"decision": ContextDecision (fitted on every dialogue), "threshold": the thresholds
    (Accept's on the context probability), "c", "objective", "validation": per-part agreement
    out of fold}.
    """
    feats = {name: [feature_matrix(s.roles, s.probs) for s in items] for name, items in parts.items()}
    best: Optional[tuple] = None
    for c in C_GRID:
        oof = {name: [s.probs.copy() for s in items] for name, items in parts.items()}
        for fold in range(FOLDS):
            decision = _fit(*_training_rows(parts, feats, lambda name, k: fold_of(name, k) != fold), c)
            for name, items in parts.items():
                for k, (users, rows) in enumerate(feats[name]):
                    if fold_of(name, k) == fold and users:
                        oof[name][k][users, ACC] = decision.probabilities(rows)
        score, t_acc, t_rej, results = _best_thresholds(parts, oof, base_threshold)
        if best is None or score > best[0]:
            best = (score, c, t_acc, t_rej, results)
    assert best is not None  # C_GRID is not empty
    score, c, t_acc, t_rej, results = best
    decision = _fit(*_training_rows(parts, feats, lambda name, k: True), c)
    threshold = base_threshold.copy()
    threshold[ACC], threshold[REJ] = t_acc, t_rej
    return {"decision": decision, "threshold": threshold, "c": c, "objective": score, "validation": results}


def summary(result: dict[str, Any]) -> dict[str, object]:
    """`agreement`'s result as plain JSON (for the artifact and the benchmark)."""
    acts: dict[str, PRF] = result["acts"]
    out: dict[str, object] = {name: prf.as_dict() for name, prf in acts.items()}
    for name in METRICS:
        out[name] = dict(result[name])
    return out
