"""Studies tab (researcher pages): write or edit a study file, follow its participants and quotas, download
the payment sheet and the study's own export.

Saving a file that parses stores it as the study's next version (the old
versions stay, and every dialogue and vote records the version it ran
under); a bad file is refused with one line naming the field and the text
stays in the editor.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Optional

import gradio as gr

from arena.crowd.study import StudyError, parse_study
from webapp.leaderboard import study_results as results
from webapp.sessions.study import preview_token, systems_problem, systems_status
from webapp.leaderboard.table import display_table
from webapp.services import Services
from webapp.ui.download_tab import ExportFolders
from webapp.ui.moderation_tab import actor_of
from webapp.ui import studies_platform, studies_review
from webapp.ui.parts.refusal_notice import NOTICE_MARK
from arena.text_safety import escape_text
from webapp.ui.parts.render import plural
from webapp.ui.parts.tables import shown_table
from webapp.sessions.session_choices import OFFERED

EXAMPLE = Path(__file__).resolve().parents[2] / "assets" / "studies" / "example.yaml"


def _choices(services: Services) -> list[tuple[str, str]]:
    return [(f"{sid} (version {version})", sid) for sid, version in services.store.study_ids()]


STUDY_QUERY = "study"  # the researcher page's address may name the study it opens on: `/admin/?study=ID`


def chosen_at_load(services: Services, request: Optional[gr.Request]) -> tuple[Optional[str], str]:
    """The study the page opens on, and a line when the address named one this arena does not have: the
    study the address names, else the only study there is, else none."""
    ids = [sid for sid, _ in services.store.study_ids()]
    params = getattr(request, "query_params", None) or {}
    named = str(params.get(STUDY_QUERY) or "").strip()
    if named:
        if named in ids:
            return named, ""
        return None, (f"{NOTICE_MARK} There is no study {escape_text(named[:64])!r} here (the page's address "
                      "names it): choose one of the list.")
    return (ids[0], "") if len(ids) == 1 else (None, "")


PROLIFIC_QUERY = "&PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"


def site_of(request: Optional[gr.Request]) -> str:
    """The address the researcher reached this page at (scheme and host, as a proxy in front passes
    them), which is the address workers reach the study page at."""
    headers = getattr(request, "headers", None) or {}
    host = headers.get("x-forwarded-host") or headers.get("host") or "localhost"
    scheme = headers.get("x-forwarded-proto") or "http"
    return f"{scheme.split(',')[0].strip()}://{host.split(',')[0].strip()}"


def participant_link(site: str, study_id: str) -> str:
    """The link to give the platform: the study page with the study id and Prolific's placeholders."""
    return f"{site}/study/?study={study_id}{PROLIFIC_QUERY}"


def preview_link(site: str, study_id: str, token: str) -> str:
    return f"{site}/study/?study={study_id}&preview={token}"


def _link_help(site: str, study_id: str, token: str, worker_ids: str = "prolific") -> str:
    preview = preview_link(site, study_id, token)
    other = f"`{site}/study/?study={study_id}&worker_id=...`"
    # The link above carries Prolific's placeholders: opened as it is, it is refused (`study_ids`).
    if worker_ids == "prolific":
        ids = ("Paste the link into Prolific as it is: Prolific fills in each worker's ids; a link with "
               f"other ids, or with its placeholders left in, is refused. Other platforms: {other}, once "
               "the study file says `worker_ids: any`. ")
    else:
        ids = (f"Other platforms: {other} (this study takes any worker id: nothing checks that it is a "
               "real worker's). ")
    return (ids + f"[Preview the study]({preview}) (the whole flow as a worker sees it; it takes no place "
            "and counts nowhere; keep this link to yourselves).")


CONFIRM_CLOSE_JS = ("(sid) => [sid && window.confirm('Close the study for good? Its workers\\' platform ids "
                    "are deleted: download the payment sheet first.') ? sid : null]")


STATE_WORDS = {"open": "open", "paused": "paused (no new worker or task)",
               "closed": "closed (platform ids deleted)"}


