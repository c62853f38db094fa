"""The study page's components, one builder per step a worker sees (its events: `webapp.ui.study_page`).

Every step is a hidden column that `study_page.draw` shows when the worker's
row is at that step; the builders run in page order and `build_page` gathers
what they return into one `StudyPage`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import gradio as gr

from arena.crowd.aspects import AspectForm
from webapp.sessions import study as flow
from webapp.ui.parts.page_script import KEEPS_DRAFT
from webapp.ui.parts.render import WORKER_CHATBOT_BUTTONS, items_markdown

TITLE = "CRS Arena study"
SIDES = ("A", "B")


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


class TaskStep(NamedTuple):
    """The task view: its heading, a pane per side, the battle's choice, the optional aspects, the
    instructed attention check and Submit."""
    box: Any
    head: Any
    panes: dict[str, Pane]
    choice: Any
    aspects_box: Any
    radios: list[Any]
    attention: Any
    submit: Any
    submit_line: Any


class GoldStep(NamedTuple):
    """The attention check shown as a step of its own (a question with a known answer)."""
    box: Any
    text: Any
    answer: Any
    submit: Any
    line: Any


@dataclass
class StudyPage:
    """The study page's components that its events read or redraw."""

    ident: Any  # (study id, pseudonym) in a server-side State
    # Each conversation as the page last drew it: a verdict from a page the store has moved on from
    # (a verdict or a turn given in another tab, served by another app process) is refused, not stored.
    drawn: Any
    title: Any
    status: Any  # the page's own status line, above every step
    # For clients without a browser (and tests): the link's parameters as values.
    link_study: Any
    link_worker: Any
    link_browser: Any  # this browser's token (BROWSER_TOKEN_JS), binds a worker id
    consent_box: Any
    consent_md: Any
    agree: Any
    instr_box: Any
    instr_md: Any
    start: Any
    task: TaskStep
    gold: GoldStep
    full_box: Any
    full_md: Any
    retry: Any
    done_md: Any
    # The address a finished worker is forwarded to (`Study.completion_url`, an http(s) address checked
    # when the file was saved); a script chained after each event follows it.
    forward: Any
    enter: Any  # hidden: entering with the link's parameters as values (`link_study`, `link_worker`)

    @property
    def view(self) -> list[Any]:
        """Every component a redraw updates, in the order `draw` returns them."""
        task, gold = self.task, self.gold
        pane_parts = [c for pane in task.panes.values()
                      for c in (pane.column, pane.chat, pane.items, pane.send, pane.line, pane.verdict)]
        return [self.ident, self.drawn, self.title, self.status, self.consent_box, self.consent_md,
                self.instr_box, self.instr_md, task.box, task.head, *pane_parts, task.choice, task.attention,
                task.aspects_box, *task.radios, task.submit_line, gold.box, gold.text, gold.answer, gold.line,
                self.full_box, self.full_md, self.retry, self.done_md, self.forward]

    @property
    def lines(self) -> list[Any]:
        """The status lines: a message shows in the one next to the control that was used."""
        panes = self.task.panes.values()
        return [self.status, self.task.submit_line, self.gold.line, *[pane.line for pane in panes]]


def build_page(form: AspectForm) -> StudyPage:
    """The page's components in page order (inside the page's Blocks)."""
    ident = gr.State(None)
    drawn = gr.State({})
    title = gr.Markdown(f"# {TITLE}", elem_id="study-title")
    status = gr.Markdown("", elem_id="study-notice", elem_classes=["status-line"])
    link_study = gr.Textbox(visible=False)
    link_worker = gr.Textbox(visible=False)
    link_browser = gr.Textbox(visible=False)
    consent_box, consent_md, agree = _text_step("study-consent", "I agree and want to take part",
                                                "study-agree")
    instr_box, instr_md, start = _text_step("study-instructions", "Start the first task", "study-start")
    task = _task_step(form)
    gold = _gold_step()
    with gr.Column(visible=False, elem_id="study-full") as full_box:
        full_md = gr.Markdown(elem_id="study-full-notice")
        retry = gr.Button("Try again", elem_id="study-retry")
    done_md = gr.Markdown(visible=False, elem_id="study-done")
    forward = gr.Textbox(visible=False, elem_id="study-forward")
    enter = gr.Button(visible=False)
    return StudyPage(ident=ident, drawn=drawn, title=title, status=status, link_study=link_study,
                     link_worker=link_worker, link_browser=link_browser, consent_box=consent_box,
                     consent_md=consent_md, agree=agree, instr_box=instr_box, instr_md=instr_md, start=start,
                     task=task, gold=gold, full_box=full_box, full_md=full_md, retry=retry, done_md=done_md,
                     forward=forward, enter=enter)


def _text_step(elem_id: str, button_label: str, button_id: str) -> tuple[Any, Any, Any]:
    """A step that is the study's text and one button (the consent, the instructions)."""
    with gr.Column(visible=False, elem_id=elem_id) as box:
        text = gr.Markdown()
        button = gr.Button(button_label, variant="primary", elem_id=button_id)
    return box, text, button


def _task_step(form: AspectForm) -> TaskStep:
    with gr.Column(visible=False, elem_id="study-task") as box:
        head = gr.Markdown(elem_id="study-task-head")
        with gr.Row(equal_height=False):
            panes = {side: _pane(side) for side in SIDES}
        choice = gr.Radio([(v, k) for k, v in flow.VOTE_CHOICES.items()], label="Which system was better?",
                          visible=False, elem_id="study-choice")
        with gr.Column(visible=False, elem_id="study-aspects") as aspects_box:
            gr.Markdown("**Tell us more (optional).** Answer any of these, or leave them open.")
            radios = [gr.Radio([(f"{v}" + (f" {a.points[v]}" if v in a.points else ""), v)
                                for v in a.scale()], value=None, label=f"{a.label} ({a.scale_text()})",
                               info=a.definition, elem_id=f"study-aspect-{a.name}") for a in form.dialogue]
        attention = gr.Radio([], label="", visible=False, elem_id="study-attention")
        submit = gr.Button("Submit this task", variant="primary", elem_id="study-submit")
        submit_line = gr.Markdown("", elem_id="study-submit-status", elem_classes=["status-line"])
    return TaskStep(box, head, panes, choice, aspects_box, radios, attention, submit, submit_line)


def _pane(side: str) -> Pane:
    """One system's conversation in the task view (only A is shown unless the study is a battle)."""
    s = side.lower()
    with gr.Column(visible=side == "A", variant="panel", min_width=300, elem_id=f"study-pane-{s}") as column:
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
    return Pane(column, chat, items, msg, send, line, good, bad, verdict)


def _gold_step() -> GoldStep:
    with gr.Column(visible=False, elem_id="study-gold") as box:
        text = gr.Markdown()
        answer = gr.Radio([], label="", elem_id="study-gold-answer")
        submit = gr.Button("Submit", variant="primary", elem_id="study-gold-submit")
        line = gr.Markdown("", elem_id="study-gold-status", elem_classes=["status-line"])
    return GoldStep(box, text, answer, submit, line)
