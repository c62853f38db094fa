"""The leaderboard: one row per system from stored dialogues and votes.

Human and simulated data are never mixed in one table: `compute_leaderboard`
takes a `user_kind` filter ("human", "simulator" or None for everything) that
applies to dialogues (who played the user) and to votes (who voted).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Optional, Sequence, Union

import numpy as np
import pandas as pd

from arena.dialogue import Dialogue, UserKind, Vote
from webapp.voided import counted
from webapp.ratings import (
    Battle,
    battle_from_vote,
    bootstrap_intervals,
    bradley_terry,
    elo_ratings,
    wilson_interval,
    win_tie_loss,
)

USER_KINDS = ("human", "simulator")
SCORE_COLUMNS = {"rdl": "mean_rdl", "core.overall": "mean_core_overall"}

COLUMNS = [
    "system", "conversations", "rated", "satisfied", "satisfaction", "satisfaction_low", "satisfaction_high",
    "battles", "wins", "ties", "both_bad", "losses", "elo", "bt", "bt_low", "bt_high",
    "mean_rdl", "rdl_scored", "mean_core_overall", "core_overall_scored",
]


@dataclass(frozen=True)
class LeaderboardOptions:
    bootstrap_rounds: int = 200
    confidence: float = 0.95
    seed: int = 0
    bt_prior_games: float = 1.0


def _kind_value(kind: Union[str, UserKind]) -> str:
    return kind.value if isinstance(kind, UserKind) else str(kind)


def filter_dialogues(dialogues: Iterable[Dialogue], user_kind: Optional[str]) -> list[Dialogue]:
    return [d for d in dialogues if user_kind is None or d.user.kind.value == user_kind]


def filter_votes(votes: Iterable[Vote], user_kind: Optional[str]) -> list[Vote]:
    return [v for v in votes if user_kind is None or _kind_value(v.user_kind) == user_kind]


def _dialogue_stats(dialogues: Sequence[Dialogue]) -> dict[str, dict[str, Any]]:
    stats: dict[str, dict[str, Any]] = {}
    for d in dialogues:
        if d.num_turns == 0:  # opened but never used
            continue
        row = stats.setdefault(d.crs_id, {"conversations": 0, "rated": 0, "satisfied": 0,
                                          **{col: [] for col in SCORE_COLUMNS.values()}})
        row["conversations"] += 1
        if d.feedback is not None:
            row["rated"] += 1
            row["satisfied"] += d.feedback.sentiment == "satisfied"
        for metric, col in SCORE_COLUMNS.items():
            score = d.scores.get(metric)
            if score is not None and score.value is not None:
                row[col].append(score.value)
    return stats


def compute_leaderboard(
    dialogues: Iterable[Dialogue],
    votes: Iterable[Vote],
    *,
    user_kind: Optional[str] = None,
    systems: Iterable[str] = (),
    options: Optional[LeaderboardOptions] = None,
) -> pd.DataFrame:
    """One row per system (columns `COLUMNS`), best Bradley-Terry rating first."""
    options = options or LeaderboardOptions()
    if user_kind is not None and user_kind not in USER_KINDS:
        raise ValueError(f"user_kind must be one of {USER_KINDS} or None, got {user_kind!r}")
    dialogues, votes = counted(dialogues, votes)  # a system's failure voids its dialogue and battle
    stats = _dialogue_stats(filter_dialogues(dialogues, user_kind))
    battles: list[Battle] = [battle_from_vote(v) for v in filter_votes(votes, user_kind)]
    names = sorted(set(stats) | {n for b in battles for n in (b.a, b.b)} | set(systems))

    counts = win_tie_loss(battles)
    elo = elo_ratings(battles, systems=names)
    bt = bradley_terry(battles, systems=names, prior_games=options.bt_prior_games) if battles else {}
    intervals = (
        bootstrap_intervals(
            battles, bradley_terry, rounds=options.bootstrap_rounds, confidence=options.confidence,
            seed=options.seed, prior_games=options.bt_prior_games,
        )
        if battles
        else {}
    )
    rows = []
    for name in names:
        s = stats.get(name, {"conversations": 0, "rated": 0, "satisfied": 0, "mean_rdl": [],
                             "mean_core_overall": []})
        c = counts.get(name, {"battles": 0, "wins": 0, "ties": 0, "both_bad": 0, "losses": 0})
        wilson = wilson_interval(s["satisfied"], s["rated"], options.confidence)
        played = c["battles"] > 0
        low_high = intervals.get(name) if played else None
        rows.append({
            "system": name,
            "conversations": s["conversations"],
            "rated": s["rated"],
            "satisfied": s["satisfied"],
            "satisfaction": s["satisfied"] / s["rated"] if s["rated"] else None,
            "satisfaction_low": wilson[0] if wilson else None,
            "satisfaction_high": wilson[1] if wilson else None,
            **c,
            "elo": elo[name] if played else None,
            "bt": bt.get(name) if played else None,
            "bt_low": low_high[0] if low_high else None,
            "bt_high": low_high[1] if low_high else None,
            "mean_rdl": _mean(s["mean_rdl"]),
            "rdl_scored": len(s["mean_rdl"]),
            "mean_core_overall": _mean(s["mean_core_overall"]),
            "core_overall_scored": len(s["mean_core_overall"]),
        })
    table = pd.DataFrame(rows, columns=COLUMNS)
    if not table.empty:
        table = table.sort_values(
            ["bt", "satisfaction", "conversations", "system"],
            ascending=[False, False, False, True], na_position="last", kind="stable",
        ).reset_index(drop=True)
    return table


def _mean(values: list[float]) -> Optional[float]:
    return sum(values) / len(values) if values else None


# -- presentation ----------------------------------------------------------------


def _fmt(value: Any, spec: str) -> str:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return "–"
    return format(value, spec)


def display_table(table: pd.DataFrame) -> pd.DataFrame:
    """The leaderboard as text columns for people (intervals as "low–high")."""
    out = []
    for row in table.to_dict("records"):
        out.append({
            "System": row["system"],
            "Conversations": row["conversations"],
            "Satisfied / rated": f"{row['satisfied']} / {row['rated']}",
            "Satisfaction": _fmt(row["satisfaction"], ".0%"),
            "Satisfaction 95% CI": (
                f"{_fmt(row['satisfaction_low'], '.0%')}–{_fmt(row['satisfaction_high'], '.0%')}"
                if row["satisfaction_low"] is not None and not pd.isna(row["satisfaction_low"]) else "–"
            ),
            "Battles": row["battles"],
            "W / T / L (both bad)": f"{row['wins']} / {row['ties']} / {row['losses']} ({row['both_bad']})",
            "Elo": _fmt(row["elo"], ".0f"),
            "Bradley-Terry": _fmt(row["bt"], ".0f"),
            "BT 95% CI": (
                f"{_fmt(row['bt_low'], '.0f')}–{_fmt(row['bt_high'], '.0f')}"
                if row["bt_low"] is not None and not pd.isna(row["bt_low"]) else "–"
            ),
            "Mean RDL": _fmt(row["mean_rdl"], ".3f"),
            "Mean CoRE": _fmt(row["mean_core_overall"], ".3f"),
        })
    return pd.DataFrame(out)


def leaderboard_figure(table: pd.DataFrame, title: str = ""):
    """Bradley-Terry ratings with intervals and satisfaction rates with Wilson intervals."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10, max(2.5, 0.45 * len(table) + 1.2)))
    ax_bt, ax_sat = fig.subplots(1, 2)
    _interval_panel(ax_bt, table, "bt", "bt_low", "bt_high", "Bradley-Terry rating (95% bootstrap CI)")
    _interval_panel(ax_sat, table, "satisfaction", "satisfaction_low", "satisfaction_high",
                    "Satisfaction rate (95% Wilson CI)")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def _interval_panel(ax, table: pd.DataFrame, col: str, low: str, high: str, label: str) -> None:
    rows = table[table[col].notna()] if not table.empty else table
    ax.set_title(label, fontsize=10)
    if rows.empty:
        ax.text(0.5, 0.5, "no data yet", ha="center", va="center", transform=ax.transAxes)
        ax.set_yticks([])
        return
    rows = rows.iloc[::-1]
    y = list(range(len(rows)))
    values = rows[col].astype(float).to_numpy()
    lows = rows[low].astype(float).fillna(rows[col]).to_numpy()
    highs = rows[high].astype(float).fillna(rows[col]).to_numpy()
    # A point estimate may fall outside its own bootstrap interval (few battles, the
    # prior pulling the estimate); matplotlib refuses negative error bars, so clip.
    below = np.clip(values - lows, 0.0, None)
    above = np.clip(highs - values, 0.0, None)
    ax.errorbar(values, y, xerr=[below, above], fmt="o", capsize=3)
    ax.set_yticks(y)
    ax.set_yticklabels(rows["system"].tolist())
    ax.grid(axis="x", alpha=0.3)
