"""How far people agree when two or more of them judged the same thing: Krippendorff's alpha.

Every source comes down to plain `Judgement(unit, rater, value)` triples, so
any of them plugs in:

* aspect ratings of a dialogue (`Dialogue.ratings`; reply aspects per reply),
  people's only: several annotators of an imported rating file, or a stored
  dialogue replayed to workers;
* verdicts (satisfied / frustrated) of the same stored dialogue: its own
  user's and those of the workers it was replayed to;
* votes on the same battle (the same two dialogues);
* a study's gold attention check: every worker judges the same text.

A replay (a stored dialogue shown again to be judged, as the known-answer
tasks do) names the dialogue it shows in its metadata (`replayed_dialogue`),
and its verdict and ratings count as judgements of that dialogue.

Aspect ratings are ordinal (a Likert-type scale: the order of the points
counts, not their distances); verdicts, votes and gold answers are nominal.
The interval resamples units with replacement. Fewer than two units with two
or more raters give no alpha ("not enough overlap"), and judgements that all
take one value give none either ("no variation"): alpha is undefined there,
never 0. See docs/metrics.md, "Rater agreement".
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, replace
from typing import Any, Hashable, Iterable, Literal, NamedTuple, Optional, Sequence, cast

from arena.crowd.rater_check import POOLED_IDS
from arena.dialogue import Dialogue, Role, UserKind

NOT_ENOUGH_OVERLAP = "not enough overlap"
NO_VARIATION = "no variation"
ORDINAL, NOMINAL = "ordinal", "nominal"
ROUNDS = 1000
CONFIDENCE = 0.95
VERDICT, VOTE, GOLD = "verdict", "battle vote", "gold check"
# Where a replayed dialogue names the stored dialogue it shows (the known-answer tasks write the first).
REPLAY_KEYS = (("known_answer", "dialogue_id"), ("replay_of",))


class Judgement(NamedTuple):
    unit: Hashable  # what was judged: a dialogue, a reply, a battle, a gold text
    rater: str
    value: Any


@dataclass(frozen=True)
class Agreement:
    """Krippendorff's alpha of one judgement, with the units and raters it rests on (those units that
    two or more raters judged, and the raters of them). `alpha` is None with a `note` saying why."""

    name: str
    level: str
    units: int
    raters: int
    judgements: int
    alpha: Optional[float] = None
    low: Optional[float] = None
    high: Optional[float] = None
    note: str = ""


def krippendorff_alpha(judgements: Iterable[Judgement], level: str, *, name: str = "",
                       domain: Sequence[Any] = (), rounds: int = ROUNDS, seed: int = 0,
                       confidence: float = CONFIDENCE) -> Agreement:
    """Alpha of `judgements` at `level` (ordinal or nominal) with a percentile bootstrap interval over units.

    A rater's later judgement of a unit replaces an earlier one. `domain`: the scale's points (ordinal:
    they order the values; points nobody chose change nothing)."""
    if level not in (ORDINAL, NOMINAL):
        raise ValueError(f"level must be {ORDINAL} or {NOMINAL}, not {level!r}")
    by_unit: dict[Hashable, dict[str, Any]] = {}
    for j in judgements:
        by_unit.setdefault(j.unit, {})[j.rater] = j.value
    shared = [values for values in by_unit.values() if len(values) >= 2]
    raters = {rater for values in shared for rater in values}
    base = Agreement(name=name, level=level, units=len(shared), raters=len(raters),
                     judgements=sum(len(values) for values in shared))
    if len(shared) < 2:
        return replace(base, note=NOT_ENOUGH_OVERLAP)
    counts = _value_counts(shared, domain, ordered=level == ORDINAL)
    point = _alpha(counts, level)
    if point is None:
        return replace(base, note=NO_VARIATION)
    low, high = _interval(counts, level, rounds, seed, confidence)
    return replace(base, alpha=point, low=low, high=high)


def _value_counts(units: list[dict[str, Any]], domain: Sequence[Any], ordered: bool) -> Any:
    """Units x values: how many raters gave each value to each unit (the library's `value_counts`)."""
    import numpy as np

    seen = {value for values in units for value in values.values()} | set(domain)
    values = sorted(seen) if ordered else sorted(seen, key=repr)
    column = {value: i for i, value in enumerate(values)}
    counts = np.zeros((len(units), len(values)), dtype=float)
    for row, given in enumerate(units):
        for value in given.values():
            counts[row, column[value]] += 1
    return counts


def _alpha(counts: Any, level: str) -> Optional[float]:
    """The library's alpha of a value-counts matrix, None where it is undefined (one value only)."""
    import krippendorff
    import numpy as np

    if np.count_nonzero(counts.sum(axis=0)) < 2:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # 0/0 where the resample holds one value
        value = float(krippendorff.alpha(value_counts=counts, value_domain=list(range(counts.shape[1])),
                                         level_of_measurement=cast(Literal["ordinal", "nominal"], level)))
    return None if math.isnan(value) else value


def _interval(counts: Any, level: str, rounds: int, seed: int,
              confidence: float) -> tuple[Optional[float], Optional[float]]:
    """Percentile bootstrap over units; resamples where alpha is undefined are left out."""
    import numpy as np

    if rounds <= 0:
        return None, None
    rng = np.random.default_rng(seed)
    n = counts.shape[0]
    resampled = (_alpha(counts[rng.integers(0, n, n)], level) for _ in range(rounds))
    found = [a for a in resampled if a is not None]
    if not found:
        return None, None
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(found, [tail, 100 - tail])
    return float(low), float(high)


# -- sources ----------------------------------------------------------------------------


def replayed_dialogue(d: Dialogue) -> Optional[str]:
    """The id of the stored dialogue `d` replays (its metadata says), or None for a dialogue of its own."""
    for path in REPLAY_KEYS:
        value: Any = d.metadata
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        if isinstance(value, str) and value:
            return value
    return None


def _person(rater_id: Any) -> bool:
    return isinstance(rater_id, str) and rater_id not in POOLED_IDS


def rating_judgements(dialogues: Iterable[Dialogue]) -> dict[str, list[Judgement]]:
    """aspect -> people's aspect ratings as judgements; a reply aspect's unit is (dialogue, position)."""
    out: dict[str, list[Judgement]] = {}
    for d in dialogues:
        unit = replayed_dialogue(d) or d.dialogue_id
        rated: list[tuple[Hashable, Any]] = [(unit, r) for r in d.ratings]
        rated += [((unit, i), r) for i, u in enumerate(d.utterances) if u.role == Role.AGENT
                  for r in u.ratings]
        for where, rating in rated:
            if rating.rater_kind != UserKind.HUMAN or not _person(rating.rater_id):
                continue
            for aspect, value in rating.values.items():
                out.setdefault(aspect, []).append(Judgement(where, rating.rater_id, value))
    return out


def verdict_judgements(dialogues: Iterable[Dialogue]) -> list[Judgement]:
    """People's verdicts, each of the dialogue it judged (the one a replay shows)."""
    return [Judgement(replayed_dialogue(d) or d.dialogue_id, d.user.id, d.feedback.sentiment)
            for d in dialogues
            if d.feedback is not None and d.user.kind == UserKind.HUMAN and _person(d.user.id)]


def vote_judgements(votes: Iterable["VoteRow"]) -> list[Judgement]:
    """(dialogue A, dialogue B, voter, choice) of people's votes: a battle is its two dialogues."""
    return [Judgement((a, b), voter, choice) for a, b, voter, choice in votes if _person(voter)]


def gold_judgements(participants: Iterable[Any]) -> list[Judgement]:
    """Workers' answers to their study's gold check (`Participant.data["gold_answer"]`): one text per
    study version."""
    return [Judgement((p.study_id, p.study_version), p.pseudonym, p.data["gold_answer"])
            for p in participants if isinstance(p.data.get("gold_answer"), str)]


@dataclass(frozen=True)
class JudgementSet:
    """The judgements of one aspect (or verdicts, votes, gold answers), at their level of measurement."""

    name: str
    level: str
    judgements: tuple[Judgement, ...]
    domain: tuple[Any, ...] = ()


VoteRow = tuple[str, str, str, Any]  # (dialogue A, dialogue B, voter, choice)


def judgement_sets(dialogues: Iterable[Dialogue], form: Any = None, *,
                   votes: Iterable[VoteRow] = (), gold: Iterable[Any] = ()) -> list[JudgementSet]:
    """Each aspect of `form` (always listed) and each other rated aspect, ordinal; then verdicts, votes and
    gold answers, nominal (listed when anyone gave one)."""
    dialogues = list(dialogues)
    ratings = rating_judgements(dialogues)
    names = list(dict.fromkeys([*(form.names() if form is not None else []), *sorted(ratings)]))
    out = []
    for aspect in names:
        scale = form.get(aspect) if form is not None else None
        out.append(JudgementSet(aspect, ORDINAL, tuple(ratings.get(aspect, [])),
                                tuple(scale.scale()) if scale is not None else ()))
    for name, found in ((VERDICT, verdict_judgements(dialogues)), (VOTE, vote_judgements(votes)),
                        (GOLD, gold_judgements(gold))):
        if found:
            out.append(JudgementSet(name, NOMINAL, tuple(found)))
    return out


def agreement_of(sets: Iterable[JudgementSet], rounds: int = ROUNDS, seed: int = 0) -> list[Agreement]:
    return [krippendorff_alpha(s.judgements, s.level, name=s.name, domain=s.domain, rounds=rounds, seed=seed)
            for s in sets]


def agreement_report(dialogues: Iterable[Dialogue], form: Any = None, *,
                     votes: Iterable[VoteRow] = (), gold: Iterable[Any] = (), rounds: int = ROUNDS,
                     seed: int = 0) -> list[Agreement]:
    """`agreement_of` the `judgement_sets` of these dialogues, votes and study participants."""
    return agreement_of(judgement_sets(dialogues, form, votes=votes, gold=gold), rounds=rounds, seed=seed)


def describe(result: Agreement) -> str:
    """The alpha and its interval in one phrase, or why there is none."""
    if result.alpha is None:
        return result.note
    text = f"{result.alpha:.2f}"
    if result.low is not None and result.high is not None:
        text += f" [{result.low:.2f}, {result.high:.2f}]"
    return text
