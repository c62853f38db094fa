"""Leaderboard tab: satisfaction, battle results, Elo, Bradley-Terry and automatic scores per system.

People and simulators are never pooled: a filter picks whose dialogues and
votes are counted, and a category picker the slice (dataset, dialogue length,
...; `webapp.leaderboard.categories`). The table and the plot come from one
computation per board, made by a background job from the store's compact
rows (`webapp.leaderboard.snapshot`, live or every ARENA_LEADERBOARD_SNAPSHOT_EVERY
seconds); the page says which and when, and a request never computes.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional

import gradio as gr
import pandas as pd

from arena.runtime.imports import heavy_imports
from webapp.leaderboard import categories as leaderboard_categories
from webapp.leaderboard.table import LeaderboardOptions, display_table, leaderboard_figure
from webapp.leaderboard.board_extras import BoardDialogues
from webapp.leaderboard.categories import ALL
from webapp.leaderboard.snapshot import LeaderboardSnapshots, Published
from webapp.leaderboard.vote_counting import DEFAULT_COUNTING
from webapp.services import Services
from webapp.ui.parts import meta_view
from webapp.sessions.aspect_ratings import form_for
from webapp.sessions.refusal import refuse
from webapp.ui.parts.render import plural

log = logging.getLogger(__name__)

KIND_CHOICES = [("People", "human"), ("Simulators", "simulator"), ("Everyone", "all")]
COUNTING_CHOICES = [("First vote of each session only", "first"),
                    ("Ties left out of the ratings", "drop_ties")]
EXPLANATION = (
    "**Satisfaction**: share of rated conversations that ended *satisfied*, with a 95% Wilson interval. "
    "**W / T / L**: battle wins, ties and losses (both-bad votes in brackets, counted as ties in ratings). "
    "**Elo**: start 1000, K = 16, in the order votes were cast. **Bradley-Terry**: order-free rating on "
    "the same scale, with a 95% bootstrap interval; **Rank** is the range of places its interval allows "
    "(no rating shows before a system has enough battles in the category). **Style controlled**: the "
    "rating at equal reply length and items shown (both as covariates), its bootstrap interval and the "
    "places it gains or loses against the plain rank. **Category**: only conversations of that slice, "
    "and battles whose two conversations both are. **Mean RDL** and **Mean CoRE** (overall) average the "
    "automatic scores of the dialogues scored so far. **Tier**: systems whose rating intervals overlap, "
    "directly or through a chain of overlapping intervals, share a tier. **Counting**: *first vote of each "
    "session only* rates each participant's first vote alone (a reviewer's check that later, practised or "
    "tired votes do not decide the order); *ties left out* fits the ratings from decisive votes only "
    "(by default a tie or both-bad vote is half a win for each side). These options apply to every "
    "category; their boards are computed without style control, those of a category other than All the "
    "first time someone asks for them after each refresh (a few seconds). **Position bias**: how "
    "often the left (A) and the right (B) system won over the board's battles, with 95% Wilson intervals."
)


def _kind(value: Optional[str]) -> Optional[str]:
    return None if value in (None, "", "all") else value


@dataclass(frozen=True)
class SideTables:
    """What the job makes beside a board: the metric-vs-satisfaction table and the metric-vs-human
    correlation records (None where the evaluators are missing or the analysis failed), and the rater
    agreement (`arena.crowd.agreement.Agreement`s; None when not made)."""

    meta: Optional[pd.DataFrame]
    records: Optional[list]
    agreement: Optional[list] = None


def side_tables(memo: meta_view.CorrelationMemo, form: Any, key: Any, dialogues: BoardDialogues,
                agreement: Optional[meta_view.AgreementMemo] = None) -> SideTables:
    """Made by the job beside each board, from the store's compact rows (`webapp.leaderboard.board_extras`):
    the metric-vs-satisfaction table and the correlations (kept in `memo` under `key` while unchanged), and
    the rater agreement, the same for every board (kept in `agreement`)."""
    try:
        judged = dialogues.judged(form)
    except ImportError:  # the evaluators are not installed: nothing to correlate with
        judged = None
    records = memo.get(key, judged, form) if judged is not None else None
    agreed = agreement.get(dialogues.rows.agreement, form) if agreement is not None else None
    return SideTables(metric_meta_table_of(dialogues.meta_entries()), records, agreed)


class LeaderboardCache:
    """Boards per audience and category, from the background job (webapp.leaderboard.snapshot)."""

    def __init__(self, services: Services, clock: Callable[[], float] = time.time):
        self.services = services
        settings = services.settings
        self.correlations = meta_view.CorrelationMemo()
        self.agreement = meta_view.AgreementMemo()
        self.snapshots = LeaderboardSnapshots(services.store, LeaderboardOptions.from_settings(settings),
                                              every_s=settings.leaderboard_snapshot_every_s, clock=clock,
                                              extra=self._extra)

    def _extra(self, kind: Optional[str], category: str, dialogues: BoardDialogues) -> SideTables:
        return side_tables(self.correlations, form_for(self.services), (kind, category), dialogues,
                           self.agreement)

    @property
    def records(self) -> dict[tuple[Optional[str], str], Optional[list]]:
        """The metric-vs-human correlations of the latest result (waiting for them to be made), per audience
        and category."""
        job = self.snapshots.job
        return {key: side.records for key, side in job.with_extras(job.latest()).extras.items()}

    def start(self) -> None:
        """Start computing the boards now, before anyone asks (the app does at start)."""
        self.snapshots.job.start()

    def get(self, kind: Optional[str], fresh: bool = False, category: str = ALL) -> tuple[pd.DataFrame, Any]:
        table, side, _ = self.board(kind, fresh, category)
        return table, side.meta if side is not None else None

    def board(self, kind: Optional[str], fresh: bool = False, category: str = ALL,
              counting: tuple[bool, str] = DEFAULT_COUNTING) -> tuple[pd.DataFrame, Any, Published]:
        return self.snapshots.board(kind, category, fresh, counting)


def published_note(read: Published, every_s: float) -> str:
    """When the board shown was computed, and how often it is."""
    when = read.taken_at_utc.strftime("%Y-%m-%d %H:%M UTC")
    if every_s <= 0:
        return f"Live board, computed {read.taken_at_utc.strftime('%H:%M:%S UTC')}."
    return (f"Published from the snapshot of **{when}**; the board is recomputed at most every "
            f"{_duration(every_s)}.")


def _duration(seconds: float) -> str:
    if seconds % 3600 == 0:
        return plural(int(seconds // 3600), "hour")
    if seconds % 60 == 0:
        return plural(int(seconds // 60), "minute")
    return plural(int(round(seconds)), "second")


def metric_meta_table(dialogues: list) -> Optional[pd.DataFrame]:
    """Per system: satisfaction and each metric's mean, plus each metric's Kendall tau against satisfaction,
    over the open arena's dialogues among `dialogues`.

    None when the evaluators are not installed or there is nothing to show.
    """
    return _meta_display(lambda meta: meta.meta_table(dialogues))


def metric_meta_table_of(entries: list) -> Optional[pd.DataFrame]:
    """`metric_meta_table` of (system, counted label or None, metric -> value) per dialogue, as the board job
    reads them from the compact rows."""
    return _meta_display(lambda meta: meta.meta_rows(entries))


def _meta_display(make_rows: Callable[[Any], list]) -> Optional[pd.DataFrame]:
    """The table of the rows `make_rows` makes with `evaluators.meta`, with a Kendall tau line."""
    try:
        with heavy_imports():
            from evaluators import meta
    except ImportError:
        return None
    try:
        rows = make_rows(meta)
        taus = meta.ranking_correlations(rows)
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
        text = "_No conversations yet for this group and category._"
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
    coefficients = table.attrs.get("style_coefficients") or {}
    if coefficients:  # what style control takes out: odds ratios per standard deviation of each style measure
        text += (" Under style control, a standard deviation more reply length multiplies the odds of winning "
                 f"by {math.exp(coefficients['reply_length']):.2f}, and more items shown by "
                 f"{math.exp(coefficients['items_shown']):.2f}.")
    waiting, min_votes = table.attrs.get("below_min_votes", []), table.attrs.get("min_votes", 0)
    if waiting:  # counted per category: a system may show on one board and not yet on another
        text += (f" {plural(len(waiting), 'system')} with fewer than {min_votes} battles in this category "
                 f"{'shows' if len(waiting) == 1 else 'show'} no rating or rank yet.")
    return text


def rests_on_text(table: pd.DataFrame) -> str:
    """The line above a board: how many votes its ratings are fitted from, and how many participants cast
    them."""
    votes, people = table.attrs.get("votes_fitted", 0), table.attrs.get("participants", 0)
    text = f"This board's ratings rest on {plural(votes, 'vote')} from {plural(people, 'participant')}"
    pooled = table.attrs.get("votes_without_session", 0)
    if pooled:
        text += f" (and {plural(pooled, 'vote')} with no session known)"
    rules = counting_words((bool(table.attrs.get("first_votes_only")), table.attrs.get("ties", "half")))
    return text + (f"; counting {rules}." if rules else ".")


def counting_words(counting: tuple[bool, str]) -> str:
    """The counting options in words ("" for the default: every vote, ties as half-wins)."""
    first, ties = counting
    rules = (("first vote of each session only", first), ("ties left out", ties == "drop"))
    return " and ".join(r for r, on in rules if on)


def computing_text(category: str, counting: tuple[bool, str]) -> str:
    """The line a page shows while a counting board is computed on first request."""
    return (f"Computing the board of {leaderboard_categories.label_of(category)}, counting "
            f"{counting_words(counting)}: it is made the first time it is asked for after each refresh, "
            "which takes a few seconds.")


def computing_view(category: str, counting: tuple[bool, str]) -> tuple[Any, ...]:
    """The tab's outputs while a counting board is computed: the line saying so, no board (the one on
    screen is another board's) and no tables beside it; the rest left as they are."""
    no_box = gr.Accordion(visible=False)
    return (computing_text(category, counting), gr.Column(visible=False), gr.skip(), gr.skip(), gr.skip(),
            no_box, gr.skip(), gr.skip(), no_box, gr.skip(), no_box, "", gr.skip())


