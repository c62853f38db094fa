"""Accept decided in the dialogue's context, for the metrics that count acceptances.

The network reads one utterance with the turn before it. Whether a user took a
recommendation is often only clear around it: the system's next turn recommends again
(the user asked for more) or closes; the user's next turn picks a title or says goodbye.
RDL and the success rate count acceptances, so an Accept the utterance alone leaves
doubtful costs them directly (version 13's per-utterance thresholds, chosen for
precision 0.95, left Accept recall at .37-.44 and predicted SR at .47 against .70).

Here a logistic regression reads the network's outputs for the user utterance and its
neighbours (`features`) and gives the probability of Accept. Its coefficients live in the
act model's artifact (`context_decision`), Accept's threshold among the others
(`thresholds["USER:ACC"]`, then a threshold on this probability); both are fitted and chosen
on validation parts by `metric_calibration` so that metrics from the predicted acts follow
those from reference acts. Recommend and Reject stay the network's own decisions.

An artifact may decide Reject in context as well (`reject_features`, version 15's candidates), and
Accept with two facts about the words beside the network's outputs (`accept_word_features`, round
17: whether the utterance names a title the system offered, whether its words take something);
`ContextDecision.from_meta` tells them apart by the feature names the artifact lists.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional, Sequence

import numpy as np

from arena.dialogue import Role
from arena.reading.acts import words_take
from evaluators.acts.network import LABELS, REC

if TYPE_CHECKING:
    from evaluators.acts.features import UtteranceView

USER_OUTPUTS = tuple(j for j, name in enumerate(LABELS) if name.startswith("USER:"))
ACC = LABELS.index("USER:ACC")
REJ = LABELS.index("USER:REJ")
CRI_F = LABELS.index("USER:CRI-F")
REF = LABELS.index("USER:REF")
AGENT_REC = LABELS.index(f"AGENT:{REC}")
ABSENT = -9.2  # the logit of 1e-4: a neighbour that does not exist reads as "surely not"
FEATURES: tuple[str, ...] = tuple(
    [f"logit {LABELS[j]}" for j in USER_OUTPUTS]
    + ["logit REC of the system turn before", "logit REC of the system turn three before",
       "logit REC of the system turn after", "last user utterance",
       "logit ACC of the next user utterance", "logit REJ of the next user utterance"])
FACTS: tuple[str, ...] = ("names a title", "names a title the system offered")
REJECT_FEATURES: tuple[str, ...] = FEATURES + (
    "logit CRI-F of the next user utterance", "logit REF of the next user utterance") + FACTS
# Round 17's Accept inputs: the network's, and what the words say ("I'll try it out!", "perfect!").
WORDS_TAKE = "its words take something"
ACCEPT_WORD_FACTS: tuple[str, ...] = ("names a title the system offered", WORDS_TAKE)
ACCEPT_WORD_FEATURES: tuple[str, ...] = FEATURES + ACCEPT_WORD_FACTS
ALL_FACTS: tuple[str, ...] = FACTS + (WORDS_TAKE,)  # the columns of `utterance_facts`


def _logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(np.asarray(p, dtype=np.float64), 1e-4, 1 - 1e-4)
    return np.log(p / (1 - p))


def features(roles: Sequence[Role], probs: np.ndarray, i: int) -> np.ndarray:
    """The inputs for user utterance `i` (see FEATURES), from every utterance's network outputs."""
    n = len(roles)

    def agent_rec(k: int) -> float:
        return float(_logit(probs[k][AGENT_REC])) if 0 <= k < n and roles[k] == Role.AGENT else ABSENT

    nxt = (_logit(probs[i + 2][[ACC, REJ]]) if i + 2 < n and roles[i + 2] == Role.USER
           else np.array([ABSENT, ABSENT]))
    last = 0.0 if any(r == Role.USER for r in roles[i + 1:]) else 1.0
    return np.concatenate([_logit(probs[i][list(USER_OUTPUTS)]),
                           [agent_rec(i - 1), agent_rec(i - 3), agent_rec(i + 1), last], nxt])


def utterance_facts(views: Sequence["UtteranceView"]) -> np.ndarray:
    """Per utterance (`ALL_FACTS`): whether a user utterance names a title, whether it names one a
    system turn before it named (the item a turn-down would be about), and whether its words take
    something (`arena.reading.acts.words_take`); 0 for system turns."""
    offered: set[str] = set()
    out = np.zeros((len(views), len(ALL_FACTS)))
    for i, view in enumerate(views):
        keys = view.title_keys
        if view.role == Role.USER:
            takes = words_take(view.utterance.text or "")
            out[i] = (float(bool(keys)), float(bool(keys & offered)), float(takes))
        else:
            offered |= keys
    return out


