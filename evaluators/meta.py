"""Meta-evaluation: how well does each metric rank systems the way users do?

`meta_table(dialogues)` gives one row per system: how many dialogues, the
satisfaction rate (share of rated dialogues marked "satisfied") and the mean
of every metric. `ranking_correlations(rows)` gives, per metric, Kendall's
tau-b between the systems' order by that metric and by satisfaction — the
RDL paper's Table 2 reports 0.78 for RDL on the CRS Arena dialogues.
"""

from __future__ import annotations

import math
import warnings
from collections import defaultdict
from typing import Any, Iterable, Optional, Sequence

from scipy.stats import kendalltau

from arena.dialogue import Dialogue
from arena.crowd.counting import Participants
from arena.crowd.study import OPEN_CROWD

SATISFACTION = "satisfaction"
NOT_METRICS = {"acts"}


def kendall_tau(x: Sequence[float], y: Sequence[float]) -> Optional[float]:
    """Kendall's tau-b (ties in either ranking handled; scipy's default variant); None if undefined
    (fewer than two pairs, or one ranking all ties)."""
    if len(x) != len(y):
        raise ValueError("x and y must have the same length")
    if len(x) < 2:
        return None
    with warnings.catch_warnings():  # a constant ranking is "undefined" here, not a warning
        warnings.simplefilter("ignore")
        tau = kendalltau(x, y, variant="b").statistic
    return None if math.isnan(tau) else float(tau)


def meta_table(dialogues: Iterable[Dialogue], metrics: Optional[Sequence[str]] = None, *,
               crowd: Optional[str] = OPEN_CROWD, left_out_users: Iterable[str] = ()) -> list[dict[str, Any]]:
    """One row per system (sorted by satisfaction, best first), over the dialogues of one crowd: the open
    arena (default), a study's id (`arena.crowd.study`), None for every crowd; `left_out_users` (stored user
    ids, a study's flagged workers) are left out.

    Row keys: "crs_id", "dialogues", "rated", "satisfaction" (None when no
    dialogue was rated), and for each metric its mean over the dialogues where
    it was scored (None if none) plus "<metric>.n", the number of those.
    """
    # The one counting rule (arena.crowd.counting): it also leaves out known-answer tasks, for every crowd.
    kept = Participants(crowd=crowd, left_out_users=frozenset(left_out_users))
    return meta_rows(((d.crs_id, d.feedback.sentiment if d.feedback is not None else None,
                       {name: s.value for name, s in d.scores.items()})
                      for d in dialogues if kept.keeps_dialogue(d)), metrics)


def meta_rows(dialogues: Iterable[tuple[str, Optional[str], dict[str, Optional[float]]]],
              metrics: Optional[Sequence[str]] = None) -> list[dict[str, Any]]:
    """`meta_table`'s rows from (system, satisfaction label or None, metric -> value, None when unscored) per
    dialogue, as the leaderboard reads them from the store's compact rows."""
    by_system: dict[str, list[tuple[Optional[str], dict[str, Optional[float]]]]] = defaultdict(list)
    names_found: set[str] = set()
    for crs_id, sentiment, scores in dialogues:
        by_system[crs_id].append((sentiment, scores))
        names_found.update(scores)
    names = list(metrics) if metrics is not None else sorted(names_found - NOT_METRICS)
    rows = []
    for crs_id, ds in by_system.items():
        rated = [sentiment for sentiment, _ in ds if sentiment is not None]
        row: dict[str, Any] = {
            "crs_id": crs_id,
            "dialogues": len(ds),
            "rated": len(rated),
            SATISFACTION: (sum(s == "satisfied" for s in rated) / len(rated)) if rated else None,
        }
        for name in names:
            values = [v for _, scores in ds if (v := scores.get(name)) is not None]
            row[name] = sum(values) / len(values) if values else None
            row[f"{name}.n"] = len(values)
        rows.append(row)
    rows.sort(key=lambda r: (r[SATISFACTION] is None, -(r[SATISFACTION] or 0.0), r["crs_id"]))
    return rows


def ranking_correlations(rows: Sequence[dict[str, Any]], metrics: Optional[Sequence[str]] = None
                         ) -> dict[str, Optional[float]]:
    """Kendall's tau between each metric's system order and the satisfaction order.

    Only systems with both a satisfaction rate and a metric mean take part;
    fewer than two such systems gives None.
    """
    if metrics is None:
        metrics = [
            k
            for k in (rows[0] if rows else {})
            if k not in ("crs_id", "dialogues", "rated", SATISFACTION) and not k.endswith(".n")
        ]
    out: dict[str, Optional[float]] = {}
    for name in metrics:
        pairs = [(satisfaction, value) for r in rows
                 if (satisfaction := r[SATISFACTION]) is not None and (value := r.get(name)) is not None]
        out[name] = kendall_tau([p[0] for p in pairs], [p[1] for p in pairs]) if len(pairs) >= 2 else None
    return out


def format_table(rows: Sequence[dict[str, Any]], taus: dict[str, Optional[float]]) -> str:
    """A plain-text table: systems by satisfaction, metric means, and a tau line."""
    metrics = list(taus)
    header = ["system", "dialogues", "rated", SATISFACTION, *metrics]
    lines = [header]

    def fmt(v: Any) -> str:
        return "-" if v is None else (f"{v:.3f}" if isinstance(v, float) else str(v))

    for r in rows:
        lines.append([r["crs_id"], str(r["dialogues"]), str(r["rated"]), fmt(r[SATISFACTION]),
                      *[fmt(r.get(m)) for m in metrics]])
    lines.append(["Kendall tau vs satisfaction", "", "", "", *[fmt(taus[m]) for m in metrics]])
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip() for line in lines)
