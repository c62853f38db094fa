"""Accept and Reject decided for F1 against IARD's labels (version 15's candidates).

Version 14 chose its Accept/Reject thresholds for metric agreement (`metric_calibration`):
Reject at 0.2 raised recall and left precision at .42-.45 on IARD, whose annotators mark most
complaints about a shown item's features as critiques rather than rejections. The candidates
here keep version 14's network and choose for Accept F1 + Reject F1 on IARD's val part instead,
optionally with Reject also decided in context (`context_decision.REJECT_FEATURES`).

A `Candidate` names the parts each regression is fitted on (IARD val, the CRS Arena calibration
part, IARD train: the network's own training dialogues, used for fitting only; none: the
network's own output) and whether its thresholds are chosen for F1 or given. `evaluate`
measures a candidate out of fold (the folds by dialogue of `metric_calibration`): each regression is
fitted on four folds and read on the fifth, and the thresholds are chosen on IARD val's other four folds from
those out-of-fold probabilities, then applied to the fifth fold of every part. `fit` makes what
would ship: regressions fitted on every dialogue of their parts, thresholds chosen on all of
IARD val's out-of-fold probabilities. `passes` is the rule written before any candidate was
fitted (BENCHMARKS.md, "Act annotator version 15").

`ROUND_17` (BENCHMARKS.md, "Act annotator round 17") starts from version 16 (`REFERENCES`): its Accept
regression also reads whether the words take an item; its rule asks Accept to gain and Reject to hold.

`ROUND_16` holds the next round's candidates (BENCHMARKS.md, "Act annotator version 16"): version 14's
decisions, with Accept and Reject allowed together on an utterance that addresses different items
(`offline.MixedDecisions`); measured against the same rule.
"""

from __future__ import annotations

import itertools
import statistics
from dataclasses import dataclass
from typing import Optional

import numpy as np

from arena.dialogue import Dialogue, Role
from arena.runtime.imports import heavy_imports
from evaluators.acts.context_decision import ACC, REJ, ContextDecision, feature_matrix
from evaluators.acts.metric_calibration import (
    FOLDS, Scored, agreement, decided, fold_of, objective, with_predicted_acts,
)
from evaluators.acts.offline import MixedDecisions
from evaluators.acts.schema import intents_of

IARD_VAL = "iard-val"
CRSARENA = "crsarena-calibration"
# The network's own training dialogues: regressions may fit on them, nothing is measured.
IARD_TRAIN = "iard-train"
MEASURED = (IARD_VAL, CRSARENA)
GRID = tuple(float(t) for t in np.round(np.arange(0.05, 0.96, 0.05), 2))
C = 0.1  # inverse L2 strength of both regressions (version 14's choice for Accept)
# The rule (BENCHMARKS.md): both F1 at least this much above version 14's, the objective at most this much
# below.
MIN_F1_GAIN = 0.03
MAX_OBJECTIVE_DROP = 0.02


@dataclass(frozen=True)
class Candidate:
    name: str
    accept_parts: tuple[str, ...]  # parts the Accept regression is fitted on; () = the network's own output
    reject_parts: tuple[str, ...]  # the same for Reject
    thresholds: Optional[tuple[float, float]] = None
    # Accept and Reject kept first under the limit of three intents (offline.decide)
    decided_first: bool = False
    mixed: Optional[MixedDecisions] = None  # Accept with Reject where the utterance addresses different items
    accept_words: bool = False  # the Accept regression also reads what the words say (round 17)

    @property
    def keeps_decisions(self) -> bool:
        """Version 14's Accept regression and thresholds unchanged (what it ships is the artifact's own)."""
        return not self.accept_words and (self.accept_parts, self.reject_parts, self.thresholds) == (
            VERSION_14.accept_parts, VERSION_14.reject_parts, VERSION_14.thresholds)