def reject_features(roles: Sequence[Role], probs: np.ndarray, facts: np.ndarray, i: int) -> np.ndarray:
    """The inputs of the Reject decision for user utterance `i` (see REJECT_FEATURES)."""
    n = len(roles)
    nxt = (_logit(probs[i + 2][[CRI_F, REF]]) if i + 2 < n and roles[i + 2] == Role.USER
           else np.array([ABSENT, ABSENT]))
    return np.concatenate([features(roles, probs, i), nxt, facts[i, :len(FACTS)]])


def accept_word_features(roles: Sequence[Role], probs: np.ndarray, facts: np.ndarray, i: int) -> np.ndarray:
    """The inputs of round 17's Accept decision for user utterance `i` (see ACCEPT_WORD_FEATURES)."""
    columns = [ALL_FACTS.index(name) for name in ACCEPT_WORD_FACTS]
    return np.concatenate([features(roles, probs, i), facts[i, columns]])


def feature_matrix(roles: Sequence[Role], probs: np.ndarray, facts: Optional[np.ndarray] = None,
                   output: int = ACC, words: bool = False) -> tuple[list[int], np.ndarray]:
    """(indices of the user utterances, their feature rows) for the decision of `output` (ACC or
    REJ; Reject's, and Accept's with `words`, need `facts`, from `utterance_facts`)."""
    users = [i for i, r in enumerate(roles) if r == Role.USER]
    if output == ACC and not words:
        rows = [features(roles, probs, i) for i in users]
    elif facts is None:
        raise ValueError("this decision needs the utterances' facts (utterance_facts)")
    elif output == ACC:
        rows = [accept_word_features(roles, probs, facts, i) for i in users]
    else:
        rows = [reject_features(roles, probs, facts, i) for i in users]
    return users, np.array(rows).reshape(len(users), len(feature_names(output, words)))


def feature_names(output: int, words: bool = False) -> tuple[str, ...]:
    if output not in (ACC, REJ) or (words and output != ACC):
        raise ValueError(f"no such context decision for output {LABELS[output]}")
    return (ACCEPT_WORD_FEATURES if words else FEATURES) if output == ACC else REJECT_FEATURES


@dataclass(frozen=True)
class ContextDecision:
    """Logistic regression over the inputs of `output` (`features` for Accept, `reject_features`)."""

    coef: np.ndarray
    intercept: float
    output: int = ACC
    words: bool = False  # Accept read with what the words say as well (ACCEPT_WORD_FEATURES)

    @property
    def needs_facts(self) -> bool:
        return self.output == REJ or self.words

    @classmethod
    def from_meta(cls, meta: dict[str, Any], output: int = ACC) -> "ContextDecision":
        names = list(meta.get("features", []))
        words = output == ACC and names == list(ACCEPT_WORD_FEATURES)
        if names != list(feature_names(output, words)):
            raise ValueError("the artifact's context decision reads other features than this code makes")
        return cls(np.asarray(meta["coef"], dtype=np.float64), float(meta["intercept"]), output, words)

    def to_meta(self) -> dict[str, Any]:
        return {"features": list(feature_names(self.output, self.words)),
                "coef": [round(float(c), 6) for c in self.coef], "intercept": round(self.intercept, 6)}

    def probabilities(self, rows: np.ndarray) -> np.ndarray:
        return 1.0 / (1.0 + np.exp(-(rows @ self.coef + self.intercept)))

    def decided(self, roles: Sequence[Role], probs: np.ndarray, facts: Optional[np.ndarray] = None,
                into: Optional[np.ndarray] = None) -> np.ndarray:
        """`into` (default: a copy of `probs`) with the `output` column of every user utterance
        replaced by the context probability, read from the network's outputs `probs`."""
        out = np.array(probs, dtype=np.float64, copy=True) if into is None else into
        users, rows = feature_matrix(roles, probs, facts, self.output, self.words)
        if users:
            out[users, self.output] = self.probabilities(rows)
        return out

    def accept_probabilities(self, roles: Sequence[Role], probs: np.ndarray,
                             facts: Optional[np.ndarray] = None) -> np.ndarray:
        """`probs` with the ACC column of every user utterance replaced by the context probability."""
        return self.decided(roles, probs, facts)
