"""The page a recruited worker sees: consent, instructions, the tasks in order, then the completion code.

Served at `/study/` (the public page sends a link with `?study=` there, query
intact). The page keeps (study id, pseudonym) in a server-side State, and
what it drew of each conversation (so that a verdict from a page the store
has moved on from is refused); every handler reads the worker's row from the
store and redraws the whole page from it (`draw`), so a reload resumes
exactly where the worker was. The task view works as the public Chat does: a message shows the moment
it is sent, with a typing indicator until the reply, and only the component
that changes shows progress; a refusal is one line next to the control that was
used (never a toast), and what the worker typed or picked stays.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Optional
from urllib.parse import quote

import gradio as gr

from arena.study import Study
from arena.store import Participant
from webapp.sessions import study as flow
from webapp.services import Services
from webapp.sessions.refusal import Refusal
from webapp.sessions.session_base import PageView
from webapp.sessions.warming import start_after_page, warming_line
from webapp.ui.parts.study_text import study_markdown
from webapp.ui.parts.refusal import notice
from webapp.ui.parts.page_script import KEEPS_DRAFT
from webapp.sessions.aspect_ratings import form_for
from webapp.ui.parts.render import (
    WORKER_CHATBOT_BUTTONS, chat_messages, echo_messages, items_markdown, latest_items, plural,
)
from arena.text_safety import escape_text

TITLE = "CRS Arena study"
FORWARD_DELAY_MS = 2000  # long enough to see the thank-you and the code, short enough not to wait for
# Follows the forward address once the worker is done; only a plain http(s) address, whatever the value.
FORWARD_JS = ("(url) => { if (typeof url === 'string' && /^https?:\\/\\/[^\\s]+$/.test(url)) {"
              f" setTimeout(() => window.location.assign(url), {FORWARD_DELAY_MS}); }} return []; }}")
SENTIMENTS = ("satisfied", "frustrated")
# A random token kept in the browser's local storage: a worker id without a platform session id is bound to
# the first browser that used it (`flow.enter`), so a second browser cannot read or finish their task.
BROWSER_TOKEN_JS = """(token) => {
  const key = "crs-arena-study-browser";
  let value = null;
  try { value = window.localStorage.getItem(key); } catch (e) { value = null; }
  if (!value) {
    const bytes = new Uint8Array(16);
    window.crypto.getRandomValues(bytes);
    value = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
    try { window.localStorage.setItem(key, value); } catch (e) { /* private mode: this visit only */ }
  }
  return [value];
}"""


class Pane(NamedTuple):
    """One conversation's part of the task view (one per system in a battle)."""
    column: Any
    chat: Any
    items: Any
    msg: Any
    send: Any
    line: Any  # the status line for this pane's controls
    good: Any
    bad: Any
    verdict: Any


PREVIEW_NOTE = ("**Preview:** you walk the study as a worker would; this takes no place, and nothing you do "
                "counts in its results or exports.")


def _done_markdown(study: Study, preview: bool = False) -> str:
    if preview:
        return ("## End of the preview\n\nA worker would now see the completion code"
                + (f" **`{study.completion_code}`**" if study.completion_code else "")
                + (" and be sent back to the platform." if study.redirect_url else "."))
    parts = ["## Thank you!", "You have completed this study."]
    if study.completion_code:
        parts.append(f"Your completion code is: **`{study.completion_code}`**")
    if study.redirect_url:
        parts.append(f"You are being sent back to the study platform. If nothing happens, "
                     f"[return to the study platform]({quote(study.completion_url() or '', safe=':/?&=%#')}) "
                     "to confirm your completion.")
    return "\n\n".join(parts)


