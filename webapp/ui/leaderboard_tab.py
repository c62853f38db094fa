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

from arena.visibility import visibility
from webapp.leaderboard import LeaderboardOptions, compute_leaderboard, display_table, leaderboard_figure
from webapp.services import Services
from webapp.ui import meta_view
from webapp.ui.aspect_form import form_for
from webapp.ui.render import plural

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
        self.records: dict[Optional[str], Optional[list]] = {}  # metric-vs-human correlations per filter
        self.correlations = meta_view.CorrelationMemo()

    def get(self, kind: Optional[str], fresh: bool = False) -> tuple[pd.DataFrame, Any]:
        with self._lock:  # one computation at a time; others wait and reuse it
            entry = self._entries.get(kind)
            if entry is not None and not fresh and time.monotonic() - entry[0] < self.ttl_s:
                return entry[1], entry[2]
            store = self.services.store
            all_votes = store.list_votes(user_kind=kind)
            seen = visibility(store, store.list_votes())
            # Hidden dialogues and battles still under way are left out; so are flagged votes.
            # Flagged labels (and those of flagged battles and raters) leave satisfaction (arena.visibility).
            dialogues = seen.counted_labels(seen.dialogues(store.list_dialogues(user_kind=kind)))
            votes = seen.votes(all_votes)
            table = compute_leaderboard(dialogues, votes, user_kind=kind,
                                        options=LeaderboardOptions.from_settings(self.services.settings))
            table.attrs["votes_counted"] = len(votes)
            table.attrs["votes_flagged"] = len(seen.votes(all_votes, include_flagged=True)) - len(votes)
            meta = metric_meta_table(dialogues)
            self.records[kind] = self.correlations.get(kind, dialogues, form_for(self.services))
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


def summary_text(table: pd.DataFrame) -> str:
    """Counts in words, with correct plurals ("1 battle", "2 votes")."""
    if table.empty:
        text = "_No conversations yet for this group._"
    else:
        text = (f"{plural(int(table['conversations'].sum()), 'conversation')} and "
                f"{plural(int(table['battles'].sum()) // 2, 'battle')}.")
    counted, flagged = table.attrs.get("votes_counted", 0), table.attrs.get("votes_flagged", 0)
    text += f" The ratings count {plural(counted, 'vote')}"
    if flagged:
        text += (f"; {plural(flagged, 'flagged vote')} (bursts or votes cast seconds after the start) "
                 f"{'is' if flagged == 1 else 'are'} left out.")
    else:
        text += "."
    return text


def build(services: Services, participant: Any = None) -> None:
    cache = LeaderboardCache(services)
    titles = {name: services.registry.title(name) for name in services.registry.names}

    def render(kind_value: str, fresh: bool = False) -> tuple[Any, ...]:
        kind = _kind(kind_value)
        table, meta = cache.get(kind, fresh=fresh)
        label = dict((v, k) for k, v in KIND_CHOICES)[kind_value or "human"]
        shown = not table.empty  # an empty table would show placeholder headers, an empty plot nothing
        figure = leaderboard_figure(table, title=f"Users: {label.lower()}", titles=titles) if shown else None
        meta_shown = meta is not None and not meta.empty
        records = cache.records.get(kind) or []
        return (summary_text(table), gr.Column(visible=shown), display_table(table, titles), figure,
                meta if meta_shown else pd.DataFrame(),
                gr.Accordion(visible=meta_shown), meta_view.correlation_table(records),
                meta_view.correlation_heatmap(records) if records else None, gr.Accordion(visible=bool(records)))

    with gr.Row():
        kind = gr.Radio(
            KIND_CHOICES, value="human", label="Whose dialogues and votes", elem_id="leaderboard-kind",
            scale=3,
        )
        refresh = gr.Button("Refresh", elem_id="leaderboard-refresh", scale=1)
    summary = gr.Markdown("", elem_id="leaderboard-summary")
    # On a phone the table scrolls sideways with the system's name pinned; cells never wrap, so no
    # header is squeezed into a letter-wide column.
    with gr.Column(visible=False, elem_id="leaderboard-board") as board:
        table = gr.Dataframe(interactive=False, wrap=False, pinned_columns=1, elem_id="leaderboard-table")
        plot = gr.Plot(elem_id="leaderboard-plot", show_label=False)
    with gr.Accordion("Automatic metrics against satisfaction", open=False, visible=False) as meta_box:
        meta = gr.Dataframe(interactive=False, elem_id="leaderboard-meta")
    with gr.Accordion("Automatic metrics against human ratings (dialogue level)", open=False,
                      visible=False) as corr_box:
        gr.Markdown(
            "Each automatic metric against each aspect rating (mean over raters; reply ratings averaged per "
            "dialogue) and satisfaction (1 satisfied, 0 frustrated): Spearman and Pearson over the dialogues "
            "with both values, with 95% bootstrap intervals, and Kendall's tau over the systems' means. "
            "Unscored metrics and skipped aspects leave a dialogue out of that pair only. People's and "
            "simulators' dialogues are never pooled."
        )
        corr_table = gr.Dataframe(interactive=False, wrap=True, elem_id="leaderboard-correlations")
        corr_plot = gr.Plot(elem_id="leaderboard-correlation-heatmap", show_label=False)
    gr.Markdown(EXPLANATION)

    outputs = [summary, board, table, plot, meta, meta_box, corr_table, corr_plot, corr_box]
    refresh.click(lambda k: render(k, fresh=True), [kind], outputs, api_name="leaderboard")
    kind.change(render, [kind], outputs, api_name=False)
    # Fill the tab whenever it is opened (the tab itself is the enclosing block).
    parent = gr.context.Context.block
    if isinstance(parent, gr.Tab):
        parent.select(render, [kind], outputs, api_name=False)
