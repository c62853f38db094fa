"""The leaderboard: one row per system from stored dialogues and votes.

Human and simulated data are never mixed in one table: `compute_leaderboard`
takes a `user_kind` filter ("human", "simulator" or None for everything) that
applies to dialogues (who played the user) and to votes (who voted), and a crowd;
the selection is `arena.crowd.counting.Participants`, the same the exports use.
`rank_systems` ranks dialogues and votes already selected (the public boards
select once per read, `webapp.leaderboard.snapshot`).

As LMArena does, a system's rating shows only once it has `min_votes` battles,
and its rank is a range read from the bootstrap intervals: the best rank is 1 +
the systems whose interval lies wholly above its own, the worst is the number
of systems whose interval does not lie wholly below its own.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Optional

import numpy as np
import pandas as pd

from arena.crowd.counting import Participants
from arena.dialogue import Dialogue, Vote
from arena.crowd.study import OPEN_CROWD
from webapp.leaderboard.board_data import BoardData
# The board's columns, options and rank ranges live with the ranking; imported here, where callers look.
from webapp.leaderboard.ranking import COLUMNS, SCORE_COLUMNS, LeaderboardOptions, rank_board, rank_ranges  # noqa: F401

def compute_leaderboard(
    dialogues: Iterable[Dialogue],
    votes: Iterable[Vote],
    *,
    user_kind: Optional[str] = None,
    systems: Iterable[str] = (),
    options: Optional[LeaderboardOptions] = None,
    crowd: Optional[str] = OPEN_CROWD,
    left_out_users: Iterable[str] = (),
) -> pd.DataFrame:
    """One row per system (columns `COLUMNS`), best Bradley-Terry rating first.

    `crowd`: the open arena (default), a study's id, or None for every crowd; `left_out_users` (stored
    user ids, a study's flagged workers) count nowhere."""
    whose = Participants(crowd=crowd, user_kind=user_kind, left_out_users=frozenset(left_out_users))
    dialogues, votes = whose.select(dialogues, votes)
    return rank_systems(dialogues, votes, systems=systems, options=options)


def rank_systems(
    dialogues: Iterable[Dialogue],
    votes: Iterable[Vote],
    *,
    systems: Iterable[str] = (),
    options: Optional[LeaderboardOptions] = None,
) -> pd.DataFrame:
    """`compute_leaderboard` of dialogues and votes already selected (one crowd and audience): their compact
    rows (`webapp.leaderboard.board_data`) ranked by `webapp.leaderboard.ranking.rank_board`, the same code
    the background boards run."""
    return rank_board(BoardData.from_objects(dialogues, votes), systems=systems, options=options)


# -- presentation ----------------------------------------------------------------


def _fmt(value: Any, spec: str) -> str:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return "–"
    return format(value, spec)


def display_table(table: pd.DataFrame, titles: Optional[Mapping[str, str]] = None) -> pd.DataFrame:
    """The leaderboard as text columns for people (intervals as "low–high"; systems by `titles`, if given)."""
    titles = titles or {}
    out = []
    for row in table.to_dict("records"):
        out.append({
            "Rank": _rank_text(row),
            "System": titles.get(row["system"], row["system"]),
            "Tier": _fmt(row.get("tier"), ".0f"),
            "Conversations": row["conversations"],
            "Satisfied / rated": f"{row['satisfied']} / {row['rated']}",
            "Satisfaction": _fmt(row["satisfaction"], ".0%"),
            "95% CI": (
                f"{_fmt(row['satisfaction_low'], '.0%')}–{_fmt(row['satisfaction_high'], '.0%')}"
                if row["satisfaction_low"] is not None and not pd.isna(row["satisfaction_low"]) else "–"
            ),
            "Battles": row["battles"],
            "W / T / L (both bad)": f"{row['wins']} / {row['ties']} / {row['losses']} ({row['both_bad']})",
            "Elo": _fmt(row["elo"], ".0f"),
            "Bradley-Terry": _fmt(row["bt"], ".0f"),
            "BT 95% CI": (
                f"{_fmt(row['bt_low'], '.0f')}–{_fmt(row['bt_high'], '.0f')}"
                if row["bt_low"] is not None and not pd.isna(row["bt_low"])
                else _no_rating_note(row, table.attrs.get("min_votes", 0))
            ),
            "BT, style controlled": _fmt(row.get("bt_style"), ".0f"),
            "Style-controlled 95% CI": _interval_text(row.get("bt_style_low"), row.get("bt_style_high")),
            "Rank change, style controlled": _signed(row.get("rank_change_style")),
            "Mean RDL": _fmt(row["mean_rdl"], ".3f"),
            "Mean CoRE": _fmt(row["mean_core_overall"], ".3f"),
        })
    return pd.DataFrame(out)


def _interval_text(low: Any, high: Any) -> str:
    if low is None or pd.isna(low):
        return "–"
    return f"{_fmt(low, '.0f')}–{_fmt(high, '.0f')}"


def _signed(value: Any) -> str:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return "–"
    return f"{int(value):+d}" if value else "0"


def _rank_text(row: dict[str, Any]) -> str:
    best, worst = row.get("rank_best"), row.get("rank_worst")
    if best is None or pd.isna(best):
        return "–"
    best, worst = int(best), int(worst)
    return str(best) if best == worst else f"{best}–{worst}"


def _no_rating_note(row: dict[str, Any], min_votes: int) -> str:
    if row["battles"] and row["battles"] < min_votes:
        return f"needs {min_votes} votes"
    if row["bt"] is not None and not pd.isna(row["bt"]):
        return "too few distinct outcomes"
    return "–"


def leaderboard_figure(table: pd.DataFrame, title: str = "", titles: Optional[Mapping[str, str]] = None):
    """Bradley-Terry ratings with intervals and satisfaction rates with Wilson intervals.

    The two panels are stacked and the figure is narrow, so that on a phone (where the page
    scales it down to the screen's width) its labels stay legible.
    """
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure
    from matplotlib.ticker import PercentFormatter

    # 4.2 in at 100 dpi: a 420 px image, its 10 pt labels about 12 px tall on a 400 px phone.
    rows = max(1, len(table))
    fig = Figure(figsize=(4.2, 2 * max(1.5, 0.36 * rows + 0.9) + (0.35 if title else 0)), dpi=100)
    ax_bt, ax_sat = fig.subplots(2, 1)
    _interval_panel(ax_bt, table, "bt", "bt_low", "bt_high", "Bradley-Terry rating (95% bootstrap CI)", titles)
    _interval_panel(ax_sat, table, "satisfaction", "satisfaction_low", "satisfaction_high",
                    "Satisfaction rate (95% Wilson CI)", titles)
    ax_sat.xaxis.set_major_formatter(PercentFormatter(1.0))
    if title:
        fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return fig


def _interval_panel(ax, table: pd.DataFrame, col: str, low: str, high: str, label: str,
                    titles: Optional[Mapping[str, str]] = None) -> None:
    from matplotlib.transforms import blended_transform_factory

    rows = table[table[col].notna()] if not table.empty else table
    # Centred on the figure, not on the axes: long system names push the axes right, and a title centred
    # over them ran off the image's edge ("95% bootstrap C").
    ax.set_title(label, fontsize=10, x=0.5, transform=blended_transform_factory(ax.figure.transFigure, ax.transAxes))
    ax.tick_params(labelsize=10)
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
    ax.set_yticklabels([(titles or {}).get(name, name) for name in rows["system"].tolist()])
    ax.grid(axis="x", alpha=0.3)
