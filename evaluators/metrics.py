"""Utility metrics over one dialogue, as pure functions.

Act-based metrics (Bernard and Balog, 2025, the "RDL paper") read the IARD
dialogue acts on the utterances (fill them with an annotator first):

- Recommend: a system utterance with REC-S or REC-E; Accept: a user utterance
  with ACC; Reject: a user utterance with REJ.
- Dialogue length |d| counts *utterances* (user and system messages both), as
  the paper defines a dialogue as its sequence of utterances and as its
  authors' evaluation code does; `length_unit="turns"` counts user turns
  instead (one user message and its reply).
- RDL (eq. 5) = |I_acc| / |d|, with |I_acc| the number of user utterances
  that accept a recommendation.
- A recommendation round starts at a Recommend utterance and lasts until the
  next one (or the end). It is successful when the user accepts in it, at any
  point: an Accept after a Reject (the user came round) and an Accept followed
  by a Reject (of another item, or second thoughts) both count, as RDL counts
  that acceptance too. A round with only rejections is rejected; one without
  a decision is pending; both count as unsuccessful.
- SRRR (eq. 4) = successful rounds / rounds; 0.0 for a dialogue without rounds.
- SR (eq. 3), per dialogue: 1.0 if any round was successful, else 0.0; the
  system-level success rate is the mean over dialogues. So every acceptance
  RDL counts inside a round also makes the dialogue successful; an Accept
  before the system recommended anything counts for RDL (|I_acc| counts
  accepting utterances) but accepts no recommendation, so it is no success.
  Where and why this differs from UserSimCRS: docs/protocols.md.
- `explain_act_metrics` lays the three values open for an audit: each round
  with its outcome (accepted, rejected, pending) and the utterance that
  settled it, each acceptance counted in |I_acc|, and |d|.

Target-based metrics (PEPPER, Kim et al.) use dialogue.metadata["targets"], a
list of item ids or titles. A *turn* is one system utterance; its list P_t is
its `items` (else the TITLE slots of its Recommend acts), cut to the first k.

- Recall@k at turn t = |P_t ∩ Y| / |Y| (`arena.target_metrics`); `recall_at_k`
  averages over all system turns (turns without recommendations count as 0).
- PC_t = |(P_1 ∪ … ∪ P_t) ∩ Y| / |Y| (preference coverage after t turns);
  PCIR_t = PC_t − PC_{t−1} with PC_0 = 0; its mean over the turns is PCIR_avg.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Optional, Sequence

from arena.dialogue import Dialogue, Role, Utterance
from evaluators.acts.schema import intents_of, is_acceptance, is_recommendation, is_rejection, titles_of
from arena.target_metrics import coverage_per_turn, recall_at, target_keys

LENGTH_UNITS = ("utterances", "turns")


class MissingActs(ValueError):
    """An act-based metric was asked for on a dialogue without dialogue acts."""


def require_acts(dialogue: Dialogue) -> None:
    missing = sum(1 for u in dialogue.utterances if u.dialogue_acts is None)
    if missing:
        raise MissingActs(f"{missing} of {len(dialogue.utterances)} utterances have no dialogue acts")


def dialogue_length(dialogue: Dialogue, unit: str = "utterances") -> int:
    if unit == "utterances":
        return len(dialogue.utterances)
    if unit == "turns":
        return dialogue.num_turns
    raise ValueError(f"length unit must be one of {LENGTH_UNITS}, got {unit!r}")


def accepted_count(dialogue: Dialogue) -> int:
    """|I_acc|: user utterances that accept a recommendation."""
    return sum(1 for u in dialogue.utterances if is_acceptance(u))


@dataclass(frozen=True)
class Round:
    start: int  # index of the Recommend utterance
    end: int  # index one past the round's last utterance
    decision: Optional[str]  # "accept" (an acceptance in it), "reject" (only rejections) or None
    decided_at: Optional[int] = None  # index of its first acceptance, else of its first rejection

    @property
    def successful(self) -> bool:
        return self.decision == "accept"


def recommendation_rounds(dialogue: Dialogue) -> list[Round]:
    utts = dialogue.utterances
    starts = [i for i, u in enumerate(utts) if is_recommendation(u)]
    rounds = []
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(utts)
        accepted = next((i for i in range(start + 1, end) if is_acceptance(utts[i])), None)
        rejected = next((i for i in range(start + 1, end) if is_rejection(utts[i])), None)
        if accepted is not None:
            rounds.append(Round(start, end, "accept", accepted))
        elif rejected is not None:
            rounds.append(Round(start, end, "reject", rejected))
        else:
            rounds.append(Round(start, end, None, None))
    return rounds


def rdl(dialogue: Dialogue, length_unit: str = "utterances") -> float:
    """Reward-per-Dialogue-Length for one dialogue (eq. 5 before averaging)."""
    require_acts(dialogue)
    length = dialogue_length(dialogue, length_unit)
    return accepted_count(dialogue) / length if length else 0.0


def srrr(dialogue: Dialogue) -> float:
    """Successful Recommendation Round Ratio for one dialogue (eq. 4 before averaging)."""
    require_acts(dialogue)
    rounds = recommendation_rounds(dialogue)
    return sum(r.successful for r in rounds) / len(rounds) if rounds else 0.0


def success(dialogue: Dialogue) -> float:
    """1.0 when some recommendation round holds an acceptance, else 0.0 (eq. 3 before averaging)."""
    require_acts(dialogue)
    return 1.0 if any(r.successful for r in recommendation_rounds(dialogue)) else 0.0


# -- explaining the values ------------------------------------------------------

OUTCOMES = {"accept": "accepted", "reject": "rejected", None: "pending"}


@dataclass(frozen=True)
class UtteranceRef:
    """One utterance an explanation points at: its index in the dialogue, text, intents and their
    annotator."""

    index: int
    text: str
    intents: tuple[str, ...]
    annotator: Optional[str]  # Utterance.acts_annotator: None when the acts came with the dialogue


@dataclass(frozen=True)
class RoundExplanation:
    number: int  # 1-based, in dialogue order
    recommend: UtteranceRef  # the Recommend utterance that opens the round
    titles: tuple[str, ...]  # what it recommended (items shown, else its TITLE slots)
    outcome: str  # "accepted", "rejected" or "pending" (no decision before the next Recommend)
    decided_by: Optional[UtteranceRef]  # its first acceptance, else its first rejection


@dataclass(frozen=True)
class AcceptanceExplanation:
    utterance: UtteranceRef  # a user utterance counted in |I_acc|
    round: Optional[int]  # the round it falls in; None before the first Recommend
    decides_round: bool  # whether it is the round's first acceptance (a later one still counts for RDL)


@dataclass(frozen=True)
class ActMetricsExplanation:
    """Why a dialogue's RDL, SRRR and SR have their values, for an audit of the acts behind them."""

    rounds: tuple[RoundExplanation, ...]
    acceptances: tuple[AcceptanceExplanation, ...]  # I_acc
    length: int  # |d|
    length_unit: str
    rdl: float
    srrr: float
    sr: float

    def as_dict(self) -> dict:
        return asdict(self)


