"""The Leaderboard's meta-evaluation view: every automatic metric against every human judgement.

Shows `evaluators.meta_correlations.judged_records` for the stored corpus
as a table (dialogue-level Spearman and Pearson with 95% bootstrap intervals
and n, system-level Kendall's tau) and a heat map of the Spearman
coefficients. Dialogues with people and with simulators are never pooled:
each gets its own rows and its own heat-map panel.

Beside them, the rater agreement (`arena.crowd.agreement`): Krippendorff's
alpha of each aspect, of verdicts, votes and gold answers, with its interval
and the units and raters it rests on, where two or more people judged the
same thing.
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Optional, Sequence

import pandas as pd

from arena.runtime.imports import heavy_imports

log = logging.getLogger(__name__)

BOOTSTRAP_ROUNDS = 300  # enough for a 95% interval on screen; the command line defaults to 1000
USERS_LABEL = {"human": "people", "simulator": "simulators"}

def _fingerprint(judged: Sequence[Any], form: Any) -> int:
    """Changes when anything the records are computed from changes (`JudgedDialogue`s, in order)."""
    return hash((form.version, tuple(d.key for d in judged)))


class CorrelationMemo:
    """Correlation records per key, recomputed only when the data they come from changed.

    The bootstrap takes seconds on a large corpus (BENCHMARKS.md), so a result
    is kept until a score, rating or verdict of the dialogues changes, not only
    for the leaderboard's few seconds of caching.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[Any, tuple[int, list[dict[str, Any]]]] = {}

    def get(self, key: Any, dialogues: Sequence[Any], form: Any) -> Optional[list[dict[str, Any]]]:
        """The records of `dialogues` (whole `Dialogue`s, or `JudgedDialogue`s as the board job reads them
        from the compact rows), or None when the evaluators are missing or the analysis fails."""
        try:
            with heavy_imports():
                from evaluators.meta_correlations import JudgedDialogue, judged, judged_records
        except ImportError:
            return None
        try:
            rows = [d if isinstance(d, JudgedDialogue) else judged(d, form) for d in dialogues]
            fingerprint = _fingerprint(rows, form)
            with self._lock:
                cached = self._entries.get(key)
                if cached is not None and cached[0] == fingerprint:
                    return cached[1]
                records = judged_records(rows, form=form, rounds=BOOTSTRAP_ROUNDS)
                self._entries[key] = (fingerprint, records)
                return records
        except Exception:  # the leaderboard must render even if the analysis cannot
            log.exception("correlation records failed")
            return None


