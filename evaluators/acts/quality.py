"""Precision, recall and F1 of an annotator for Recommend, Accept and Reject.

Counted per utterance: an agent utterance is a Recommend when any of its acts
is REC-S or REC-E; a user utterance is an Accept (Reject) when any act is ACC
(REJ). Gold and predicted annotations are compared on the same utterances.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, Optional

from arena.dialogue import Dialogue, Role
from evaluators.acts.schema import ACCEPT, RECOMMEND, REJECT, intents_of

# IARD's intents for a complaint about a shown item that its annotators did not call a turn-down.
CRITIQUE_OR_SEEN = frozenset({"CRI-F", "CRI-A", "CRI-C", "SEE"})

GROUPS: dict[str, tuple[Role, frozenset[str]]] = {
    "Recommend": (Role.AGENT, RECOMMEND),
    "Accept": (Role.USER, ACCEPT),
    "Reject": (Role.USER, REJECT),
}


@dataclass
class PRF:
    tp: int = 0
    fp: int = 0
    fn: int = 0

    @property
    def support(self) -> int:
        return self.tp + self.fn

    @property
    def precision(self) -> Optional[float]:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> Optional[float]:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None

    @property
    def f1(self) -> Optional[float]:
        p, r = self.precision, self.recall
        if p is None or r is None or p + r == 0:
            return 0.0 if (p is not None and r is not None) else None
        return 2 * p * r / (p + r)

    def as_dict(self) -> dict:
        return {"precision": self.precision, "recall": self.recall, "f1": self.f1,
                "support": self.support, "tp": self.tp, "fp": self.fp, "fn": self.fn}


def compare(pairs: Iterable[tuple[Role, set[str], set[str]]]) -> dict[str, PRF]:
    """`pairs` of (role, gold intents, predicted intents) per utterance."""
    out = {name: PRF() for name in GROUPS}
    for role, gold, pred in pairs:
        for name, (group_role, intents) in GROUPS.items():
            if role != group_role:
                continue
            g, p = bool(gold & intents), bool(pred & intents)
            out[name].tp += g and p
            out[name].fp += p and not g
            out[name].fn += g and not p
    return out


def compare_dialogues(gold: list[Dialogue], predicted: list[Dialogue]) -> dict[str, PRF]:
    def pairs():
        for g, p in zip(gold, predicted):
            for gu, pu in zip(g.utterances, p.utterances):
                yield gu.role, intents_of(gu), intents_of(pu)

    return compare(pairs())


def evaluate_dialogues(annotator, dialogues: list[Dialogue]) -> dict[str, PRF]:
    """Re-annotate gold-annotated dialogues from scratch and compare with the gold acts."""
    predicted = [annotator.annotate(d, overwrite=True) for d in dialogues]
    return compare_dialogues(dialogues, predicted)


def evaluate_rows(annotator, rows) -> tuple[dict[str, PRF], list[tuple[str, set[str], set[str]]]]:
    """Arena-style rows (evaluators.acts.data.LabelledUtterance): score the last utterance of each.

    Returns the counts and (id, gold, predicted) for every row, for error analysis.
    """
    pairs, listing = [], []
    for row in rows:
        out = annotator.annotate(row.dialogue, overwrite=True)
        utt = out.utterances[-1]
        pred = intents_of(utt)
        pairs.append((utt.role, row.intents, pred))
        listing.append((row.id, row.intents, pred))
    return compare(pairs), listing


def _count(prf: PRF, gold: bool, predicted: bool) -> None:
    prf.tp += gold and predicted
    prf.fp += predicted and not gold
    prf.fn += gold and not predicted


@dataclass
class ReadingAgreement:
    """A second human reading of Accept/Reject scored against the dialogues' own labels."""

    users: int = 0
    accept: PRF = field(default_factory=PRF)
    reject: PRF = field(default_factory=PRF)
    # Reject kept only where the labels give no critique and no SEE (`CRITIQUE_OR_SEEN`)
    reject_without_critique: PRF = field(default_factory=PRF)
    # the labels' intent sets on the utterances the second reading turns down and the labels do not
    parted: Counter = field(default_factory=Counter)


def reading_agreement(dialogues: Iterable[Dialogue], second: dict[str, tuple[bool, bool]]
                      ) -> ReadingAgreement:
    """`second`: "<dialogue id>:<utterance index>" -> (accept, reject), read as an annotator's output
    and scored against the user utterances' own labels, on the utterances it covers."""
    out = ReadingAgreement()
    for dialogue in dialogues:
        for i, utt in enumerate(dialogue.utterances):
            decision = second.get(f"{dialogue.dialogue_id}:{i}")
            if utt.role != Role.USER or decision is None:
                continue
            out.users += 1
            gold = intents_of(utt)
            accept, reject = decision
            _count(out.accept, bool(gold & ACCEPT), accept)
            _count(out.reject, bool(gold & REJECT), reject)
            _count(out.reject_without_critique, bool(gold & REJECT), reject and not gold & CRITIQUE_OR_SEEN)
            if reject and not gold & REJECT:
                out.parted[" + ".join(sorted(gold)) or "(none)"] += 1
    return out