def _ref(dialogue: Dialogue, index: int) -> UtteranceRef:
    utt = dialogue.utterances[index]
    return UtteranceRef(index, utt.text, tuple(sorted(intents_of(utt))), utt.acts_annotator)


def explain_act_metrics(dialogue: Dialogue, length_unit: str = "utterances") -> ActMetricsExplanation:
    """Each recommendation round with its outcome and the utterance that settled it, each acceptance
    RDL counts, |d|, and the resulting RDL, SRRR and SR (the same functions compute them)."""
    require_acts(dialogue)
    rounds = recommendation_rounds(dialogue)
    explained = tuple(
        RoundExplanation(
            n,
            _ref(dialogue, r.start),
            tuple(title for _, title in turn_recommendations(dialogue.utterances[r.start])),
            OUTCOMES[r.decision],
            _ref(dialogue, r.decided_at) if r.decided_at is not None else None,
        )
        for n, r in enumerate(rounds, start=1)
    )
    acceptances = []
    for i, utt in enumerate(dialogue.utterances):
        if is_acceptance(utt):
            within = next((n for n, r in enumerate(rounds, start=1) if r.start < i < r.end), None)
            decides = within is not None and rounds[within - 1].decided_at == i
            acceptances.append(AcceptanceExplanation(_ref(dialogue, i), within, decides))
    return ActMetricsExplanation(
        explained,
        tuple(acceptances),
        dialogue_length(dialogue, length_unit),
        length_unit,
        rdl(dialogue, length_unit),
        srrr(dialogue),
        success(dialogue),
    )


# -- target-based ----------------------------------------------------------------


def targets_of(dialogue: Dialogue) -> Optional[list[str]]:
    raw = dialogue.metadata.get("targets")
    if raw is None:
        return None
    if isinstance(raw, (str, int)):
        raw = [raw]
    return [str(t) for t in raw if str(t).strip()]


def turn_recommendations(utterance: Utterance, k: Optional[int] = None) -> list[tuple[Optional[str], str]]:
    """(item id or None, title) recommended in one system utterance, first k."""
    if utterance.items:
        recs: list[tuple[Optional[str], str]] = [(i.item_id, i.title) for i in utterance.items]
    elif is_recommendation(utterance):
        recs = [(None, t) for t in titles_of(utterance)]
    else:
        recs = []
    return recs[:k] if k is not None else recs


def recall_per_turn(dialogue: Dialogue, targets: Sequence[str], k: int) -> list[float]:
    if not targets:
        raise ValueError("recall needs at least one target item")
    keys = target_keys(targets)
    return [
        recall_at(turn_recommendations(utt), keys, k) for utt in dialogue.utterances if utt.role == Role.AGENT
    ]


def recall_at_k(dialogue: Dialogue, targets: Sequence[str], k: int) -> float:
    per_turn = recall_per_turn(dialogue, targets, k)
    return sum(per_turn) / len(per_turn) if per_turn else 0.0


def preference_coverage(dialogue: Dialogue, targets: Sequence[str], k: int) -> list[float]:
    """PC_t after each system turn t."""
    if not targets:
        raise ValueError("preference coverage needs at least one target item")
    turns = [turn_recommendations(utt) for utt in dialogue.utterances if utt.role == Role.AGENT]
    return coverage_per_turn(turns, target_keys(targets), k)


def mean(values: Sequence[float]) -> Optional[float]:
    return sum(values) / len(values) if values else None