class AgreementMemo:
    """The rater agreement, recomputed only when a judgement it is made from changed (the bootstrap runs
    once per aspect, not once per board)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entry: Optional[tuple[int, list[Any]]] = None

    def get(self, rows: Any, form: Any) -> Optional[list[Any]]:
        """`Agreement`s of `rows` (`webapp.leaderboard.board_extras.AgreementRows`), None when they fail."""
        from arena.crowd.agreement import agreement_of, judgement_sets

        try:
            sets = judgement_sets(rows.dialogues, form, votes=rows.votes, gold=rows.participants)
            fingerprint = hash(tuple(sets))
            with self._lock:
                if self._entry is not None and self._entry[0] == fingerprint:
                    return self._entry[1]
                results = agreement_of(sets, rounds=BOOTSTRAP_ROUNDS)
                self._entry = (fingerprint, results)
                return results
        except Exception:  # the leaderboard must render even if the analysis cannot
            log.exception("rater agreement failed")
            return None


AGREEMENT_NOTE = (
    "Where two or more people judged the same thing: Krippendorff's alpha (1 full agreement, 0 no more "
    "than chance), ordinal for aspect ratings, nominal for verdicts, battle votes and gold answers, with "
    "a 95% bootstrap interval over units. **Units**: the dialogues, replies, battles or gold texts that two "
    "or more raters judged; **Raters**: the people who judged them. A replayed dialogue's judgements count "
    "for the dialogue it shows. Below two such units there is no alpha (*not enough overlap*)."
)


def agreement_table(results: Optional[Sequence[Any]]) -> pd.DataFrame:
    """One row per judgement: alpha with its interval (or why there is none), units, raters."""
    from arena.crowd.agreement import describe

    return pd.DataFrame([{"Judgement": r.name, "Scale": r.level, "Krippendorff's alpha [95% CI]": describe(r),
                          "Units": r.units, "Raters": r.raters} for r in results or []])


def agreement_box() -> tuple[Any, Any]:
    """The accordion holding the agreement table (hidden until there is a row), and the table."""
    import gradio as gr

    with gr.Accordion("Rater agreement", open=False, visible=False) as box:
        gr.Markdown(AGREEMENT_NOTE)
        table = gr.Dataframe(interactive=False, wrap=True, elem_id="leaderboard-agreement")
    return box, table


def _fmt(value: Optional[float]) -> str:
    return "–" if value is None else f"{value:+.2f}"


def _with_ci(value: Optional[float], low: Optional[float], high: Optional[float]) -> str:
    if value is None:
        return "–"
    return f"{value:+.2f} [{_fmt(low)}, {_fmt(high)}]" if low is not None else f"{value:+.2f}"


def correlation_table(records: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """One row per users group, metric and judgement."""
    system = {(r["users"], r["metric"], r["aspect"]): r for r in records if r["level"] == "system"}
    rows = []
    for r in records:
        if r["level"] != "dialogue":
            continue
        tau = system.get((r["users"], r["metric"], r["aspect"]))
        rows.append({
            "Users": USERS_LABEL.get(r["users"], r["users"]),
            "Metric": r["metric"],
            "Judgement": r["aspect"],
            "Dialogues": r["n"],
            "Spearman [95% CI]": _with_ci(r["spearman"], r["spearman_ci_low"], r["spearman_ci_high"]),
            "Pearson [95% CI]": _with_ci(r["pearson"], r["pearson_ci_low"], r["pearson_ci_high"]),
            "Systems": tau["n"] if tau else 0,
            "Kendall tau (systems)": _fmt(tau["kendall_tau"]) if tau else "–",
        })
    return pd.DataFrame(rows)


def correlation_heatmap(records: Sequence[dict[str, Any]]):
    """Spearman's rho per metric (rows) and judgement (columns), one panel per users group."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import numpy as np
    from matplotlib.figure import Figure

    dialogue_level = [r for r in records if r["level"] == "dialogue"]
    groups = sorted({r["users"] for r in dialogue_level})
    metrics = sorted({r["metric"] for r in dialogue_level})
    aspects = list(dict.fromkeys(r["aspect"] for r in dialogue_level))
    fig = Figure(figsize=(max(5.0, 1.1 * len(aspects) * max(1, len(groups)) + 2.5),
                          max(2.5, 0.42 * len(metrics) + 1.6)))
    if not dialogue_level:
        ax = fig.subplots()
        ax.text(0.5, 0.5, "no rated and scored dialogues yet", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return fig
    axes = np.atleast_1d(fig.subplots(1, len(groups), squeeze=False)[0])
    image = None
    for ax, users in zip(axes, groups):
        grid = np.full((len(metrics), len(aspects)), np.nan)
        counts = np.zeros((len(metrics), len(aspects)), dtype=int)
        for r in dialogue_level:
            if r["users"] != users:
                continue
            i, j = metrics.index(r["metric"]), aspects.index(r["aspect"])
            counts[i, j] = r["n"]
            if r["spearman"] is not None:
                grid[i, j] = r["spearman"]
        image = ax.imshow(np.ma.masked_invalid(grid), cmap="RdBu", vmin=-1, vmax=1, aspect="auto")
        for i in range(len(metrics)):
            for j in range(len(aspects)):
                text = "–" if np.isnan(grid[i, j]) else f"{grid[i, j]:+.2f}"
                ax.text(j, i, f"{text}\nn={counts[i, j]}", ha="center", va="center", fontsize=7)
        ax.set_xticks(range(len(aspects)))
        ax.set_xticklabels(aspects, rotation=35, ha="right", fontsize=8)
        ax.set_yticks(range(len(metrics)))
        ax.set_yticklabels(metrics, fontsize=8)
        ax.set_title(f"Dialogues with {USERS_LABEL.get(users, users)}: Spearman rho", fontsize=10)
    if image is not None:
        fig.colorbar(image, ax=list(axes), shrink=0.8)
    return fig
