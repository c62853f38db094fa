"""Evaluate tab: one-click simulated evaluation runs.

Choose systems, a simulator, the number of dialogues, max turns and a seed;
the run goes on in the background (`webapp.runs.evaluation.RunManager`) and
its status is read back from the store, so progress and the table of
finished dialogues survive a page reload. A timer refreshes the view.
"""

from __future__ import annotations

import html
import time
from typing import Any, Optional

import gradio as gr

from webapp.runs.evaluation import FINAL_STATES, RunConfig, RunManager, rating_options
from webapp.services import Services
from webapp.ui.parts import system_health
from webapp.sessions.refusal import refuse
from webapp.sessions.session_choices import OFFERED
from arena.dialogue import Role
from arena.text_safety import escape_text
from simulators import KINDS, NEEDS_LLM

TABLE_COLUMNS = ["system", "index", "turns", "end", "feedback", "recommended", "recall@10", "pc", "errors",
                 "error", "dialogue_id"]
SHOWN_COLUMNS = TABLE_COLUMNS + ["scores"]  # the stored automatic scores, once a run is finished
SCORES_FRESH_S = 30.0  # a finished run's scores are read again after this (scoring goes on in the background)
REFRESH_S = 2.0
INTRO = (
    "Run simulated users against one or more systems. Every simulated dialogue is stored, marked as "
    "simulated so it is never mixed with people's ratings, and queued for automatic scoring when scoring "
    "is enabled. Runs continue in the background: you can leave or reload this page and pick the run "
    "again below."
)


def simulator_choices() -> list[tuple[str, str]]:
    return [(label, kind) for kind, label in KINDS.items()]


def run_choices(manager: RunManager) -> list[tuple[str, str]]:
    """(label, run id) of each run, its state as it is now (the view refreshes them while it is open)."""
    out = []
    for state in manager.list_runs():
        config = state.get("config") or {}
        label = (f"{state.get('created_at', '')} · {config.get('simulator')} · "
                 f"{', '.join(config.get('systems') or [])} · {state.get('status')} "
                 f"{state.get('done', 0)}/{state.get('total', 0)}")
        out.append((label, state["run_id"]))
    return out


def _duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    return f"{minutes} min {seconds:02d} s" if minutes < 60 else f"{minutes // 60} h {minutes % 60:02d} min"


def active_html(state: dict[str, Any], now: Optional[float] = None) -> str:
    """The dialogues under way: turns so far, how long they have run and since their last turn."""
    active = state.get("active") or {}
    if not active:
        return ""
    now = time.time() if now is None else now
    items = []
    for entry in sorted(active.values(), key=lambda e: (str(e.get("system")), e.get("index") or 0)):
        turns = int(entry.get("turns") or 0)
        items.append(
            f"<li><code>{html.escape(str(entry.get('system')))}</code> #{html.escape(str(entry.get('index')))}: "
            f"{turns} turn{'' if turns == 1 else 's'} so far, running "
            f"{_duration(now - float(entry.get('started') or now))}, last turn "
            f"{_duration(now - float(entry.get('updated') or now))} ago</li>")
    return f"<p>Under way ({len(items)}):</p><ul class='run-active'>{''.join(items)}</ul>"


def progress_html(state: Optional[dict[str, Any]]) -> str:
    if not state:
        return "<p>No run selected.</p>"
    total = max(int(state.get("total") or 0), 1)
    done = int(state.get("done") or 0)
    config = state.get("config") or {}
    status = html.escape(str(state.get("status")))
    lines = [
        f'<progress value="{done}" max="{total}" style="width:100%" aria-label="run progress"></progress>',
        f"<p><b>{status}</b> · {done} of {total} dialogues · {int(state.get('failed') or 0)} with errors · "
        f"simulator <code>{html.escape(str(config.get('simulator')))}</code> "
        f"({html.escape(str(state.get('simulator_model') or ''))}) · seed {html.escape(str(config.get('seed')))} "
        f"· run <code>{html.escape(str(state.get('run_id')))}</code></p>",
    ]
    if state.get("error"):
        lines.append(f"<p style='color:#b00'>Run failed: {html.escape(str(state['error']))}</p>")
    lines.append(active_html(state))
    return "\n".join(line for line in lines if line)


def table_rows(state: Optional[dict[str, Any]], scores: Optional[dict[str, str]] = None) -> list[list[Any]]:
    rows = (state or {}).get("dialogues") or []
    scores = scores or {}
    return [[row.get(col, "") for col in TABLE_COLUMNS] + [scores.get(str(row.get("dialogue_id")), "")]
            for row in rows]