def failed_view(exc: Exception, outputs: int) -> tuple[Any, ...]:
    """The tab's outputs when a counting board could not be computed: one line saying why."""
    reason = " ".join(str(exc).split())[:200]
    return (f"This board could not be computed ({type(exc).__name__}: {reason}); the other boards are "
            "unaffected.", *[gr.skip()] * (outputs - 1))


def position_bias_table(table: pd.DataFrame) -> pd.DataFrame:
    """The board's position-bias rows (`vote_counting.position_bias`) as text for people."""
    bias = table.attrs.get("position_bias")
    if bias is None or bias.empty:
        return pd.DataFrame()

    def pct(value: Any) -> str:
        return "–" if value is None or pd.isna(value) else f"{value:.0%}"

    rows = bias.to_dict("records")
    return pd.DataFrame([{"Outcome": r["outcome"], "Battles": r["battles"], "Share": pct(r["share"]),
                          "95% Wilson CI": "–" if pd.isna(r["share_low"]) else
                          f"{pct(r['share_low'])}–{pct(r['share_high'])}"} for r in rows])


def checked_counting(counting: Any) -> tuple[bool, str]:
    """(first votes only, tie rule) from the ticked options; a value the options do not offer is refused."""
    picked = counting or []
    offered = [value for _, value in COUNTING_CHOICES]
    if not isinstance(picked, list) or any(not isinstance(p, str) or p not in offered for p in picked):
        raise refuse(f"There is no counting option {str(picked)[:40]!r}; choose among {', '.join(offered)}.")
    return "first" in picked, "drop" if "drop_ties" in picked else "half"