def _study_view(services: Services, study_id: Optional[str],
                request: Optional[gr.Request]) -> tuple[Any, ...]:
    """The chosen study's file, overview, link and tables (empty when none is chosen)."""
    if not study_id:
        return "", "", "", shown_table(None), shown_table(None), shown_table(None)
    version, study, text = results.newest_study(services, study_id)
    counts = results.summary(services, study_id)
    site = site_of(request)
    head = (f"**{escape_text(study.title)}** (version {version}, {study.mode}, "
            f"{STATE_WORDS[services.store.study_state(study_id)]}): "
            f"{plural(counts['participants'], 'participant')}, {counts['completed']} completed, "
            f"{counts['flagged']} flagged.\n\n"
            + _link_help(site, study_id, preview_token(services, study_id), study.worker_ids))
    table = results.study_leaderboard(services, study_id)
    if table.empty:
        head += "\n\n_No conversations counted yet: the study's leaderboard shows once there are some._"
    else:
        head += (f"\n\nThe leaderboard counts {plural(int(table['conversations'].sum()), 'conversation')}; "
                 f"a rating shows after {plural(services.settings.leaderboard_min_votes, 'battle')}, as on "
                 "the public board.")
    return (text, head, participant_link(site, study_id), shown_table(results.quota_table(services, study)),
            shown_table(results.participants_table(services, study_id)), shown_table(display_table(table)))


class _Views:
    """The components a study's view fills (`_study_view`'s outputs, in its order) and the event that shows
    them, so any action can show the study again after it ran."""

    def __init__(self, services: Services, picked: gr.Dropdown, shown: list[Any]) -> None:
        self.services, self.picked, self.shown = services, picked, shown

    def show(self, study_id: Optional[str], request: gr.Request = None) -> tuple[Any, ...]:
        return _study_view(self.services, study_id, request)

    def after(self, events: list[Any]) -> None:
        """Show the study again once each of `events` ran: its summary (participants, completed, flagged)
        and tables then follow the action without a press of Refresh."""
        for event in events:
            event.then(self.show, [self.picked], self.shown, api_visibility="private")


def _state_action(services: Services, views: _Views, state: str) -> Callable[..., tuple[Any, ...]]:
    """The handler of Pause, Resume or Close: the platform first, then the arena."""
    def run(study_id: Optional[str], request: gr.Request = None) -> tuple[Any, ...]:
        if not study_id:
            return (f"{NOTICE_MARK} Nothing changed: choose a study (and confirm) first.", *views.show(None))
        if services.store.study_state(study_id) == "closed":
            return (f"{NOTICE_MARK} {study_id} is closed; a closed study stays closed.",
                    *views.show(study_id, request))
        refused = studies_platform.follow_state(services, study_id, state)  # the platform first
        if refused is not None:
            return (refused, *views.show(study_id, request))
        untold = studies_platform.not_told(services, study_id, state)
        if state == "closed":
            gone = results.close_study(services, study_id)
            line = (f"Closed **{escape_text(study_id)}**: no new worker or task, and the platform ids of "
                    f"{plural(gone, 'worker')} deleted.")
        else:
            services.store.set_study_state(study_id, state)
            line = f"**{escape_text(study_id)}** is {STATE_WORDS[state]}."
        return (line + untold, *views.show(study_id, request))
    return run


def _build_states(services: Services, views: _Views) -> list[Any]:
    """Pause, Resume and Close; returns their events."""
    with gr.Row():
        pause = gr.Button("Pause", elem_id="studies-pause", min_width=100)
        resume = gr.Button("Resume", elem_id="studies-resume", min_width=100)
        close = gr.Button("Close the study", variant="stop", elem_id="studies-close", min_width=100)
    state_line = gr.Markdown("", elem_id="studies-state")
    outputs = [state_line, *views.shown]
    events = [button.click(_state_action(services, views, state), [views.picked], outputs,
                           api_name=f"study_{button.elem_id[8:]}")
              for button, state in ((pause, "paused"), (resume, "open"))]
    # Closing deletes the platform ids the payment sheet needs: the browser asks first.
    events.append(close.click(_state_action(services, views, "closed"), [views.picked], outputs,
                              api_name="study_close", js=CONFIRM_CLOSE_JS))
    return events


def _build_editor(services: Services, picked: gr.Dropdown) -> gr.Code:
    """The study file's editor and its Save button; returns the editor."""
    editor = gr.Code(EXAMPLE.read_text(encoding="utf-8") if EXAMPLE.exists() else "", language="yaml",
                     label="Study file (YAML)", interactive=True, elem_id="studies-editor")
    gr.Markdown(systems_status(services), elem_id="studies-systems")
    save = gr.Button("Save as a new version", variant="primary", elem_id="studies-save")
    saved = gr.Markdown("", elem_id="studies-saved")

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

    save.click(OFFERED.offering(on_save, [saved, picked]), [editor], [saved, picked], api_name="study_save")
    return editor