def scores_text(dialogue: Any) -> str:
    """A dialogue's stored scores in one cell ("rdl 0.25 · sr 1"); unscored metrics say so."""
    parts = [f"{name} {score.value:.3g}" if score.value is not None else f"{name} unscored"
             for name, score in sorted(dialogue.scores.items())]
    return " · ".join(parts) or "not scored yet"


def run_scores(services: Services, state: Optional[dict[str, Any]]) -> dict[str, str]:
    """dialogue id -> its scores' text, for a finished run (a run under way shows none yet)."""
    if not state or state.get("status") not in FINAL_STATES:
        return {}
    out = {}
    for row in state.get("dialogues") or []:
        d = services.store.get_dialogue(str(row.get("dialogue_id") or ""))
        if d is not None:
            out[d.dialogue_id] = scores_text(d)
    return out


def transcript_markdown(services: Services, dialogue_id: str) -> str:
    """A stored dialogue as a transcript: who said what, the items each reply recommended, the verdict and
    the scores (text escaped: a simulated user's words are not page markup)."""
    d = services.store.get_dialogue((dialogue_id or "").strip()) if dialogue_id else None
    if d is None:
        return "Choose a dialogue in the table (or paste its id) to read its transcript."
    lines = [f"**{escape_text(d.crs_id)}** · dialogue `{escape_text(d.dialogue_id)}` · "
             f"{d.num_turns} turns · end: {escape_text(d.end_reason or '–')}", ""]
    for u in d.utterances:
        who = "User" if u.role == Role.USER else "System"
        lines.append(f"**{who}:** {escape_text(u.text)}")
        if u.items:
            lines.append("  \n_Recommended:_ " + ", ".join(escape_text(i.title) for i in u.items))
        if u.error:
            lines.append(f"  \n_Error:_ {escape_text(u.error)}")
        lines.append("")
    if d.feedback is not None:
        lines.append(f"Verdict: **{d.feedback.sentiment}**")
    lines.append(f"Scores: {scores_text(d)}")
    return "\n".join(lines)


def start_run(manager: RunManager, systems: list[str], simulator: str, n: float, max_turns: float,
              seed: float, concurrency: float, abus_templates: bool, rate_aspects: bool = False) -> str:
    if not systems:
        raise refuse("Choose at least one system.")
    if simulator in NEEDS_LLM and manager.llm is None:
        raise refuse("This simulator needs an LLM; configure one (see README, LLM configuration).")
    config = RunConfig(
        systems=list(systems),
        simulator=simulator,
        n_dialogues=int(n or 0),
        max_turns=int(max_turns or 0),
        seed=int(seed or 0),
        concurrency=int(concurrency or 1),
        options={**(({"nlg": "template", "nlu": "offline"} if abus_templates else {"nlg": "llm", "nlu": "llm"})
                    if simulator == "abus" else {}),
                 **(rating_options(manager.settings) if rate_aspects else {})},
    )
    try:
        return manager.start(config)
    except ValueError as exc:
        raise refuse(str(exc)) from None