def checked_choice(kind_value: Any, category: Any) -> tuple[str, str]:
    """The audience and category as picked, or a refusal (one line, no traceback) for a value the pickers
    do not offer, as a call through the API may send. The events take raw values (`preprocess=False`) so
    that this check, not Gradio's, answers: Gradio's prints a traceback for each such call."""
    kind_value, category = kind_value or "human", category or ALL
    kinds = [value for _, value in KIND_CHOICES]
    if not isinstance(kind_value, str) or kind_value not in kinds:
        raise refuse(f"There is no audience {str(kind_value)[:40]!r}; choose one of {', '.join(kinds)}.")
    if not isinstance(category, str) or category not in leaderboard_categories.CATEGORIES:
        raise refuse(f"There is no category {str(category)[:40]!r}; choose one of "
                     f"{', '.join(leaderboard_categories.CATEGORIES)}.")
    return kind_value, category


def build(services: Services, participant: Any = None, *, tab: Optional[gr.Tab] = None) -> None:
    cache = LeaderboardCache(services)
    # The first visitor finds the boards computed, or being computed, off the request path; on the public page
    # the job starts once that page is drawn, so its first computation does not slow the page down.
    if participant is not None:
        participant.when_drawn(cache.start)
    else:
        cache.start()
    titles = {name: services.registry.title(name) for name in services.registry.names}
    every_s = services.settings.leaderboard_snapshot_every_s
    drawings: dict[tuple, tuple] = {}

    def render(kind_value: str, category: Optional[str] = ALL, fresh: bool = False,
               counting_value: Any = None) -> tuple[Any, ...]:
        kind_value, category = checked_choice(kind_value, category)
        counting = checked_counting(counting_value)
        kind = _kind(kind_value)
        table, side, read = cache.board(kind, fresh=fresh, category=category, counting=counting)
        meta, records = (side.meta, side.records or []) if side is not None else (None, [])
        agreed = side.agreement if side is not None else None
        label = dict((v, k) for k, v in KIND_CHOICES)[kind_value or "human"]
        shown = not table.empty  # an empty table would show placeholder headers, an empty plot nothing
        title = f"Users: {label.lower()}"
        if category != ALL:
            title += f"\n{leaderboard_categories.label_of(category)}"
        meta_shown = meta is not None and not meta.empty
        summary_line = f"{published_note(read, every_s)} {summary_text(table)}"
        # The table, plot and heat map of one published result are drawn once, not per visitor.
        key = (kind, category, counting)
        drawn = drawings.get(key)
        if drawn is None or drawn[4] is not read:
            drawn = (display_table(table, titles),
                     leaderboard_figure(table, title=title, titles=titles) if shown else None,
                     meta_view.correlation_table(records),
                     meta_view.correlation_heatmap(records) if records else None, read,
                     meta_view.agreement_table(agreed))
            drawings[key] = drawn
        return (summary_line, gr.Column(visible=shown), drawn[0], drawn[1],
                meta if meta_shown else pd.DataFrame(),
                gr.Accordion(visible=meta_shown), drawn[2], drawn[3], gr.Accordion(visible=bool(records)),
                drawn[5], gr.Accordion(visible=bool(agreed)),
                rests_on_text(table), position_bias_table(table))

    with gr.Row():
        kind = gr.Radio(
            KIND_CHOICES, value="human", label="Whose dialogues and votes", elem_id="leaderboard-kind",
            scale=3,
        )
        # Categories come from one registry (webapp.leaderboard.categories); a new one shows here by itself.
        category = gr.Dropdown(leaderboard_categories.choices(), value=ALL, label="Category",
                               elem_id="leaderboard-category", scale=3)
        refresh = gr.Button("Refresh", elem_id="leaderboard-refresh", scale=1)
    counting = gr.CheckboxGroup(COUNTING_CHOICES, value=[], label="Counting",
                                elem_id="leaderboard-counting")
    summary = gr.Markdown("", elem_id="leaderboard-summary")
    # On a phone the table scrolls sideways with its rank and system pinned (`pinned-columns`, in the app's
    # CSS); cells never wrap, so no header is squeezed into a letter-wide column.
    with gr.Column(visible=False, elem_id="leaderboard-board") as board:
        rests_on = gr.Markdown("", elem_id="leaderboard-rests-on")
        table = gr.Dataframe(interactive=False, wrap=False, elem_id="leaderboard-table",
                             elem_classes=["pinned-columns"])
        plot = gr.Plot(elem_id="leaderboard-plot", show_label=False)
        with gr.Accordion("Position bias: does the left or the right system win more?", open=False):
            bias = gr.Dataframe(interactive=False, elem_id="leaderboard-position-bias")
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
    agreement_box, agreement_table = meta_view.agreement_box()
    gr.Markdown(EXPLANATION)

    outputs = [summary, board, table, plot, meta, meta_box, corr_table, corr_plot, corr_box, agreement_table,
               agreement_box, rests_on, bias]
    inputs = [kind, category, counting]
    # Every draw asks for the current board: a live board (no snapshot interval) then waits for the job's
    # next result when the store changed since the last one (a vote just cast shows on opening the tab);
    # a snapshot is served until its interval ends. Nothing is computed on the request's thread: a counting
    # board of a category other than All is computed on the boards' worker when first asked for, and the
    # page says so meanwhile, with no board shown (the one on screen is another board's).
    def current(k: str, c: Optional[str], counted: Any = None) -> Iterator[tuple[Any, ...]]:
        kind_value, category = checked_choice(k, c)
        counting = checked_counting(counted)
        if not cache.snapshots.waits(_kind(kind_value), category, counting):
            yield render(kind_value, category, fresh=True, counting_value=counted)
            return
        yield computing_view(category, counting)
        try:
            yield render(kind_value, category, fresh=True, counting_value=counted)
        except Exception as exc:  # one line on the page; the other boards serve as before
            log.exception("leaderboard board %s / %s / %s failed", kind_value, category, counting)
            yield failed_view(exc, len(outputs))

    refresh.click(current, inputs, outputs, api_name="leaderboard", preprocess=False)
    kind.change(current, inputs, outputs, api_name=False, preprocess=False)
    category.change(current, inputs, outputs, api_name=False, preprocess=False)
    counting.change(current, inputs, outputs, api_name=False, preprocess=False)
    # Fill the tab whenever it is opened (`tab`: the one holding it, given by the page).
    if tab is not None:
        tab.select(current, inputs, outputs, api_name=False, preprocess=False)
