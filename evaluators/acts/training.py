"""Training data for the act model, and the choice of its decision thresholds.

Sources (see assets/acts/MODEL_CARD.md):
- IARD's training part, every intent with IARD's own labels (the reference);
- ReDial dialogues with weak labels from the seekers' answers (`redial_weak`): REC on
  system turns, ACC and REJ on user turns; the other intents are masked;
- the arena-style sets (`data.ARENA_SETS`), Recommend/Accept/Reject of their last utterance.
Each source is split by dialogue into train / val / test before anything is measured;
test parts are never read here. Decision thresholds are chosen on the val parts
(`fine_tuning` fits the network).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Iterable, Optional

import numpy as np

from arena.dialogue import Dialogue, RecommendedItem, Role
from arena.titles.linking import find_mentions
from evaluators.acts.data import LabelledUtterance
from evaluators.acts.features import dialogue_pairs
from evaluators.acts.network import LABELS, REC, encode_pairs, label_index
from evaluators.acts.quality import PRF
from evaluators.acts.redial_weak import WeakLabels
from evaluators.acts.schema import AGENT_INTENTS, RECOMMEND, USER_INTENTS, intents_of

ROLE_INTENTS = {Role.USER: list(USER_INTENTS), Role.AGENT: list(AGENT_INTENTS) + [REC]}
DECIDED = {Role.USER: ("ACC", "REJ"), Role.AGENT: (REC,)}
GRID = np.round(np.arange(0.02, 0.99, 0.01), 2)
PRECISION_TARGET = 0.95
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
        rows: list[dict[str, Optional[bool]]] = []
        for utt in d.utterances:
            gold = intents_of(utt)
            if utt.role == Role.AGENT and gold & RECOMMEND:
                gold.add(REC)
            rows.append({lab: lab in gold for lab in ROLE_INTENTS[utt.role]})
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
        last: dict[str, Optional[bool]] = (
            {REC: bool(row.intents & RECOMMEND)} if row.role == Role.AGENT
            else {"ACC": "ACC" in row.intents, "REJ": "REJ" in row.intents})
        labels: list[dict[str, Optional[bool]]] = [{} for _ in range(n - 1)] + [last]
        out.append(LabelledDialogue(row.dialogue, labels, "arena"))
        if with_items and last.get(REC):
            utt = row.dialogue.utterances[-1]
            found = [m.title for m in find_mentions(utt)]
            if found:
                copy = row.dialogue.model_copy(deep=True)
                copy.utterances[-1].items = [
                    RecommendedItem(item_id=f"t{k}", title=t) for k, t in enumerate(found)
                ]
                out.append(LabelledDialogue(copy, labels, "arena"))
    return out


@dataclass
class Examples:
    """Model inputs with their labels: per row the token ids, the label vector over
    `network.LABELS` (1/0), which labels are known (weak labels and the other role's
    outputs are not), the row's role and source."""

    rows: list[tuple[list[int], list[int]]] = field(default_factory=list)
    y: list[list[float]] = field(default_factory=list)
    known: list[list[float]] = field(default_factory=list)
    roles: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.rows)

    def arrays(self) -> dict[str, np.ndarray]:
        return {"y": np.array(self.y, dtype=np.float32).reshape(len(self), len(LABELS)),
                "known": np.array(self.known, dtype=np.float32).reshape(len(self), len(LABELS)),
                "roles": np.array(self.roles), "sources": np.array(self.sources)}


def build_examples(data: list[LabelledDialogue], tok, linker) -> Examples:
    """Every utterance with at least one known label becomes a row."""
    out = Examples()
    for ld in data:
        views, pairs = dialogue_pairs(ld.dialogue, linker)
        keep = [i for i, labels in enumerate(ld.labels) if any(v is not None for v in labels.values())]
        for i, row in zip(keep, encode_pairs(tok, [pairs[i] for i in keep])):
            role = views[i].role
            y, known = [0.0] * len(LABELS), [0.0] * len(LABELS)
            for intent, value in ld.labels[i].items():
                if value is None:
                    continue
                j = label_index(role, intent)
                y[j], known[j] = float(value), 1.0
            out.rows.append(row)
            out.y.append(y)
            out.known.append(known)
            out.roles.append(role.value)
            out.sources.append(ld.source)
    return out


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
    precise = np.array(
        [p.precision is not None and p.precision >= PRECISION_TARGET and p.tp >= 5 for p in stats]
    )
    if precise.any():
        return float(GRID[int(np.argmax(np.where(precise, f1, -1.0)))])
    f05 = np.array([(1.25 * p.tp / (1.25 * p.tp + 0.25 * p.fn + p.fp)) if p.tp else 0.0 for p in stats])
    return float(GRID[int(np.argmax(f05))])


def choose_thresholds(probs: np.ndarray, val: Examples, sources: tuple[str, ...] = THRESHOLD_SOURCES
                      ) -> dict[str, float]:
    """A threshold per label of `network.LABELS`, from the val rows of `sources`."""
    arr = val.arrays()
    rows = np.isin(arr["sources"], sources)
    out = {}
    for j, name in enumerate(LABELS):
        role, intent = name.split(":", 1)
        known = rows & (arr["known"][:, j] > 0)
        y, s = arr["y"][known, j] > 0, probs[known, j]
        out[name] = choose_threshold(y, s, intent in DECIDED[Role(role)]) if y.any() else 0.5
    return out


def measure(probs: np.ndarray, data: Examples, thresholds: dict[str, float]) -> dict[str, dict[str, dict]]:
    """Per source, P/R/F1 of Recommend, Accept and Reject at `thresholds`."""
    names = {f"AGENT:{REC}": "Recommend", "USER:ACC": "Accept", "USER:REJ": "Reject"}
    arr = data.arrays()
    out: dict[str, dict[str, dict]] = {}
    for label, name in names.items():
        j = LABELS.index(label)
        for source in sorted(set(data.sources)):
            rows = (arr["known"][:, j] > 0) & (arr["sources"] == source)
            prf = counts(arr["y"][rows, j] > 0, probs[rows, j], thresholds[label])
            out.setdefault(source, {})[name] = prf.as_dict()
    return out