BOTH = (IARD_VAL, CRSARENA)
VERSION_14 = Candidate("14 (shipped)", BOTH, (), (0.35, 0.2))
CANDIDATES = (
    Candidate("A: thresholds for F1", BOTH, ()),
    Candidate("B: Reject in context (IARD val)", BOTH, (IARD_VAL,)),
    Candidate("B2: Reject in context (IARD val + CRS Arena)", BOTH, BOTH),
    Candidate("C: both in context (IARD val)", (IARD_VAL,), (IARD_VAL,)),
    Candidate("D: Reject in context (IARD train + val)", BOTH, (IARD_TRAIN, IARD_VAL)),
    Candidate("E: both in context (IARD train + val)", (IARD_TRAIN, IARD_VAL), (IARD_TRAIN, IARD_VAL)),
    # Added after the first five were measured: the coherent label sets cost version 14 Accept and Reject.
    Candidate("F: Accept and Reject first among three", BOTH, (), (0.35, 0.2), decided_first=True),
    Candidate("F-A: F, thresholds for F1", BOTH, (), decided_first=True),
    Candidate(
        "F-D: F, Reject in context (IARD train + val)", BOTH, (IARD_TRAIN, IARD_VAL), decided_first=True
    ),
)
_V14 = (BOTH, (), (0.35, 0.2))
ROUND_16 = (
    Candidate("G: different items by parts", *_V14, mixed=MixedDecisions()),
    Candidate("G-N: G, or two items named", *_V14, mixed=MixedDecisions(by_items=True)),
    Candidate("H: G, Accept and Reject first among three", *_V14, decided_first=True, mixed=MixedDecisions()),
    Candidate("H-N: G-N, Accept and Reject first among three", *_V14, decided_first=True,
              mixed=MixedDecisions(by_items=True)),
    Candidate("K: H-N, the second decision at half its threshold where the parts carry both", *_V14,
              decided_first=True, mixed=MixedDecisions(by_items=True, second_at=0.5)),
)
# Round 17 (BENCHMARKS.md, "Act annotator round 17"): version 16 (H) with Accept read with the words as well.
VERSION_16 = Candidate("16 (shipped)", *_V14, decided_first=True, mixed=MixedDecisions())
ROUND_17 = (
    Candidate("L: Accept with the words that take an item", *_V14, decided_first=True, mixed=MixedDecisions(),
              accept_words=True),
    Candidate("L-A: L, thresholds for F1", BOTH, (), None, decided_first=True, mixed=MixedDecisions(),
              accept_words=True),
)
ROUNDS = {"15": CANDIDATES, "16": ROUND_16, "17": ROUND_17}
# The reference each round is measured against: version 14 as it was served, or version 16 from round 17 on.
REFERENCES = {"17": VERSION_16}
# Per round, the least (Accept, Reject) F1 gain on IARD val its rule asks; round 17 lets Reject fall by 0.01.
F1_GAINS = {"17": (0.03, -0.01)}


def _in_fold(name: str, k: int, fold: int) -> bool:
    """Whether dialogue `k` of part `name` is in `fold`; a part that is not measured is in none."""
    return name in MEASURED and fold_of(name, k) == fold


def _labels(item: Scored, users: list[int], intent: str) -> np.ndarray:
    return np.array([intent in intents_of(item.dialogue.utterances[i]) for i in users], dtype=bool)


def _fit_regression(parts: dict[str, list[Scored]], names: tuple[str, ...], output: int,
                    keep=lambda name, k: True, words: bool = False) -> ContextDecision:
    with heavy_imports():
        from sklearn.linear_model import LogisticRegression

    intent = "ACC" if output == ACC else "REJ"
    rows, labels = [], []
    for name in names:
        for k, item in enumerate(parts[name]):
            if not keep(name, k):
                continue
            users, x = feature_matrix(item.roles, item.probs, item.facts, output, words)
            if users:
                rows.append(x)
                labels.append(_labels(item, users, intent))
    model = LogisticRegression(C=C, max_iter=5000).fit(np.concatenate(rows), np.concatenate(labels))
    return ContextDecision(model.coef_[0].astype(np.float64), float(model.intercept_[0]), output, words)


def _decisions(candidate: Candidate, parts: dict[str, list[Scored]], keep=lambda name, k: True
               ) -> list[ContextDecision]:
    out = []
    for names, output in ((candidate.accept_parts, ACC), (candidate.reject_parts, REJ)):
        if names:
            out.append(_fit_regression(parts, names, output, keep, candidate.accept_words and output == ACC))
    return out


def _apply(decisions: list[ContextDecision], item: Scored) -> np.ndarray:
    out = np.array(item.probs, dtype=np.float64, copy=True)
    for decision in decisions:
        decision.decided(item.roles, item.probs, item.facts, into=out)
    return out


def out_of_fold_probabilities(
    candidate: Candidate, parts: dict[str, list[Scored]]
) -> dict[str, list[np.ndarray]]:
    """Per measured part and dialogue, the outputs with each regression's column read by one fitted
    without its fold."""
    oof = {name: [s.probs.copy() for s in parts[name]] for name in MEASURED}
    for fold in range(FOLDS):
        decisions = _decisions(candidate, parts, lambda name, k: not _in_fold(name, k, fold))
        for name in MEASURED:
            for k, item in enumerate(parts[name]):
                if _in_fold(name, k, fold):
                    oof[name][k] = _apply(decisions, item)
    return oof


def _counts(items: list[Scored], probs: list[np.ndarray], threshold: np.ndarray, decided_first: bool = False,
            mixed: Optional[MixedDecisions] = None) -> dict[str, np.ndarray]:
    """Per intent (ACC, REJ): [tp, fp, fn] over the user utterances."""
    out = {"ACC": np.zeros(3, int), "REJ": np.zeros(3, int)}
    for item, p in zip(items, probs):
        for utt, intents in zip(item.dialogue.utterances, decided(item, p, threshold, decided_first, mixed)):
            if utt.role != Role.USER:
                continue
            gold = intents_of(utt)
            for intent, c in out.items():
                c += (intent in gold and intent in intents, intent not in gold and intent in intents,
                      intent in gold and intent not in intents)
    return out


