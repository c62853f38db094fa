"""Leaderboard tab: satisfaction, battle results, Elo, Bradley-Terry and automatic scores per system.

People and simulators are never pooled: a filter picks whose dialogues and
votes are counted. The table and the plot come from one computation, cached
for a few seconds so that opening the page (which fills both) costs one.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Optional

import gradio as gr
import pandas as pd

from webapp.leaderboard import compute_leaderboard, display_table, leaderboard_figure
from webapp.services import Services

log = logging.getLogger(__name__)

KIND_CHOICES = [("People", "human"), ("Simulators", "simulator"), ("Everyone", "all")]
CACHE_SECONDS = 5.0
EXPLANATION = (
    "**Satisfaction**: share of rated conversations that ended *satisfied*, with a 95% Wilson interval. "
    "**W / T / L**: battle wins, ties and losses (both-bad votes in brackets, counted as ties in ratings). "
    "**Elo**: start 1000, K = 16, in the order votes were cast. **Bradley-Terry**: order-free rating on "
    "the same scale, with a 95% bootstrap interval. **Mean RDL** and **Mean CoRE** (overall) average the "
    "automatic scores of the dialogues scored so far."
)


def _kind(value: Optional[str]) -> Optional[str]:
    return None if value in (None, "", "all") else value


class LeaderboardCache:
    def __init__(self, services: Services, ttl_s: float = CACHE_SECONDS):
        self.services = services
        self.ttl_s = ttl_s
        self._lock = threading.Lock()
        self._entries: dict[Optional[str], tuple[float, pd.DataFrame, Any]] = {}

    def get(self, kind: Optional[str], fresh: bool = False) -> tuple[pd.DataFrame, Any]:
        with self._lock:  # one computation at a time; others wait and reuse it
            entry = self._entries.get(kind)
            if entry is not None and not fresh and time.monotonic() - entry[0] < self.ttl_s:
                return entry[1], entry[2]
            dialogues = self.services.store.list_dialogues(user_kind=kind)
            votes = self.services.store.list_votes(user_kind=kind)
            table = compute_leaderboard(dialogues, votes, user_kind=kind)
            meta = metric_meta_table(dialogues)
            self._entries[kind] = (time.monotonic(), table, meta)
            return table, meta


def metric_meta_table(dialogues: list) -> Optional[pd.DataFrame]:
    """Per system: satisfaction and each metric's mean, plus each metric's Kendall tau against satisfaction.

    None when the evaluators are not installed or there is nothing to show.
    """
    try:
        from evaluators.meta import meta_table, ranking_correlations
    except ImportError:
        return None
    try:
        rows = meta_table(dialogues)
        taus = ranking_correlations(rows)
    except Exception:  # the leaderboard must render even if the analysis cannot
        log.exception("metric meta table failed")
        return None
    if not rows or not taus:
        return None

    def fmt(value: Any) -> str:
        return "–" if value is None else f"{value:.3f}"

    table = [
        {"System": r["crs_id"], "Rated": r["rated"], "Satisfaction": fmt(r["satisfaction"]),
         **{name: fmt(r.get(name)) for name in taus}}
        for r in rows
    ]
    table.append({"System": "Kendall tau vs satisfaction", "Rated": "", "Satisfaction": "",
                  **{name: fmt(tau) for name, tau in taus.items()}})
    return pd.DataFrame(table)


def build(services: Services) -> None:
    cache = LeaderboardCache(services)

    def render(kind_value: str, fresh: bool = False) -> tuple[Any, ...]:
        kind = _kind(kind_value)
        table, meta = cache.get(kind, fresh=fresh)
        label = dict((v, k) for k, v in KIND_CHOICES)[kind_value or "human"]
        figure = leaderboard_figure(table, title=f"Users: {label.lower()}")
        if table.empty:
            summary = "_No conversations yet for this group._"
        else:
            summary = (f"{int(table['conversations'].sum())} conversations and "
                       f"{int(table['battles'].sum()) // 2} battles.")
        meta_view = meta if meta is not None and not meta.empty else pd.DataFrame()
        return summary, display_table(table), figure, meta_view, gr.Accordion(visible=meta is not None)

    with gr.Row():
        kind = gr.Radio(
            KIND_CHOICES, value="human", label="Whose dialogues and votes", elem_id="leaderboard-kind",
            scale=3,
        )
        refresh = gr.Button("Refresh", elem_id="leaderboard-refresh", scale=1)
    summary = gr.Markdown("", elem_id="leaderboard-summary")
    table = gr.Dataframe(interactive=False, wrap=True, elem_id="leaderboard-table")
    plot = gr.Plot(elem_id="leaderboard-plot", show_label=False)
    with gr.Accordion("Automatic metrics against satisfaction", open=False, visible=False) as meta_box:
        meta = gr.Dataframe(interactive=False, elem_id="leaderboard-meta")
    gr.Markdown(EXPLANATION)

    outputs = [summary, table, plot, meta, meta_box]
    refresh.click(lambda k: render(k, fresh=True), [kind], outputs, api_name="leaderboard")
    kind.change(render, [kind], outputs, api_name=False)
    # Fill the tab whenever it is opened (the tab itself is the enclosing block).
    parent = gr.context.Context.block
    if isinstance(parent, gr.Tab):
        parent.select(render, [kind], outputs, api_name=False)
