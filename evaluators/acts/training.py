"""Training the offline act model: data assembly, fitting and threshold choice.

Sources (see assets/acts/MODEL_CARD.md):
- IARD's training part, every intent with IARD's own labels (the reference);
- ReDial dialogues with weak labels from the seekers' answers (`redial_weak`): REC on
  system turns, ACC and REJ on user turns; the other intents are masked;
- the arena-style sets (`data.ARENA_SETS`), Recommend/Accept/Reject of their last utterance.
Each source is split by dialogue into train / val / test before anything is measured;
test parts are never read here. Decision thresholds are chosen on the val parts.
Deterministic: the same data, hyperparameters and seed give the same bytes.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Iterable, Optional

import numpy as np

from arena.dialogue import Dialogue, RecommendedItem, Role
from evaluators.acts import classifier
from evaluators.acts.data import LabelledUtterance
from evaluators.acts.features import feature_rows, view_dialogue
from evaluators.acts.offline import REC, ActModel
from evaluators.acts.quality import PRF
from evaluators.acts.redial_weak import WeakLabels
from arena.title_mentions import find_mentions
from evaluators.acts.schema import AGENT_INTENTS, RECOMMEND, USER_INTENTS, intents_of

LABELS = {Role.USER: list(USER_INTENTS), Role.AGENT: list(AGENT_INTENTS) + [REC]}
DECIDED = {Role.USER: ("ACC", "REJ"), Role.AGENT: (REC,)}
HYPER = {"l2": 0.1, "epochs": 300, "lr": 0.05, "positive_weight": 1.0}
GRID = np.round(np.arange(0.02, 0.99, 0.01), 2)
PRECISION_TARGET = 0.95
REDIAL_WEIGHT = {"AGENT": 1.0, "USER": 0.1}
THRESHOLD_SOURCES = ("iard", "arena")
VAL_MODULUS = 5


def is_iard_val(dialogue_id: str) -> bool:
    """The validation part of IARD's training part (about a fifth, by a hash of the id)."""
    return int(hashlib.sha256(f"val:{dialogue_id}".encode("utf-8")).hexdigest()[:8], 16) % VAL_MODULUS == 0


@dataclass
class LabelledDialogue:
    """A dialogue and, per utterance, {label: True/False/None (unknown)}."""

    dialogue: Dialogue
    labels: list[dict[str, Optional[bool]]]
    source: str  # "iard" | "redial" | "arena"


def from_iard(dialogues: Iterable[Dialogue]) -> list[LabelledDialogue]:
    out = []
    for d in dialogues:
        rows = []
        for utt in d.utterances:
            gold = intents_of(utt)
            if utt.role == Role.AGENT and gold & RECOMMEND:
                gold.add(REC)
            rows.append({lab: lab in gold for lab in LABELS[utt.role]})
        out.append(LabelledDialogue(d, rows, "iard"))
    return out


def from_redial(items: Iterable[WeakLabels]) -> list[LabelledDialogue]:
    return [LabelledDialogue(w.dialogue, w.labels, "redial") for w in items]


def from_arena_style(rows: Iterable[LabelledUtterance], with_items: bool = False) -> list[LabelledDialogue]:
    """Only the last utterance of each row is labelled, and only for Recommend/Accept/Reject
    (the sets follow the labeling guide, whose other intents were not checked).

    `with_items`: also a copy of every recommending system row that names titles, with those
    titles attached as items, the way the arena's CRSs attach what they recommend; no other
    source has attached items, so without these copies the model could not learn what they mean.
    """
    out = []
    for row in rows:
        n = len(row.dialogue.utterances)
        last = {REC: bool(row.intents & RECOMMEND)} if row.role == Role.AGENT else {
            "ACC": "ACC" in row.intents, "REJ": "REJ" in row.intents}
        labels = [{} for _ in range(n - 1)] + [last]
        out.append(LabelledDialogue(row.dialogue, labels, "arena"))
        if with_items and last.get(REC):
            utt = row.dialogue.utterances[-1]
            found = [m.title for m in find_mentions(utt)]
            if found:
                copy = row.dialogue.model_copy(deep=True)
                copy.utterances[-1].items = [RecommendedItem(item_id=f"t{k}", title=t) for k, t in enumerate(found)]
                out.append(LabelledDialogue(copy, labels, "arena"))
    return out


@dataclass
class Built:
    """Feature rows per role, with their labels, masks and sources."""

    X: dict[Role, np.ndarray] = field(default_factory=dict)
    Y: dict[Role, np.ndarray] = field(default_factory=dict)
    known: dict[Role, np.ndarray] = field(default_factory=dict)
    source: dict[Role, np.ndarray] = field(default_factory=dict)


def build(data: list[LabelledDialogue], encoder, linker) -> Built:
    views = [view_dialogue(ld.dialogue, linker) for ld in data]
    encoder.encode([v.masked for vs in views for v in vs])  # one batch; the per-dialogue calls hit the cache
    parts: dict[Role, list] = {Role.USER: [], Role.AGENT: []}
    for ld, vs in zip(data, views):
        for role, (idx, X) in feature_rows(vs, encoder).items():
            for row, i in zip(X, idx):
                labels = ld.labels[i]
                y = [float(bool(labels.get(lab))) for lab in LABELS[role]]
                k = [float(labels.get(lab) is not None) for lab in LABELS[role]]
                parts[role].append((row, y, k, ld.source))
    built = Built()
    for role, rows in parts.items():
        n = len(LABELS[role])
        built.X[role] = np.array([r[0] for r in rows]).reshape(len(rows), -1)
        built.Y[role] = np.array([r[1] for r in rows]).reshape(len(rows), n)
        built.known[role] = np.array([r[2] for r in rows]).reshape(len(rows), n)
        built.source[role] = np.array([r[3] for r in rows], dtype=object)
    return built