def build(services: Services, *, page: Optional[gr.Blocks] = None) -> None:
    manager = services.evaluation_runs
    systems = services.registry.available()
    gr.Markdown(INTRO)
    system_health.build(services)
    with gr.Row():
        system_box = gr.CheckboxGroup(choices=systems, value=systems[:1], label="Systems")
        simulator_box = gr.Dropdown(choices=simulator_choices(), value="llm_us", label="Simulator")
    with gr.Row():
        n_box = gr.Number(value=10, minimum=1, maximum=1000, precision=0, label="Dialogues per system",
                          elem_id="evaluate-n")
        turns_box = gr.Number(value=min(services.settings.max_turns, 10), minimum=1, maximum=100, precision=0,
                              label="Max turns", elem_id="evaluate-turns")
        seed_box = gr.Number(value=0, precision=0, label="Seed")
        concurrency_box = gr.Slider(1, 32, value=4, step=1, label="Dialogues at once")
    abus_box = gr.Checkbox(value=False, label="ABUS without an LLM: template messages, offline act annotator")
    rate_box = gr.Checkbox(value=False, label="Simulated users also fill the aspect rating form at the end (one "
                           "more LLM call per dialogue)")
    with gr.Row():
        start_button = gr.Button("Start run", variant="primary", elem_id="evaluate-start")
        cancel_button = gr.Button("Cancel run", variant="stop")
    with gr.Row():
        run_box = gr.Dropdown(choices=run_choices(manager), label="Run", scale=4, elem_id="evaluate-run")
        refresh_button = gr.Button("Refresh", scale=1)
    progress = gr.HTML(progress_html(None), elem_id="evaluate-progress")
    # Fixed column widths: on a phone the table scrolls sideways in its frame, headers stay readable and
    # the system stays in view (`pinned-columns pinned-one`, in the app's CSS).
    table = gr.Dataframe(headers=SHOWN_COLUMNS, value=[], label="Finished dialogues (select a row to read it)",
                         interactive=False, wrap=False, column_widths=["120px"] * len(SHOWN_COLUMNS),
                         elem_id="evaluate-table", elem_classes=["pinned-columns", "pinned-one"])
    with gr.Row():
        dialogue_box = gr.Textbox(label="Dialogue id", scale=3, elem_id="evaluate-dialogue")
        read_button = gr.Button("Read the transcript", scale=1, elem_id="evaluate-read")
    transcript = gr.Markdown(transcript_markdown(services, ""), elem_id="evaluate-transcript")
    shown = gr.State([])  # the run picker's labels as last sent to the page
    timer = gr.Timer(REFRESH_S)
    cached: dict[str, tuple[float, dict[str, str]]] = {}  # run id -> (read at, scores): not every tick

    def scores_of(state: Optional[dict[str, Any]]) -> dict[str, str]:
        run_id = str((state or {}).get("run_id") or "")
        at, scores = cached.get(run_id, (0.0, {}))
        if time.monotonic() - at > SCORES_FRESH_S or not scores:
            scores = run_scores(services, state)
            cached[run_id] = (time.monotonic(), scores)
        return scores

    def view(run_id: Optional[str]) -> tuple[Any, Any]:
        state = manager.status(run_id) if run_id else None
        return progress_html(state), table_rows(state, scores_of(state))

    def on_select(evt: gr.SelectData) -> tuple[Any, Any]:
        row = evt.row_value if isinstance(evt.row_value, list) else []
        dialogue_id = str(row[SHOWN_COLUMNS.index("dialogue_id")]) if len(row) == len(SHOWN_COLUMNS) else ""
        return dialogue_id, transcript_markdown(services, dialogue_id)

    table.select(on_select, None, [dialogue_box, transcript], api_visibility="private")
    read_button.click(lambda dialogue_id: transcript_markdown(services, dialogue_id), [dialogue_box], [transcript],
                      api_name="evaluate_transcript")

    def picker(run_id: Optional[str], last: list) -> tuple[Any, list]:
        """The run picker with each run's state as it is now; untouched while no label changed."""
        choices = run_choices(manager)
        if choices == last:
            return gr.skip(), last
        return gr.update(choices=choices, value=run_id), choices

    def on_start(*args: Any) -> tuple[Any, ...]:
        run_id = start_run(manager, *args)
        choices = run_choices(manager)
        return (gr.update(choices=choices, value=run_id), choices, *view(run_id))

    def on_cancel(run_id: Optional[str]) -> tuple[Any, Any]:
        if not run_id:
            raise refuse("Select a run first.")
        state = manager.status(run_id)
        if state is None or state.get("status") in FINAL_STATES:
            raise refuse("This run is not running.")
        if not manager.cancel(run_id):
            raise refuse("This run belongs to another process (for example the command line); stop it there.")
        return view(run_id)

    def on_load() -> tuple[Any, ...]:
        choices = run_choices(manager)
        value = choices[0][1] if choices else None
        return (gr.update(choices=choices, value=value), choices, *view(value))

    def on_refresh(run_id: Optional[str]) -> tuple[Any, ...]:
        choices = run_choices(manager)
        return (gr.update(choices=choices, value=run_id), choices, *view(run_id))

    def on_tick(run_id: Optional[str], last: list) -> tuple[Any, ...]:
        return (*picker(run_id, last), *view(run_id))

    inputs = [system_box, simulator_box, n_box, turns_box, seed_box, concurrency_box, abus_box, rate_box]
    outputs = [progress, table]
    start_button.click(OFFERED.offering(on_start, [run_box, shown, *outputs], inputs), inputs,
                       [run_box, shown, *outputs], api_name="evaluate_start")
    cancel_button.click(on_cancel, [run_box], outputs, api_name="evaluate_cancel")
    refresh_button.click(OFFERED.offering(on_refresh, [run_box, shown, *outputs]), [run_box],
                         [run_box, shown, *outputs], api_name="evaluate_refresh")
    run_box.change(lambda run_id: view(run_id), [run_box], outputs, api_visibility="private")
    timer.tick(OFFERED.offering(on_tick, [run_box, shown, *outputs]), [run_box, shown], [run_box, shown, *outputs],
               api_visibility="private",
               show_progress="hidden")
    if page is not None:  # pick the latest run again after a page reload (`page`: the Blocks holding it)
        page.load(OFFERED.offering(on_load, [run_box, shown, *outputs]), None, [run_box, shown, *outputs],
                  api_visibility="private")
