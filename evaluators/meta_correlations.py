"""Meta-evaluation against human aspect ratings: does a metric agree with people, dialogue by dialogue?

For every automatic metric (RDL, SRRR, SR, Recall@k, each CoRE factor and the
overall) and every human judgement (each aspect of the rating form, the
per-reply aspects averaged over a dialogue's rated replies, and satisfaction
as 1 = satisfied / 0 = frustrated), `correlation_records` gives

* at dialogue level: Spearman's rho and Pearson's r (scipy.stats) over the
  dialogues that have both values, with percentile bootstrap intervals
  (dialogues resampled with replacement, seeded) for both, and n;
* at system level: Kendall's tau-b between the systems' mean metric and mean
  judgement (as `evaluators.meta.ranking_correlations` does for satisfaction);
* at turn level, where a metric has a per-reply term (SRRR: whether the round a
  Recommend reply opened was accepted; Recall@k, PC, PCIR: their per-turn
  values): Spearman and Pearson over the rated replies, pooled over dialogues
  (the bootstrap resamples replies, so its interval ignores that replies of one
  dialogue are alike).

Aspects the form does not ask (extra aspects of an import, such as
CRSArena-Eval's preference_elicitation) are correlated like the form's own.

A metric or aspect a dialogue lacks (unscored, skipped) drops that dialogue
from that pair only; it is never read as 0. Dialogues with people and with
simulators are never pooled: every record names its `users`, and groups
(`group_by="dataset"` or `"crs"`) split within them.
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Callable, Iterable, Optional, Sequence

import numpy as np
from scipy import stats

from arena.crowd.aspects import AspectForm, load_form, mean_values
from arena.dialogue import Dialogue, Role
from evaluators.bootstrap import percentile_interval, resample_indices
from evaluators.meta import NOT_METRICS, SATISFACTION, kendall_tau
from evaluators.metrics import MissingActs, recommendation_rounds

PER_TURN_METRICS = ("recall", "pc", "pcir")  # scores whose details hold one value per system reply
GROUPINGS = ("dataset", "crs")
RATERS = ("own", "human", "simulator")  # own: people's ratings for human dialogues, a simulator's for its own
MIN_PAIRS = 3
DEFAULT_ROUNDS = 1000
KNOWN_DATASETS = ("redial", "opendialkg")


def dataset_of(d: Dialogue) -> str:
    """The dataset a dialogue's system was trained on: metadata, else the crs id's suffix."""
    if d.metadata.get("dataset"):
        return str(d.metadata["dataset"])
    suffix = d.crs_id.rsplit("_", 1)[-1].lower()
    return suffix if suffix in KNOWN_DATASETS else "unknown"


GROUP_KEYS: dict[str, Callable[[Dialogue], str]] = {"dataset": dataset_of, "crs": lambda d: d.crs_id}


def _rater_kind(d: Dialogue, raters: str) -> str:
    return d.user.kind.value if raters == "own" else raters


def judgements(d: Dialogue, form: AspectForm, raters: str = "own") -> dict[str, float]:
    """A dialogue's human-side values: aspect means over its raters, reply aspects averaged, satisfaction.

    Aspects the form does not ask (extra aspects of an import) count too, at
    the level they were rated; a name rated at both levels keeps its
    dialogue-level value.
    """
    kind = _rater_kind(d, raters)
    out = {k: v for k, v in mean_values(d.ratings, kind).items() if k not in form.names("utterance")}
    per_reply: dict[str, list[float]] = defaultdict(list)
    for u in d.utterances:
        for name, value in mean_values(u.ratings, kind).items():
            if name not in form.names("dialogue"):
                per_reply[name].append(value)
    for name, vs in per_reply.items():
        out.setdefault(name, sum(vs) / len(vs))
    out.pop(SATISFACTION, None)  # only the users' own feedback is satisfaction
    if d.feedback is not None:
        out[SATISFACTION] = 1.0 if d.feedback.sentiment == "satisfied" else 0.0
    return out


def reply_judgements(d: Dialogue, form: AspectForm, raters: str = "own") -> dict[int, dict[str, float]]:
    """Per rated system reply (by utterance index): its reply-level aspects, averaged over its raters."""
    kind = _rater_kind(d, raters)
    out = {}
    for i, u in enumerate(d.utterances):
        values = {k: v for k, v in mean_values(u.ratings, kind).items() if k not in form.names("dialogue")}
        if values:
            out[i] = values
    return out


def reply_metric_values(d: Dialogue, metrics: Sequence[str]) -> dict[int, dict[str, float]]:
    """Per system reply (by utterance index), the metrics that have a per-reply term.

    SRRR: its round's outcome, 1 when the reply is a Recommend whose round was
    accepted, else 0 (SRRR is the mean of these over the Recommend replies;
    other replies have none). Recall@k, PC and PCIR: the per-turn values in
    their score details, one per system reply in order.
    """
    out: dict[int, dict[str, float]] = defaultdict(dict)
    if "srrr" in metrics and d.scores.get("srrr") is not None and d.scores["srrr"].scored:
        try:
            rounds = (
                recommendation_rounds(d) if all(u.dialogue_acts is not None for u in d.utterances) else []
            )
        except MissingActs:
            rounds = []
        for r in rounds:
            out[r.start]["srrr"] = 1.0 if r.successful else 0.0
    replies = [i for i, u in enumerate(d.utterances) if u.role == Role.AGENT]
    for name in PER_TURN_METRICS:
        score = d.scores.get(name)
        per_turn = score.details.get("per_turn") if score is not None and score.scored else None
        if name in metrics and isinstance(per_turn, list) and len(per_turn) == len(replies):
            for i, value in zip(replies, per_turn):
                if isinstance(value, (int, float)):
                    out[i][name] = float(value)
    return out


def metric_values(d: Dialogue) -> dict[str, float]:
    return {name: s.value for name, s in d.scores.items() if name not in NOT_METRICS and s.value is not None}


@dataclass(frozen=True)
class JudgedDialogue:
    """What the correlations read of one dialogue: its system, whose it is (`users`), its metric values, its
    human-side judgements (`judgements`) and its rated replies, each as (the reply's per-reply metric terms,
    its aspects). Made from a whole dialogue by `judged`, or from the store's compact rows by the
    leaderboard."""

    crs_id: str
    users: str
    metrics: dict[str, float]
    judgements: dict[str, float]
    replies: tuple[tuple[dict[str, float], dict[str, float]], ...] = ()
    group: Optional[str] = None

    @cached_property
    def key(self) -> tuple:
        """Everything it holds, as one hashable value (made once: a board's tables compare it per run)."""
        return (self.crs_id, self.users, self.group, tuple(sorted(self.metrics.items())),
                tuple(sorted(self.judgements.items())),
                tuple((tuple(sorted(m.items())), tuple(sorted(h.items()))) for m, h in self.replies))


def judged(
    d: Dialogue, form: AspectForm, raters: str = "own", group_by: Optional[str] = None
) -> JudgedDialogue:
    """`d` as the correlations read it."""
    metrics = metric_values(d)
    rated = reply_judgements(d, form, raters)
    terms = reply_metric_values(d, list(metrics)) if rated else {}
    return JudgedDialogue(d.crs_id, d.user.kind.value, metrics, judgements(d, form, raters),
                          tuple((terms.get(i, {}), values) for i, values in rated.items()),
                          GROUP_KEYS[group_by](d) if group_by else None)


# -- correlations --------------------------------------------------------------------------


def _finite(value: float) -> Optional[float]:
    return float(value) if value is not None and np.isfinite(value) else None


def point_correlations(x: Sequence[float], y: Sequence[float]) -> tuple[Optional[float], Optional[float]]:
    """Spearman's rho and Pearson's r; None where undefined (fewer than 3 pairs, a constant side)."""
    if len(x) < MIN_PAIRS or len(set(x)) < 2 or len(set(y)) < 2:
        return None, None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _finite(stats.spearmanr(x, y).statistic), _finite(stats.pearsonr(x, y).statistic)


def _rowwise_pearson(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a = a - a.mean(axis=1, keepdims=True)
    b = b - b.mean(axis=1, keepdims=True)
    denom = np.sqrt((a * a).sum(axis=1) * (b * b).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denom > 0, (a * b).sum(axis=1) / denom, np.nan)


def resample_ranks(values: Sequence[float], idx: np.ndarray) -> np.ndarray:
    """Tie-averaged ranks within each resample (row of `idx`), equal to `stats.rankdata(.., axis=1)`.

    A resample only repeats values of the original sample, so each row's ranks
    follow from how often each distinct value was drawn: no per-row sort,
    which makes the bootstrap several times faster than ranking every row.
    """
    _, dense = np.unique(np.asarray(values, float), return_inverse=True)
    k = int(dense.max()) + 1
    rows = idx.shape[0]
    drawn = dense[idx]
    counts = np.bincount((drawn + k * np.arange(rows)[:, None]).ravel(), minlength=rows * k).reshape(rows, k)
    below = np.cumsum(counts, axis=1) - counts
    return np.take_along_axis(below + (counts + 1) / 2, drawn, axis=1)


def bootstrap_intervals(x: Sequence[float], y: Sequence[float], *, rounds: int = DEFAULT_ROUNDS,
                        confidence: float = 0.95, seed: int = 0) -> dict[str, Optional[tuple[float, float]]]:
    """Percentile intervals of Spearman and Pearson over `rounds` resamples of the pairs.

    Resamples where a side is constant (the coefficient is undefined) are left
    out; None when no resample is usable.
    """
    n = len(x)
    if n < MIN_PAIRS:
        return {"spearman": None, "pearson": None}
    idx = resample_indices(n, rounds, seed)
    found = {
        "pearson": _rowwise_pearson(np.asarray(x, float)[idx], np.asarray(y, float)[idx]),
        "spearman": _rowwise_pearson(resample_ranks(x, idx), resample_ranks(y, idx)),
    }
    return {name: percentile_interval(values, confidence) for name, values in found.items()}


def _pairs(rows: list[tuple[dict[str, float], dict[str, float]]], metric: str, aspect: str
           ) -> tuple[list[float], list[float]]:
    kept = [(m[metric], h[aspect]) for m, h in rows if metric in m and aspect in h]
    return [p[0] for p in kept], [p[1] for p in kept]


def _record(metric: str, aspect: str, level: str, users: str, group: Optional[str], n: int, **values: Any
            ) -> dict[str, Any]:
    rec = {"metric": metric, "aspect": aspect, "level": level, "users": users, "group": group,
           "spearman": None, "pearson": None, "ci_low": None, "ci_high": None, "ci_for": "spearman",
           "spearman_ci_low": None, "spearman_ci_high": None, "pearson_ci_low": None, "pearson_ci_high": None,
           "kendall_tau": None, "n": n}
    rec.update(values)
    return rec


def _dialogue_level(rows, metrics, aspects, users, group, rounds, confidence, seed, level="dialogue"
                    ) -> list[dict[str, Any]]:
    out = []
    for metric in metrics:
        for aspect in aspects:
            x, y = _pairs(rows, metric, aspect)
            rho, r = point_correlations(x, y)
            ci = bootstrap_intervals(x, y, rounds=rounds, confidence=confidence, seed=seed) \
                if rho is not None else {"spearman": None, "pearson": None}
            s_ci, p_ci = ci["spearman"] or (None, None), ci["pearson"] or (None, None)
            out.append(_record(metric, aspect, level, users, group, len(x), spearman=rho, pearson=r,
                               ci_low=s_ci[0], ci_high=s_ci[1], spearman_ci_low=s_ci[0],
                               spearman_ci_high=s_ci[1], pearson_ci_low=p_ci[0], pearson_ci_high=p_ci[1]))
    return out


def _system_level(systems, rows, metrics, aspects, users, group) -> list[dict[str, Any]]:
    by_system: dict[str, list[int]] = defaultdict(list)
    for i, crs_id in enumerate(systems):
        by_system[crs_id].append(i)

    def mean(indices: list[int], side: int, key: str) -> Optional[float]:
        vals = [rows[i][side][key] for i in indices if key in rows[i][side]]
        return sum(vals) / len(vals) if vals else None

    out = []
    for metric in metrics:
        for aspect in aspects:
            pairs = [(m, a) for ix in by_system.values()
                     if (m := mean(ix, 0, metric)) is not None and (a := mean(ix, 1, aspect)) is not None]
            tau = kendall_tau([p[0] for p in pairs], [p[1] for p in pairs]) if len(pairs) >= 2 else None
            out.append(_record(metric, aspect, "system", users, group, len(pairs), kendall_tau=tau))
    return out


def correlation_records(
    dialogues: Iterable[Dialogue],
    *,
    form: Optional[AspectForm] = None,
    metrics: Optional[Sequence[str]] = None,
    group_by: Optional[str] = None,
    raters: str = "own",
    rounds: int = DEFAULT_ROUNDS,
    confidence: float = 0.95,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Dialogue-level and system-level records for every metric x judgement, per users (and group)."""
    if group_by is not None and group_by not in GROUPINGS:
        raise ValueError(f"group_by must be one of {', '.join(GROUPINGS)}, got {group_by!r}")
    if raters not in RATERS:
        raise ValueError(f"raters must be one of {', '.join(RATERS)}, got {raters!r}")
    form = form or load_form()
    return judged_records([judged(d, form, raters, group_by) for d in dialogues], form=form, metrics=metrics,
                          by_system=group_by != "crs", rounds=rounds, confidence=confidence, seed=seed)


def judged_records(
    dialogues: Iterable[JudgedDialogue],
    *,
    form: AspectForm,
    metrics: Optional[Sequence[str]] = None,
    by_system: bool = True,
    rounds: int = DEFAULT_ROUNDS,
    confidence: float = 0.95,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """`correlation_records` of dialogues already read (`JudgedDialogue`); `by_system`: the system-level
    records too (not when each group is one system)."""
    groups: dict[tuple[str, Optional[str]], list[JudgedDialogue]] = defaultdict(list)
    for d in dialogues:
        groups[(d.users, d.group)].append(d)
    records = []
    for (users, group), ds in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1] or "")):
        rows = [(d.metrics, d.judgements) for d in ds]
        names = sorted(metrics) if metrics is not None else sorted({k for m, _ in rows for k in m})
        present = {k for _, h in rows for k in h}
        aspects = _ordered(form, present)
        records += _dialogue_level(rows, names, aspects, users, group, rounds, confidence, seed)
        if by_system:
            records += _system_level([d.crs_id for d in ds], rows, names, aspects, users, group)
        records += _turn_level(ds, form, names, users, group, rounds, confidence, seed)
    return records


def _ordered(form: AspectForm, present: set[str]) -> list[str]:
    """The form's aspects in its order, then extra aspects by name, then satisfaction."""
    extras = sorted(present - set(form.names()) - {SATISFACTION})
    return [a for a in [*form.names(), *extras, SATISFACTION] if a in present]


def _turn_level(ds, form, names, users, group, rounds, confidence, seed) -> list[dict[str, Any]]:
    """Rated replies paired with the per-reply terms of the metrics (`reply_metric_values`), pooled over the
    group's dialogues; the bootstrap resamples replies. Only pairs that occur make records."""
    wanted = set(names)
    rows = [
        ({k: v for k, v in terms.items() if k in wanted}, values) for d in ds for terms, values in d.replies
    ]
    found_metrics = sorted({k for m, _ in rows for k in m})
    aspects = _ordered(form, {k for m, h in rows if m for k in h})
    records = _dialogue_level(
        rows, found_metrics, aspects, users, group, rounds, confidence, seed, level="turn"
    )
    return [r for r in records if r["n"]]


def format_records(records: Sequence[dict[str, Any]]) -> str:
    """Plain text: one line per metric and judgement, dialogue level then system level."""
    def fmt(v: Optional[float]) -> str:
        return "-" if v is None else f"{v:+.3f}"

    lines = []
    for rec in records:
        where = rec["users"] + (f" / {rec['group']}" if rec["group"] else "")
        if rec["level"] in ("dialogue", "turn"):
            ci_s = f"[{fmt(rec['spearman_ci_low'])}, {fmt(rec['spearman_ci_high'])}]"
            ci_p = f"[{fmt(rec['pearson_ci_low'])}, {fmt(rec['pearson_ci_high'])}]"
            stat = f"spearman {fmt(rec['spearman'])} {ci_s}  pearson {fmt(rec['pearson'])} {ci_p}"
        else:
            stat = f"kendall tau {fmt(rec['kendall_tau'])}"
        lines.append([where, rec["level"], rec["metric"], rec["aspect"], f"n={rec['n']}", stat])
    if not lines:
        return "no human ratings or satisfaction to correlate with"
    header = ["users", "level", "metric", "judgement", "n", "correlation (95% bootstrap CI)"]
    widths = [max(len(row[i]) for row in [header, *lines]) for i in range(len(header))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in [header, *lines])
