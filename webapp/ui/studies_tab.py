"""Studies tab (researcher pages): write or edit a study file, follow its participants and quotas, download
the payment sheet and the study's own export.

Saving a file that parses stores it as the study's next version (the old
versions stay, and every dialogue and vote records the version it ran
under); a bad file is refused with one line naming the field and the text
stays in the editor.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import gradio as gr

from arena.study import StudyError, parse_study
from webapp.leaderboard import study_results as results
from webapp.sessions.study import systems_problem, systems_status
from webapp.leaderboard.table import display_table
from webapp.services import Services
from webapp.ui.download_tab import ExportFolders
from webapp.ui.moderation_tab import actor_of
from webapp.ui.parts.refusal import NOTICE_MARK
from arena.text_safety import escape_text
from webapp.ui.parts.render import plural

EXAMPLE = Path(__file__).resolve().parents[2] / "assets" / "studies" / "example.yaml"


def _choices(services: Services) -> list[tuple[str, str]]:
    return [(f"{sid} (version {version})", sid) for sid, version in services.store.study_ids()]


def _link_help(study_id: str) -> str:
    return (f"Participant link: `/?study={study_id}&PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}&STUDY_ID={{{{%STUDY_ID%}}}}"
            f"&SESSION_ID={{{{%SESSION_ID%}}}}` (other platforms: `/?study={study_id}&worker_id=...`).")


def build(services: Services) -> None:
    folders = ExportFolders()
    gr.Markdown("Crowdsourced studies: a fixed set of systems, a quota per system (or pair), workers recruited "
                "through a link, an attention check and a completion code. Each save is a new version.")
    with gr.Row():
        picked = gr.Dropdown(_choices(services), value=None, label="Study", elem_id="studies-pick", scale=3)
        refresh = gr.Button("Refresh", elem_id="studies-refresh", scale=1)
    editor = gr.Code(EXAMPLE.read_text(encoding="utf-8") if EXAMPLE.exists() else "", language="yaml",
                     label="Study file (YAML)", interactive=True, elem_id="studies-editor")
    systems_line = gr.Markdown(systems_status(services), elem_id="studies-systems")
    save = gr.Button("Save as a new version", variant="primary", elem_id="studies-save")
    saved = gr.Markdown("", elem_id="studies-saved")
    overview = gr.Markdown("", elem_id="studies-overview")
    quotas = gr.Dataframe(label="Quota cells", interactive=False, elem_id="studies-quotas")
    people = gr.Dataframe(label="Participants", interactive=False, elem_id="studies-participants")
    board = gr.Dataframe(label="The study's leaderboard (flagged workers left out)", interactive=False,
                         elem_id="studies-board")
    with gr.Row():
        pay = gr.Button("Payment sheet (CSV)", elem_id="studies-pay")
        export = gr.Button("Export the study", elem_id="studies-export")
        include_flagged = gr.Checkbox(False, label="Export flagged workers too", elem_id="studies-flagged")
    files = gr.File(label="Files", file_count="multiple", interactive=False, elem_id="studies-files")
    with gr.Row():
        workers = gr.Textbox(label="Worker ids from the platform (one per line), to match them to pseudonyms",
                             lines=3, elem_id="studies-workers", scale=3)
        match = gr.Button("Match", elem_id="studies-match", scale=1)
    matched = gr.Dataframe(label="Matched workers", interactive=False, elem_id="studies-matched")

    def show(study_id: Optional[str]) -> tuple[Any, ...]:
        if not study_id:
            return "", "", None, None, None
        version, study, text = results.newest_study(services, study_id)
        counts = results.summary(services, study_id)
        head = (f"**{escape_text(study.title)}** (version {version}, {study.mode}): "
                f"{plural(counts['participants'], 'participant')}, {counts['completed']} completed, "
                f"{counts['flagged']} flagged.\n\n"
                + _link_help(study_id))
        return (text, head, results.quota_table(services, study), results.participants_table(services, study_id),
                display_table(results.study_leaderboard(services, study_id)))

    def on_save(text: str, request: gr.Request) -> tuple[Any, ...]:
        try:
            study = parse_study(text or "")
        except StudyError as exc:
            return f"{NOTICE_MARK} {escape_text(str(exc))}", gr.update()
        problem = systems_problem(services, study)
        if problem is not None:  # a worker would pass consent, then meet a system that cannot answer
            return f"{NOTICE_MARK} {escape_text(problem)}", gr.update()
        version = services.store.save_study(study, text, actor_of(request))
        return (f"Saved **{escape_text(study.id)}** as version {version}.",
                gr.update(choices=_choices(services), value=study.id))

    def on_pay(study_id: Optional[str]) -> Any:
        if not study_id:
            return None
        return [str(results.payment_sheet(services, study_id, folders.new()))]

    def on_export(study_id: Optional[str], flagged: bool) -> Any:
        if not study_id:
            return None
        done = results.export_study(services, study_id, folders.new(), include_flagged=flagged,
                                    zip_name=f"crs-arena-study-{study_id}.zip")
        return [str(path) for key, path in done.files.items() if key in ("zip", "card")]

    def on_match(study_id: Optional[str], ids: str) -> Any:
        return results.lookup_workers(services, study_id, ids or "") if study_id else None

    shown = [editor, overview, quotas, people, board]
    picked.change(show, [picked], shown, api_name="study_show")
    refresh.click(lambda sid: (gr.update(choices=_choices(services)), *show(sid)), [picked], [picked, *shown],
                  api_visibility="private")
    save.click(on_save, [editor], [saved, picked], api_name="study_save")
    pay.click(on_pay, [picked], [files], api_name="study_payments")
    export.click(on_export, [picked, include_flagged], [files], api_name="study_export")
    match.click(on_match, [picked, workers], [matched], api_name="study_match_workers")
