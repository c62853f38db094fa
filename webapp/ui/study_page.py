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

The components are built step by step in `webapp.ui.study_layout`; here are
the redraw (`StudyEvents.draw`), what each event does and the wiring of every
event (`_wire`).
"""

from __future__ import annotations

from typing import Any, Optional
from urllib.parse import quote

import gradio as gr

from arena.crowd.known_answers import RESULTS_KEY
from arena.crowd.study import Study
from arena.store import Participant
from webapp.sessions import study as flow
from webapp.services import Services
from webapp.sessions.refusal import Refusal
from webapp.sessions.study_ids import MTURK_SUBMIT_PATH
from webapp.sessions.session_base import PageView
from webapp.sessions.warming import start_after_page, warming_line
from webapp.ui.parts.study_text import study_markdown
from webapp.ui.parts.refusal_notice import notice
from webapp.sessions.aspect_ratings import form_for
from webapp.ui.parts.render import chat_messages, echo_messages, items_markdown, latest_items, plural
from webapp.plot_backend import choose_plot_backend
from webapp.ui.study_layout import SIDES, TITLE, StudyPage, build_page
from webapp.sessions.session_choices import OFFERED
from webapp.sessions.turns_in_flight import session_of
from arena.text_safety import escape_text

FORWARD_DELAY_MS = 2000  # long enough to see the thank-you and the code, short enough not to wait for
# Follows the forward address once the worker is done; only a plain http(s) address, whatever the value.
# MTurk's external-submit address is posted as a form (its query holds the form's fields), as MTurk expects.
FORWARD_JS = ("(url) => { if (typeof url === 'string' && /^https?:\\/\\/[^\\s]+$/.test(url)) {"
              " const go = () => { const u = new URL(url);"
              f" if (!u.pathname.endsWith('{MTURK_SUBMIT_PATH}')) {{ window.location.assign(url); return; }}"
              " const form = document.createElement('form'); form.method = 'POST';"
              " form.action = u.origin + u.pathname;"
              " u.searchParams.forEach((value, name) => { const input = document.createElement('input');"
              " input.type = 'hidden'; input.name = name; input.value = value; form.appendChild(input); });"
              " document.body.appendChild(form); form.submit(); };"
              f" setTimeout(go, {FORWARD_DELAY_MS}); }} return []; }}")
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


PREVIEW_NOTE = ("**Preview:** you walk the study as a worker would; this takes no place, and nothing you do "
                "counts in its results or exports.")


def _done_markdown(study: Study, preview: bool = False, address: str = "") -> str:
    """The completion page; `address`: where the page forwards the worker (the redirect, or MTurk's form)."""
    if preview:
        return ("## End of the preview\n\nA worker would now see the completion code"
                + (f" **`{study.completion_code}`**" if study.completion_code else "")
                + (" and be sent back to the platform." if study.redirect_url or study.platform == "mturk"
                   else "."))
    parts = ["## Thank you!", "You have completed this study."]
    if study.completion_code:
        parts.append(f"Your completion code is: **`{study.completion_code}`**")
    if study.platform == "mturk":
        parts.append("Your task is being submitted to Amazon Mechanical Turk. If nothing happens within a "
                     "few seconds, enter the completion code on the HIT's page.")
    elif address:
        parts.append(f"You are being sent back to the study platform. If nothing happens, "
                     f"[return to the study platform]({quote(address, safe=':/?&=%#')}) "
                     "to confirm your completion.")
    return "\n\n".join(parts)


def build_study_demo(services: Services) -> gr.Blocks:
    choose_plot_backend()
    age = services.settings.file_cache_max_age_s
    with gr.Blocks(title=TITLE, delete_cache=(age, age)) as demo:
        page = build_page(form_for(services))
        _wire(demo, page, StudyEvents(services, page))
    return demo


class StudyEvents:
    """What each event of the study page does: act on the worker's row, then redraw the page from it."""

    def __init__(self, services: Services, page: StudyPage):
        self.services = services
        self.page = page

    def draw(self, study: Optional[Study], p: Optional[Participant], message: str = "", reset: bool = False,
             where: Any = None) -> list[Any]:
        """The whole page for the worker's row, with `message` in the status line `where` (the one next
        to the control that was used; the page's own line when None); `reset` empties the task form's
        answers."""
        page = self.page
        where = page.status if where is None else where
        step = p.data.get("step") if p is not None else None
        if p is not None and flow.completed(p):
            step = "done"
        preview = p is not None and flow.is_preview(p)
        if preview and where is page.status and not message:
            message = PREVIEW_NOTE
        out = self._steps(study, p, step, preview, reset)
        out.update({line: message if line is where else "" for line in page.lines})
        dialogues = flow.task_dialogues(self.services, p) if step == "task" else {}
        out[page.drawn] = {side: PageView.of(d) for side, d in dialogues.items()}
        for side in SIDES:
            out.update(self._pane(study, side, dialogues.get(side)))
        if step == "task":
            out.update(self._task(study, p, reset))
        if step == "full" and study is not None:
            why, may_retry = flow.full_notice(self.services, study, p)
            out[page.full_md], out[page.retry] = why, gr.update(visible=may_retry)
        if step == "gold":
            check = study.attention_check
            out[page.gold.text] = check.text
            out[page.gold.answer] = gr.update(choices=check.options, label=check.question, value=None)
        return [out[c] for c in page.view]

    def _steps(self, study: Optional[Study], p: Optional[Participant], step: Optional[str], preview: bool,
               reset: bool) -> dict[Any, Any]:
        """Which step shows, its study text, and every other step's parts as they are when hidden."""
        page, task, gold = self.page, self.page.task, self.page.gold
        done = step == "done" and study is not None and p is not None and not preview
        address = flow.completion_address(self.services, study, p) if done else ""
        return {
            page.ident: (p.study_id, p.pseudonym) if p is not None else None,
            page.title: f"# {escape_text(study.title)}" if study else f"# {TITLE}",
            page.consent_box: gr.update(visible=step == "consent"),
            page.consent_md: study_markdown(study.consent) if study else "",
            page.instr_box: gr.update(visible=step == "instructions"),
            page.instr_md: study_markdown(study.instructions) if study else "",
            task.box: gr.update(visible=step == "task"),
            task.head: "", task.choice: gr.update(visible=False), task.attention: gr.update(visible=False),
            task.aspects_box: gr.update(visible=bool(step == "task" and study and study.aspects)),
            **{r: gr.update(value=None) if reset else gr.update() for r in task.radios},
            gold.box: gr.update(visible=step == "gold"), gold.text: "", gold.answer: gr.update(),
            page.full_box: gr.update(visible=step == "full"), page.full_md: "",
            page.retry: gr.update(visible=False),
            page.done_md: gr.update(visible=step == "done", value=_done_markdown(study, preview, address)
                                    if step == "done" else ""),
            # A preview ends here: it never goes on to the platform.
            page.forward: address,
        }

    def _pane(self, study: Optional[Study], side: str, d: Any) -> dict[Any, Any]:
        """One side's pane for its conversation `d` (None before the first message)."""
        pane = self.page.task.panes[side]
        return {
            pane.column: gr.update(visible=side in flow.sides(study) if study else side == "A"),
            pane.chat: gr.update(value=chat_messages(d), label=f"System {side}"
                                 if study and study.mode == "battle" else "The system"),
            pane.items: items_markdown(latest_items(d)),
            pane.send: gr.update(interactive=d is not None and d.feedback is None and not d.ended),
            pane.verdict: (f"Your verdict: **{d.feedback.sentiment}** (you may change it until you "
                           "submit the task)" if d is not None and d.feedback else ""),
        }

    def _task(self, study: Study, p: Participant, reset: bool) -> dict[Any, Any]:
        """The task's heading, the battle's choice and the instructed attention check after its task."""
        task = self.page.task
        number = len(p.data.get("task_seconds", [])) + 1
        # A known-answer task looks like any other (its number counts every task), but a replay is read only.
        known = (p.data.get("task") or {}).get("known")
        shown_number = number + len(p.data.get(RESULTS_KEY) or [])
        who = "each system" if study.mode == "battle" else "the system"
        replay = known == "replay"
        what = ("Read this conversation between a user and a system, then say whether the user would have "
                "been satisfied or frustrated, and submit the task." if replay else
                f"Chat with {who} (at least {plural(study.min_user_turns, 'message')}), then "
                "say whether you were satisfied or frustrated, and submit the task.")
        out: dict[Any, Any] = {
            task.head: f"### Task {shown_number} of {study.all_tasks()}\n{what}",
            task.choice: gr.update(visible=study.mode == "battle", **({"value": None} if reset else {})),
            task.aspects_box: gr.update(visible=bool(study.aspects) and not known),
        }
        check = study.attention_check
        if check is not None and check.kind == "instructed" and check.after_task == number and not known:
            out[task.attention] = gr.update(visible=True, choices=check.options, label=check.question,
                                            **({"value": None} if reset else {}))
        return out

    def guarded(self, action, reset: bool = False, where: Any = None):
        """Run `action` on the worker's row and redraw; a refusal shows in the line `where` (the page's own
        line when None), and the form is `reset` only when it succeeds (a refused answer stays where the
        worker put it)."""
        services = self.services

        def run(ident_value, *args):
            try:
                study, p = flow.current(services, ident_value)
            except Refusal as exc:
                return self.draw(None, None, notice(exc))
            try:
                action(study, p, *args)
            except Refusal as exc:
                study, p = flow.current(services, ident_value)
                return self.draw(study, p, notice(exc), where=where)
            study, p = flow.current(services, ident_value)
            return self.draw(study, p, reset=reset)
        return run

    def sending(self, side: str):
        """Send in one pane, in two steps as the public Chat does: the message with a typing indicator at
        once (Send and the box disabled), then the page with the reply. A refused message stays in its box."""
        services, draw = self.services, self.draw
        pane = self.page.task.panes[side]
        chat, msg, send, line = pane.chat, pane.msg, pane.send, pane.line
        outputs = self.page.view + [msg]

        def only(updates: dict[Any, Any]) -> list[Any]:
            return [updates.get(c, gr.skip()) for c in outputs]

        def run(ident_value, text: str, request: gr.Request):
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
                with services.turns_in_flight.turn(session_of(request)):  # a closed page waits for its reply
                    flow.send(services, study, p, side, text)
            except Refusal as exc:
                study, p = flow.current(services, ident_value)
                yield draw(study, p, notice(exc), where=line) + [gr.update(value=text, interactive=True)]
                return
            study, p = flow.current(services, ident_value)
            yield draw(study, p) + [gr.update(value="", interactive=True)]
        return run, outputs

    def enter(self, params: dict[str, Any], request: Any, browser: Optional[str]) -> list[Any]:
        services = self.services
        try:
            study, p = flow.enter(services, params, request, browser=browser)
        except Refusal as exc:
            return self.draw(None, None, notice(exc))
        if flow.completed(p):
            message = "You have already completed this study; it can be completed only once."
        elif p.data.get("step") in ("consent", "instructions") and not flow.is_preview(p):
            message = flow.start_notice(services, study, p) or ""  # before reading on, not after Start
        else:
            message = ""
        return self.draw(study, p, message)

    def enter_from_link(self, browser: str, request: gr.Request) -> list[Any]:
        return self.enter(dict(request.query_params) if request is not None else {}, request, browser)

    def enter_from_values(self, study_id: str, worker: str, browser: str, request: gr.Request) -> list[Any]:
        return self.enter({"study": study_id, "worker_id": worker}, request, browser)


def _near(line: Any) -> dict[str, Any]:
    """Every event redraws the page, but only the line next to the control shows progress: Gradio's
    overlay on every output would cover the whole page at each step."""
    return {"show_progress": "minimal", "show_progress_on": [line]}


def _wire(demo: gr.Blocks, page: StudyPage, events: StudyEvents) -> None:
    """Every event of the study page, with its inputs and outputs."""
    services, guarded, view, ident = events.services, events.guarded, page.view, page.ident
    offered = OFFERED.offering  # the attention checks' choices, recorded for the API guard
    task, gold = page.task, page.gold

    def forwarding(event: Any) -> None:
        event.then(None, [page.forward], None, js=FORWARD_JS, api_visibility="private")

    entered = demo.load(offered(events.enter_from_link, view), [page.link_browser], view, js=BROWSER_TOKEN_JS,
                        api_visibility="private", show_progress="hidden")
    forwarding(entered)
    entered.then(start_after_page(services), None, None, api_visibility="private", show_progress="hidden")
    linked = [page.link_study, page.link_worker, page.link_browser]
    page.enter.click(offered(events.enter_from_values, view), linked, view, api_name="study_enter")
    consented = offered(guarded(lambda s, p: flow.consent(services, s, p)), view, [ident])
    page.agree.click(consented, [ident], view,
                     api_name="study_consent", **_near(page.consent_md))
    page.start.click(offered(guarded(lambda s, p: flow.begin(services, s, p)), view, [ident]), [ident], view,
                     api_name="study_start", **_near(page.instr_md))
    for side, pane in task.panes.items():
        s = side.lower()
        sent, sent_outputs = events.sending(side)
        # One event for both triggers: while it runs, a second trigger (Enter, then Send) is ignored.
        gr.on(triggers=[pane.send.click, pane.msg.submit], fn=offered(sent, sent_outputs),
              inputs=[ident, pane.msg], outputs=sent_outputs, api_name=f"study_send_{s}", trigger_mode="once",
              show_progress="hidden")
        for button, sentiment in ((pane.good, "satisfied"), (pane.bad, "frustrated")):
            rated = guarded(lambda st, p, drawn, side=side, sentiment=sentiment:
                            flow.rate(services, st, p, side, sentiment, shown=(drawn or {}).get(side)),
                            where=pane.line)
            button.click(offered(rated, view, [ident, page.drawn]), [ident, page.drawn], view,
                         api_name=f"study_{sentiment}_{s}", **_near(pane.verdict))
    submitted = [ident, task.choice, task.attention, *task.radios]
    forwarding(task.submit.click(
        offered(guarded(lambda st, p, c, a, *answers: flow.submit(services, st, p, c, a, answers), reset=True,
                        where=task.submit_line), view, submitted),
        submitted, view, api_name="study_submit", **_near(task.submit_line)))
    forwarding(gold.submit.click(
        offered(guarded(lambda st, p, a: flow.answer_gold(services, st, p, a), where=gold.line), view,
                [ident, gold.answer]),
        [ident, gold.answer], view, api_name="study_gold", **_near(gold.line)))
    retried = offered(guarded(lambda st, p: flow.retry_full(services, st, p)), view, [ident])
    page.retry.click(retried, [ident], view, api_name="study_retry", **_near(page.full_box))
