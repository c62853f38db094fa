"""SR and SRRR as UserSimCRS's evaluation code computes them, beside the arena's own reading.

The arena's reading (`evaluators.metrics`, the default metric names `srrr` and `sr`) follows the RDL
paper: a recommendation round starts at a Recommend utterance, so what is said before the first
recommendation belongs to no round, and a round is successful when the user accepts anywhere in it.
UserSimCRS's metric code (`usersimcrs/evaluation/dialogue_annotation.py`, whose rounds its SR and SRRR
metrics count) reads the same acts in two other ways, and `srrr_usersimcrs` / `sr_usersimcrs` follow it
so the two can be put side by side:

- Rounds are counted from the start of the dialogue: the utterances are cut before every Recommend
  (REC-S or REC-E, on an utterance of either side), and every piece is a round, the piece before the
  first Recommend included. A dialogue that opens with a request therefore has one round more than it
  has recommendations, and a dialogue without any Recommend is a single round.
- A round's outcome is the user's last decision in it: each user utterance with ACC makes the round
  accepted, each one with REJ (and no ACC) makes it not accepted, so REC, ACC, REJ is a failed round and
  REC, REJ, ACC a successful one. A round without a decision is not accepted.

SRRR is accepted rounds over rounds (0 for an empty dialogue), SR is 1 when some round is accepted.
RDL is the same in both readings (accepting user utterances over utterances), so it has no second
name. Figures on IARD's 259 dialogues: docs/metrics.md.
"""

from __future__ import annotations

from dataclasses import dataclass

from arena.dialogue import Dialogue
from evaluators.acts.schema import RECOMMEND, intents_of, is_acceptance, is_rejection
from evaluators.metrics import require_acts


@dataclass(frozen=True)
class UserSimCRSRound:
    start: int  # index of the round's first utterance (its Recommend, or 0 for the opening piece)
    end: int  # index one past its last utterance
    accepted: bool
    opening: bool  # the piece before the first Recommend (no recommendation in it)


def usersimcrs_rounds(dialogue: Dialogue) -> list[UserSimCRSRound]:
    """The dialogue cut before every Recommend; each piece with the user's last decision in it."""
    utts = dialogue.utterances
    # UserSimCRS looks for the recommending intents on every utterance, whoever says it.
    cuts = [i for i, u in enumerate(utts) if i > 0 and intents_of(u) & RECOMMEND]
    bounds = list(zip([0, *cuts], [*cuts, len(utts)]))
    rounds = []
    for start, end in bounds:
        if start == end:
            continue
        accepted = False
        for u in utts[start:end]:
            if is_acceptance(u):
                accepted = True
            elif is_rejection(u):
                accepted = False
        rounds.append(UserSimCRSRound(start, end, accepted, opening=not intents_of(utts[start]) & RECOMMEND))
    return rounds


def srrr_usersimcrs(dialogue: Dialogue) -> float:
    """SRRR as UserSimCRS computes it: accepted rounds, counted from the start, over those rounds."""
    require_acts(dialogue)
    rounds = usersimcrs_rounds(dialogue)
    return sum(r.accepted for r in rounds) / len(rounds) if rounds else 0.0


def success_usersimcrs(dialogue: Dialogue) -> float:
    """SR as UserSimCRS computes it: 1.0 when some round (the opening piece included) is accepted."""
    require_acts(dialogue)
    return 1.0 if any(r.accepted for r in usersimcrs_rounds(dialogue)) else 0.0