def _f1(c: np.ndarray) -> float:
    tp, fp, fn = c
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


def best_f1_thresholds(
    items: list[Scored],
    probs: list[np.ndarray],
    base: np.ndarray,
    decided_first: bool = False,
    mixed: Optional[MixedDecisions] = None,
) -> tuple[float, float]:
    """The (Accept, Reject) grid point with the highest Accept F1 + Reject F1 on `items`
    (ties: the higher thresholds, the surer decisions)."""
    best: Optional[tuple[float, float, float]] = None
    for t_acc, t_rej in itertools.product(GRID, GRID):
        threshold = base.copy()
        threshold[ACC], threshold[REJ] = t_acc, t_rej
        c = _counts(items, probs, threshold, decided_first, mixed)
        score = _f1(c["ACC"]) + _f1(c["REJ"])
        if best is None or score >= best[0] - 1e-12:
            best = (score, t_acc, t_rej)
    assert best is not None
    return best[1], best[2]


def evaluate(candidate: Candidate, parts: dict[str, list[Scored]], base: np.ndarray) -> dict[str, object]:
    """Out-of-fold figures of `candidate`: per part, `agreement` of the predicted acts (act-level
    P/R/F1 and the metrics), the mean `objective`, and the thresholds each fold used."""
    oof = out_of_fold_probabilities(candidate, parts)
    predicted: dict[str, dict[int, Dialogue]] = {name: {} for name in MEASURED}  # by index in its part
    used = []
    for fold in range(FOLDS):
        threshold = base.copy()
        if candidate.thresholds is None:
            inner = [k for k in range(len(parts[IARD_VAL])) if fold_of(IARD_VAL, k) != fold]
            threshold[ACC], threshold[REJ] = best_f1_thresholds(
                [parts[IARD_VAL][k] for k in inner],
                [oof[IARD_VAL][k] for k in inner],
                base,
                candidate.decided_first,
                candidate.mixed,
            )
        else:
            threshold[ACC], threshold[REJ] = candidate.thresholds
        used.append((float(threshold[ACC]), float(threshold[REJ])))
        for name in MEASURED:
            for k, item in enumerate(parts[name]):
                if fold_of(name, k) == fold:
                    predicted[name][k] = with_predicted_acts(
                        item, oof[name][k], threshold, candidate.decided_first, candidate.mixed
                    )
    results = {name: agreement([s.dialogue for s in parts[name]],
                               [predicted[name][k] for k in range(len(parts[name]))]) for name in MEASURED}
    return {"parts": results, "objective": statistics.mean(objective(r) for r in results.values()),
            "thresholds": used}


def f1_pair(result: dict[str, object], part: str = IARD_VAL) -> tuple[float, float]:
    acts = result["parts"][part]["acts"]  # type: ignore[index]
    return acts["Accept"].f1 or 0.0, acts["Reject"].f1 or 0.0


def passes(result: dict[str, object], reference: dict[str, object], round_: str = "16") -> bool:
    """The round's rule, less its latency clause (measured by benchmarks/acts_coherence.py): on IARD val
    Accept and Reject F1 at least the round's `F1_GAINS` above the reference's (both MIN_F1_GAIN unless
    given), the mean objective at most MAX_OBJECTIVE_DROP below."""
    (acc, rej), (acc0, rej0) = f1_pair(result), f1_pair(reference)
    accept_gain, reject_gain = F1_GAINS.get(round_, (MIN_F1_GAIN, MIN_F1_GAIN))
    return (acc >= acc0 + accept_gain - 1e-9 and rej >= rej0 + reject_gain - 1e-9
            and result["objective"] >= reference["objective"] - MAX_OBJECTIVE_DROP - 1e-9)  # type: ignore[operator]


def fit(candidate: Candidate, parts: dict[str, list[Scored]], base: np.ndarray
        ) -> tuple[list[ContextDecision], np.ndarray]:
    """What `candidate` ships: its regressions fitted on every dialogue of their parts, and the
    thresholds chosen on IARD val from out-of-fold probabilities (or given)."""
    threshold = base.copy()
    if candidate.thresholds is None:
        oof = out_of_fold_probabilities(candidate, parts)
        threshold[ACC], threshold[REJ] = best_f1_thresholds(parts[IARD_VAL], oof[IARD_VAL], base,
                                                            candidate.decided_first, candidate.mixed)
    else:
        threshold[ACC], threshold[REJ] = candidate.thresholds
    return _decisions(candidate, parts), threshold