def build_study_demo(services: Services) -> gr.Blocks:
    age = services.settings.file_cache_max_age_s
    with gr.Blocks(title=TITLE, delete_cache=(age, age)) as demo:
        ident = gr.State(None)
        # Each conversation as the page last drew it: a verdict from a page the store has moved on from
        # (a verdict or a turn given in another tab, served by another app process) is refused, not stored.
        drawn = gr.State({})
        title = gr.Markdown(f"# {TITLE}", elem_id="study-title")
        status = gr.Markdown("", elem_id="study-notice", elem_classes=["status-line"])
        # For clients without a browser (and tests): the link's parameters as values.
        link_study = gr.Textbox(visible=False)
        link_worker = gr.Textbox(visible=False)
        link_browser = gr.Textbox(visible=False)  # this browser's token (BROWSER_TOKEN_JS), binds a worker id
        with gr.Column(visible=False, elem_id="study-consent") as consent_box:
            consent_md = gr.Markdown()
            agree = gr.Button("I agree and want to take part", variant="primary", elem_id="study-agree")
        with gr.Column(visible=False, elem_id="study-instructions") as instr_box:
            instr_md = gr.Markdown()
            start = gr.Button("Start the first task", variant="primary", elem_id="study-start")
        with gr.Column(visible=False, elem_id="study-task") as task_box:
            task_head = gr.Markdown(elem_id="study-task-head")
            panes = {}
            with gr.Row(equal_height=False):
                for side in ("A", "B"):
                    s = side.lower()
                    with gr.Column(visible=side == "A", variant="panel", min_width=300,
                                   elem_id=f"study-pane-{s}") as column:
                        chat = gr.Chatbot(label=f"System {side}", height=360, buttons=WORKER_CHATBOT_BUTTONS,
                                          elem_id=f"study-chat-{s}", elem_classes=["worker-chat"])
                        items = gr.Markdown(items_markdown([]), elem_id=f"study-items-{s}")
                        msg = gr.Textbox(label="Your message", lines=1, max_lines=4, elem_id=f"study-msg-{s}",
                                         elem_classes=[KEEPS_DRAFT])  # unsent text survives a reload
                        send = gr.Button("Send", variant="primary", elem_id=f"study-send-{s}")
                        line = gr.Markdown("", elem_id=f"study-status-{s}", elem_classes=["status-line"])
                        with gr.Row():
                            good = gr.Button("Satisfied", min_width=120, elem_id=f"study-satisfied-{s}")
                            # Equal weight: the look of a button must not suggest an answer.
                            bad = gr.Button("Frustrated", min_width=120, elem_id=f"study-frustrated-{s}")
                        verdict = gr.Markdown(elem_id=f"study-verdict-{s}")
                    panes[side] = Pane(column, chat, items, msg, send, line, good, bad, verdict)
            choice = gr.Radio([(v, k) for k, v in flow.VOTE_CHOICES.items()], label="Which system was better?",
                              visible=False, elem_id="study-choice")
            form = form_for(services)
            with gr.Column(visible=False, elem_id="study-aspects") as aspects_box:
                gr.Markdown("**Tell us more (optional).** Answer any of these, or leave them open.")
                radios = [gr.Radio([(f"{v}" + (f" {a.points[v]}" if v in a.points else ""), v) for v in a.scale()],
                                   value=None, label=f"{a.label} ({a.scale_text()})", info=a.definition,
                                   elem_id=f"study-aspect-{a.name}") for a in form.dialogue]
            attention = gr.Radio([], label="", visible=False, elem_id="study-attention")
            submit = gr.Button("Submit this task", variant="primary", elem_id="study-submit")
            submit_line = gr.Markdown("", elem_id="study-submit-status", elem_classes=["status-line"])
        with gr.Column(visible=False, elem_id="study-gold") as gold_box:
            gold_md = gr.Markdown()
            gold_answer = gr.Radio([], label="", elem_id="study-gold-answer")
            gold_submit = gr.Button("Submit", variant="primary", elem_id="study-gold-submit")
            gold_line = gr.Markdown("", elem_id="study-gold-status", elem_classes=["status-line"])
        with gr.Column(visible=False, elem_id="study-full") as full_box:
            full_md = gr.Markdown(elem_id="study-full-notice")
            retry = gr.Button("Try again", elem_id="study-retry")
        done_md = gr.Markdown(visible=False, elem_id="study-done")
        # The address a finished worker is forwarded to (`Study.completion_url`, an http(s) address checked
        # when the file was saved); the script chained after each event below follows it.
        forward = gr.Textbox(visible=False, elem_id="study-forward")

        pane_parts = [c for pane in panes.values() for c in (pane.column, pane.chat, pane.items, pane.send,
                                                              pane.line, pane.verdict)]
        view = [ident, drawn, title, status, consent_box, consent_md, instr_box, instr_md, task_box, task_head,
                *pane_parts, choice, attention, aspects_box, *radios, submit_line, gold_box, gold_md, gold_answer,
                gold_line, full_box, full_md, retry, done_md, forward]
        lines = [status, submit_line, gold_line, *[pane.line for pane in panes.values()]]

        def draw(study: Optional[Study], p: Optional[Participant], message: str = "", reset: bool = False,
                 where: Any = status) -> list[Any]:
            """The whole page for the worker's row, with `message` in the status line `where` (the one next
            to the control that was used); `reset` empties the task form's answers."""
            step = p.data.get("step") if p is not None else None
            if p is not None and flow.completed(p):
                step = "done"
            preview = p is not None and flow.is_preview(p)
            if preview and where is status and not message:
                message = PREVIEW_NOTE
            out: dict[Any, Any] = {
                ident: (p.study_id, p.pseudonym) if p is not None else None,
                drawn: {},
                title: f"# {escape_text(study.title)}" if study else f"# {TITLE}",
                **{line: message if line is where else "" for line in lines},
                consent_box: gr.update(visible=step == "consent"),
                consent_md: study_markdown(study.consent) if study else "",
                instr_box: gr.update(visible=step == "instructions"),
                instr_md: study_markdown(study.instructions) if study else "",
                task_box: gr.update(visible=step == "task"),
                task_head: "", choice: gr.update(visible=False), attention: gr.update(visible=False),
                aspects_box: gr.update(visible=bool(step == "task" and study and study.aspects)),
                **{r: gr.update(value=None) if reset else gr.update() for r in radios},
                gold_box: gr.update(visible=step == "gold"), gold_md: "", gold_answer: gr.update(),
                full_box: gr.update(visible=step == "full"), full_md: "", retry: gr.update(visible=False),
                done_md: gr.update(visible=step == "done", value=_done_markdown(study, preview)
                                   if step == "done" else ""),
                # A preview ends here: it never goes on to the platform.
                forward: (study.completion_url() or "") if step == "done" and study and not preview else "",
            }
            dialogues = flow.task_dialogues(services, p) if step == "task" else {}
            out[drawn] = {side: PageView.of(d) for side, d in dialogues.items()}
            for side in ("A", "B"):
                pane = panes[side]
                d = dialogues.get(side)
                out[pane.column] = gr.update(visible=side in flow.sides(study) if study else side == "A")
                out[pane.chat] = gr.update(value=chat_messages(d), label=f"System {side}"
                                           if study and study.mode == "battle" else "The system")
                out[pane.items] = items_markdown(latest_items(d))
                out[pane.send] = gr.update(interactive=d is not None and d.feedback is None and not d.ended)
                out[pane.verdict] = (f"Your verdict: **{d.feedback.sentiment}** (you may change it until you "
                                     "submit the task)" if d is not None and d.feedback else "")
            if step == "task":
                number = len(p.data.get("task_seconds", [])) + 1
                who = "each system" if study.mode == "battle" else "the system"
                out[task_head] = (f"### Task {number} of {study.tasks_per_participant}\n"
                                  f"Chat with {who} (at least {plural(study.min_user_turns, 'message')}), then "
                                  "say whether you were satisfied or frustrated, and submit the task.")
                out[choice] = gr.update(visible=study.mode == "battle", **({"value": None} if reset else {}))
                check = study.attention_check
                if check is not None and check.kind == "instructed" and check.after_task == number:
                    out[attention] = gr.update(visible=True, choices=check.options, label=check.question,
                                               **({"value": None} if reset else {}))
            if step == "full" and study is not None:
                why, may_retry = flow.full_notice(services, study, p)
                out[full_md], out[retry] = why, gr.update(visible=may_retry)
            if step == "gold":
                check = study.attention_check
                out[gold_md] = check.text
                out[gold_answer] = gr.update(choices=check.options, label=check.question, value=None)
            return [out[c] for c in view]

        def guarded(action, reset: bool = False, where: Any = status):
            """Run `action` on the worker's row and redraw; a refusal shows in the line `where`, and the form
            is `reset` only when it succeeds (a refused answer stays where the worker put it)."""
            def run(ident_value, *args):
                try:
                    study, p = flow.current(services, ident_value)
                except Refusal as exc:
                    return draw(None, None, notice(exc))
                try:
                    action(study, p, *args)
                except Refusal as exc:
                    study, p = flow.current(services, ident_value)
                    return draw(study, p, notice(exc), where=where)
                study, p = flow.current(services, ident_value)
                return draw(study, p, reset=reset)
            return run

        def sending(side: str):
            """Send in one pane, in two steps as the public Chat does: the message with a typing indicator at
            once (Send and the box disabled), then the page with the reply. A refused message stays in its box."""
            pane = panes[side]
            chat, msg, send, line = pane.chat, pane.msg, pane.send, pane.line
            outputs = view + [msg]

            def only(updates: dict[Any, Any]) -> list[Any]:
                return [updates.get(c, gr.skip()) for c in outputs]

            def run(ident_value, text: str):
                try:
                    study, p = flow.current(services, ident_value)
                    d, _ = flow.check_send(services, p, side, text)
                except Refusal as exc:
                    yield only({line: notice(exc)})
                    return
                yield only({chat: echo_messages(d, text), line: "", msg: gr.update(value="", interactive=False),
                            send: gr.update(interactive=False)})
                warming = warming_line(services, d.crs_id)  # the reply follows once the model has loaded
                if warming:
                    yield only({line: warming})
                try:
                    flow.send(services, study, p, side, text)
                except Refusal as exc:
                    study, p = flow.current(services, ident_value)
                    yield draw(study, p, notice(exc), where=line) + [gr.update(value=text, interactive=True)]
                    return
                study, p = flow.current(services, ident_value)
                yield draw(study, p) + [gr.update(value="", interactive=True)]
            return run, outputs

        def enter(params: dict[str, Any], request: Any, browser: Optional[str]) -> list[Any]:
            try:
                study, p = flow.enter(services, params, request, browser=browser)
            except Refusal as exc:
                return draw(None, None, notice(exc))
            if flow.completed(p):
                message = "You have already completed this study; it can be completed only once."
            elif p.data.get("step") in ("consent", "instructions") and not flow.is_preview(p):
                message = flow.start_notice(services, study, p) or ""  # before reading on, not after Start
            else:
                message = ""
            return draw(study, p, message)

        def enter_from_link(browser: str, request: gr.Request) -> list[Any]:
            return enter(dict(request.query_params) if request is not None else {}, request, browser)

        def enter_from_values(study_id: str, worker: str, browser: str, request: gr.Request) -> list[Any]:
            return enter({"study": study_id, "worker_id": worker}, request, browser)

        def forwarding(event: Any) -> None:
            event.then(None, [forward], None, js=FORWARD_JS, api_visibility="private")

        entered = demo.load(enter_from_link, [link_browser], view, js=BROWSER_TOKEN_JS, api_visibility="private",
                            show_progress="hidden")
        forwarding(entered)
        entered.then(start_after_page(services), None, None, api_visibility="private", show_progress="hidden")
        gr.Button(visible=False).click(enter_from_values, [link_study, link_worker, link_browser], view,
                                       api_name="study_enter")
        # Every event redraws the page, but only the line next to the control shows progress: Gradio's
        # overlay on every output would cover the whole page at each step.
        def near(line: Any) -> dict[str, Any]:
            return {"show_progress": "minimal", "show_progress_on": [line]}

        agree.click(guarded(lambda s, p: flow.consent(services, s, p)), [ident], view, api_name="study_consent",
                    **near(consent_md))
        start.click(guarded(lambda s, p: flow.begin(services, s, p)), [ident], view, api_name="study_start",
                    **near(instr_md))
        for side in ("A", "B"):
            pane = panes[side]
            msg, send, good, bad, verdict, line = pane.msg, pane.send, pane.good, pane.bad, pane.verdict, pane.line
            s = side.lower()
            sent, sent_outputs = sending(side)
            # One event for both triggers: while it runs, a second trigger (Enter, then Send) is ignored.
            gr.on(triggers=[send.click, msg.submit], fn=sent, inputs=[ident, msg], outputs=sent_outputs,
                  api_name=f"study_send_{s}", trigger_mode="once", show_progress="hidden")
            for button, sentiment in ((good, "satisfied"), (bad, "frustrated")):
                button.click(guarded(lambda st, p, page, side=side, sentiment=sentiment:
                                     flow.rate(services, st, p, side, sentiment, shown=(page or {}).get(side)),
                                     where=line),
                             [ident, drawn], view, api_name=f"study_{sentiment}_{s}", **near(verdict))
        forwarding(submit.click(
            guarded(lambda st, p, c, a, *answers: flow.submit(services, st, p, c, a, answers), reset=True,
                    where=submit_line),
            [ident, choice, attention, *radios], view, api_name="study_submit", **near(submit_line)))
        forwarding(gold_submit.click(guarded(lambda st, p, a: flow.answer_gold(services, st, p, a), where=gold_line),
                                     [ident, gold_answer], view, api_name="study_gold", **near(gold_line)))
        retry.click(guarded(lambda st, p: flow.retry_full(services, st, p)), [ident], view, api_name="study_retry",
                    **near(full_box))
    return demo
