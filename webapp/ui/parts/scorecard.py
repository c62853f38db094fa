"""One dialogue's CoRE score card: a bar chart of the 12 factors and a markdown report.

`core_scorecard(dialogue_or_scores)` is pure: it reads the "core.*" scores and
returns `(figure, markdown)` for a `gr.Plot` and a `gr.Markdown`. Model-written
text (reasons, debate statements) is escaped before display.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping, Optional, Union

from arena.dialogue import Dialogue, Score
from arena.text_safety import escape_text
from evaluators.core.factors import FACTORS, OVERALL_METRIC, ROLES, metric_name

if TYPE_CHECKING:  # imported when a figure is drawn: this module is also used outside the app
    from matplotlib.figure import Figure

_DIMENSION_COLOURS = {
    "Dialogue Actions": "#4C72B0",
    "Language Expression": "#DD8452",
    "Recommended Items": "#55A868",
    "Response Content": "#8172B3",
}
_REASON_CHARS = 280
_STATEMENT_CHARS = 600


def _short(text: str, limit: int) -> str:
    text = " ".join(str(text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _core_scores(source: Union[Dialogue, Mapping[str, Score], None]) -> dict[str, Score]:
    scores = source.scores if isinstance(source, Dialogue) else dict(source or {})
    return {k: v for k, v in scores.items() if k.startswith("core.")}


def factor_figure(scores: Mapping[str, Score], title: str = "CoRE factors") -> Figure:
    """Horizontal bars, 0-4, one per factor; unscored factors drawn as empty hatched bars."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    fig = Figure(figsize=(7.0, 4.9), dpi=100)
    ax = fig.add_subplot(1, 1, 1)
    names, values, colours, hatches = [], [], [], []
    for factor in reversed(FACTORS):  # first factor at the top
        score = scores.get(metric_name(factor.key))
        value = score.value if score is not None else None
        names.append(factor.name)
        values.append(4.0 if value is None else value)
        colours.append("none" if value is None else _DIMENSION_COLOURS[factor.dimension])
        hatches.append("//" if value is None else "")
    bars = ax.barh(names, values, color=colours, edgecolor="#888888")
    for bar, hatch, value in zip(bars, hatches, values):
        if hatch:
            bar.set_hatch(hatch)
            bar.set_edgecolor("#bbbbbb")
        label = "unscored" if hatch else f"{value:.2g}"
        x = 0.05 if hatch else value + 0.05
        ax.text(x, bar.get_y() + bar.get_height() / 2, label, va="center", fontsize=8)
    ax.set_xlim(0, 4.6)
    ax.set_xticks([0, 1, 2, 3, 4])
    ax.set_xlabel("factor score (0-4)")
    overall = scores.get(OVERALL_METRIC)
    if overall is not None:
        title += " - overall " + ("unscored" if overall.value is None else f"{overall.value:.1f}/100")
    ax.set_title(title, fontsize=10)
    handles = [Patch(color=colour, label=dimension) for dimension, colour in _DIMENSION_COLOURS.items()]
    ax.legend(handles=handles, fontsize=7, loc="upper center", bbox_to_anchor=(0.4, -0.14), ncol=4,
              frameon=False)
    fig.tight_layout()
    return fig


def scorecard_markdown(scores: Mapping[str, Score]) -> str:
    overall = scores.get(OVERALL_METRIC)
    lines: list[str] = []
    if overall is None:
        lines.append("### CoRE overall: not computed")
    elif overall.value is None:
        why = escape_text(overall.error or "no readable debate answer")
        lines.append(f"### CoRE overall: unscored ({why})")
    else:
        lines.append(f"### CoRE overall: {overall.value:.1f} / 100")
    if overall is not None:
        d = overall.details
        meta = [f"scorer {escape_text(overall.scorer)} {escape_text(overall.version)}"]
        if overall.model:
            meta.append(f"model {escape_text(overall.model)}")
        if "rounds" in d:
            stopped = escape_text(str(d.get("stopped", "?")))
            meta.append(f"{d['rounds']} debate round(s), stopped by {stopped}")
        if "calls" in d:
            meta.append(f"{d['calls']} LLM calls ({d.get('cache_hits', 0)} cached), "
                        f"{d.get('tokens', 0)} tokens, {float(d.get('wall_s', 0.0)):.1f} s")
        lines += ["", "_" + "; ".join(meta) + "_"]

    lines += ["", "| factor | score | reason |", "|---|---|---|"]
    for factor in FACTORS:
        score = scores.get(metric_name(factor.key))
        if score is None:
            lines.append(f"| {escape_text(factor.name)} | - | not computed |")
            continue
        value = "unscored" if score.value is None else f"{score.value:.2g}"
        reason = score.details.get("reason") or score.error or ""
        reason = escape_text(_short(reason, _REASON_CHARS))
        lines.append(f"| {escape_text(factor.name)} | {value} | {reason} |")

    transcript = (overall.details.get("transcript") if overall is not None else None) or []
    if transcript:
        lines += ["", "#### Debate"]
        names = {role.key: role.name for role in ROLES}
        for number, entries in enumerate(transcript, 1):
            lines += ["", f"**Round {number}**", ""]
            for entry in entries:
                who = escape_text(str(entry.get("evaluator") or names.get(entry.get("role"), "?")))
                score = entry.get("score")
                shown = "no readable answer" if score is None else f"{float(score):g}"
                statement = escape_text(_short(entry.get("statement") or entry.get("error") or "",
                                               _STATEMENT_CHARS))
                lines.append(f"- **{who}** ({shown}): {statement}")
    return "\n".join(lines)


def core_scorecard(source: Union[Dialogue, Mapping[str, Score], None]) -> tuple[Optional[Figure], str]:
    """(bar chart of the 12 factors, markdown with overall, reasons and debate) for one dialogue."""
    scores = _core_scores(source)
    if not scores:
        return None, "_No CoRE scores for this dialogue yet._"
    return factor_figure(scores), scorecard_markdown(scores)