def _build_files(services: Services, picked: gr.Dropdown) -> None:
    """The payment files, the study's export and Match (platform ids to pseudonyms)."""
    folders = ExportFolders()
    with gr.Row():
        pay = gr.Button("Payment files (approve, reject, bonus, sheet)", elem_id="studies-pay")
        export = gr.Button("Export the study", elem_id="studies-export")
        include_flagged = gr.Checkbox(False, label="Export flagged workers too", elem_id="studies-flagged")
    files = gr.File(label="Files", file_count="multiple", interactive=False, elem_id="studies-files")
    with gr.Row():
        workers = gr.Textbox(label="Worker ids from the platform (one per line), to match them to pseudonyms",
                             lines=3, elem_id="studies-workers", scale=3)
        match = gr.Button("Match", elem_id="studies-match", scale=1)
    matched = gr.Dataframe(label="Matched workers", interactive=False, visible=False,
                           elem_id="studies-matched")

    def on_pay(study_id: Optional[str]) -> Any:
        if not study_id:
            return None
        return [str(path) for path in results.payment_files(services, study_id, folders.new())]

    def on_export(study_id: Optional[str], flagged: bool) -> Any:
        if not study_id:
            return None
        done = results.export_study(services, study_id, folders.new(), include_flagged=flagged,
                                    zip_name=f"crs-arena-study-{study_id}.zip")
        return [str(path) for key, path in done.files.items() if key in ("zip", "card")]

    def on_match(study_id: Optional[str], ids: str) -> Any:
        return shown_table(results.lookup_workers(services, study_id, ids or "") if study_id else None)

    pay.click(on_pay, [picked], [files], api_name="study_payments")
    export.click(on_export, [picked, include_flagged], [files], api_name="study_export")
    match.click(on_match, [picked, workers], [matched], api_name="study_match_workers")


def _open_on_chosen(services: Services, page: gr.Blocks, picked: gr.Dropdown, overview: gr.Markdown) -> None:
    """At the page's load, the list of studies as it is now (studies saved since the app was built
    included) and the study the page opens on (`chosen_at_load`). Choosing it is what shows it: the
    dropdown's change event, fired by this update as by a researcher's choice, draws the summary and
    tables, the Prolific line and the submissions, each read once."""
    def on_load(request: gr.Request = None) -> tuple[Any, str]:
        study_id, said = chosen_at_load(services, request)
        return gr.update(choices=_choices(services), value=study_id), said

    page.load(OFFERED.offering(on_load, [picked, overview]), None, [picked, overview],
              api_visibility="private")


def build(services: Services, *, page: Optional[gr.Blocks] = None) -> None:
    gr.Markdown("Crowdsourced studies: a fixed set of systems, a quota per system (or pair), workers "
                "recruited through a link, an attention check and a completion code. Each save is a new "
                "version.")
    with gr.Row():
        picked = gr.Dropdown(_choices(services), value=None, label="Study", elem_id="studies-pick", scale=3)
        refresh = gr.Button("Refresh", elem_id="studies-refresh", scale=1)
    editor = _build_editor(services, picked)
    overview = gr.Markdown("", elem_id="studies-overview")
    link = gr.Textbox(label="Participant link (paste it into the platform)", interactive=False,
                      buttons=["copy"], elem_id="studies-link")
    # The tables are made below the platform sections but filled by the same view: made unrendered here.
    quotas = gr.Dataframe(label="Quota cells", elem_id="studies-quotas", interactive=False, visible=False,
                          render=False)
    people = gr.Dataframe(label="Participants", elem_id="studies-participants", interactive=False,
                          visible=False, render=False)
    board = gr.Dataframe(label="The study's leaderboard (flagged workers left out)", elem_id="studies-board",
                         elem_classes=["pinned-columns"], interactive=False, visible=False, render=False)
    views = _Views(services, picked, [editor, overview, link, quotas, people, board])
    states = _build_states(services, views)
    views.after(studies_platform.build(services, picked,
                                       lambda request, sid: participant_link(site_of(request), sid), states))
    views.after(studies_review.build(services, picked))
    if page is not None:
        _open_on_chosen(services, page, picked, overview)
    for table in (quotas, people, board):
        table.render()
    _build_files(services, picked)

    def on_refresh(study_id: Optional[str], request: gr.Request = None) -> tuple[Any, ...]:
        return (gr.update(choices=_choices(services)), *views.show(study_id, request))

    picked.change(views.show, [picked], views.shown, api_name="study_show")
    refresh.click(OFFERED.offering(on_refresh, [picked, *views.shown]), [picked], [picked, *views.shown],
                  api_visibility="private")