def fit_models(built: Built, hyper: dict, redial_weight: dict[str, float], seed: int
               ) -> dict[Role, classifier.MultiLabelLogReg]:
    """`redial_weight`: per role ("USER", "AGENT"), the weight of a ReDial row; IARD and arena rows weigh 1."""
    models = {}
    for role in (Role.USER, Role.AGENT):
        weight = np.where(built.source[role] == "redial", redial_weight[role.value], 1.0)
        models[role] = classifier.fit(built.X[role], built.Y[role], LABELS[role], known=built.known[role],
                                      row_weight=weight, seed=seed, **hyper)
    return models


def counts(y: np.ndarray, s: np.ndarray, t: float) -> PRF:
    hit = s >= t
    return PRF(tp=int((hit & y).sum()), fp=int((hit & ~y).sum()), fn=int((~hit & y).sum()))


def choose_threshold(y: np.ndarray, s: np.ndarray, decided: bool) -> float:
    """For Recommend/Accept/Reject: the best F1 among thresholds whose precision reaches the target,
    else the best F0.5 (precision first). Other intents: the best F1."""
    stats = [counts(y, s, t) for t in GRID]
    f1 = np.array([p.f1 or 0.0 for p in stats])
    if not decided:
        return float(GRID[int(np.argmax(f1))])
    precise = np.array([p.precision is not None and p.precision >= PRECISION_TARGET and p.tp >= 5 for p in stats])
    if precise.any():
        return float(GRID[int(np.argmax(np.where(precise, f1, -1.0)))])
    f05 = np.array([(1.25 * p.tp / (1.25 * p.tp + 0.25 * p.fn + p.fp)) if p.tp else 0.0 for p in stats])
    return float(GRID[int(np.argmax(f05))])


def select(built: Built, sources: tuple[str, ...]) -> Built:
    """The rows of `built` that come from `sources`."""
    out = Built()
    for role in built.X:
        keep = np.isin(built.source[role], sources)
        out.X[role], out.Y[role] = built.X[role][keep], built.Y[role][keep]
        out.known[role], out.source[role] = built.known[role][keep], built.source[role][keep]
    return out


def choose_thresholds(models, val: Built) -> dict[Role, dict[str, float]]:
    out: dict[Role, dict[str, float]] = {}
    for role, model in models.items():
        P = model.predict_proba(val.X[role])
        out[role] = {}
        for j, lab in enumerate(LABELS[role]):
            known = val.known[role][:, j] > 0
            y, s = val.Y[role][known, j] > 0, P[known, j]
            out[role][lab] = choose_threshold(y, s, lab in DECIDED[role]) if y.any() else 0.5
        model.thresholds = np.array([out[role][lab] for lab in LABELS[role]])
    return out


def measure(models, built: Built) -> dict[str, dict[str, dict]]:
    """Per source, P/R/F1 of the decided labels at the models' thresholds."""
    names = {REC: "Recommend", "ACC": "Accept", "REJ": "Reject"}
    out: dict[str, dict[str, dict]] = {}
    for role, model in models.items():
        P = model.predict_proba(built.X[role])
        for j, lab in enumerate(LABELS[role]):
            if lab not in DECIDED[role]:
                continue
            for source in sorted(set(built.source[role])):
                rows = (built.known[role][:, j] > 0) & (built.source[role] == source)
                prf = counts(built.Y[role][rows, j] > 0, P[rows, j], float(model.thresholds[j]))
                out.setdefault(source, {})[names[lab]] = prf.as_dict()
    return out


def train(train_data: list[LabelledDialogue], val_data: list[LabelledDialogue], encoder, linker, *,
          hyper: Optional[dict] = None, redial_weight: Optional[dict[str, float]] = None, seed: int = 0,
          version: str = "dev") -> tuple[ActModel, dict]:
    """Fit on `train_data`, choose thresholds on `val_data`; returns the model and a report."""
    hyper = dict(HYPER if hyper is None else hyper)
    redial_weight = dict(REDIAL_WEIGHT if redial_weight is None else redial_weight)
    tr = build(train_data, encoder, linker)
    va = build(val_data, encoder, linker)
    models = fit_models(tr, hyper, redial_weight, seed)
    # Thresholds from the human-labelled val parts only: the seekers' answers are too noisy a
    # reference for Accept/Reject precision (see the model card).
    thresholds = choose_thresholds(models, select(va, THRESHOLD_SOURCES))
    report = {"validation": measure(models, va),
              "thresholds": {r.value: {k: thresholds[r][k] for k in DECIDED[r]} for r in thresholds}}
    meta = {"version": version, "hyperparameters": hyper, "redial_weight": redial_weight, "seed": seed,
            "threshold_sources": list(THRESHOLD_SOURCES), "precision_target": PRECISION_TARGET,
            "rows": {r.value: {"train": int(tr.X[r].shape[0]), "val": int(va.X[r].shape[0])} for r in tr.X},
            "validation": report["validation"]}
    return ActModel(models, meta), report
