"""The Battle tab's components, part by part (its events: `webapp.ui.battle_tab`).

Each builder below makes one part of the tab in page order and returns what
the events read or redraw; `build_page` gathers them into one `BattlePage`,
whose properties name the output lists the events share.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import gradio as gr

from arena.crowd.aspects import AspectForm
from webapp.sessions import aspect_ratings
from webapp.sessions.battle import SIDES
from webapp.ui.chat_layout import CONSENT
from webapp.ui.parts import aspect_form
from webapp.ui.parts.aspect_form import AspectPanel
from webapp.ui.parts.page_script import KEEPS_DRAFT
from webapp.ui.parts.participant import ParticipantSlot
from webapp.ui.parts.render import WORKER_CHATBOT_BUTTONS, items_markdown

VOTE_LABELS = {"A": "A is better", "B": "B is better", "tie": "Tie", "both_bad": "Both are bad"}
NOT_STARTED = "_Press **New battle** to meet two anonymous systems._"
# Shown by the disabled "New battle" until the page knows its participant (a moment after it loads).
GETTING_READY = "_Getting your page ready: **New battle** is enabled in a moment._"
VOTE_LOCKED = "_The vote opens once you have rated both conversations (Satisfied or Frustrated)._"


@dataclass
class BattlePane:
    """One side's column: its conversation, message box, verdicts and aspect panel."""

    title: Any
    reveal: Any  # the system's card, shown after the vote
    chatbot: Any
    items: Any
    message: Any
    send: Any
    status: Any
    satisfied: Any
    frustrated: Any
    panel: AspectPanel

    @property
    def outputs(self) -> list[Any]:
        """What a turn on this side redraws, in the order of `battle_tab.pane_view`."""
        return [self.chatbot, self.items, self.status, self.message, self.send, self.satisfied,
                self.frustrated]


@dataclass
class BattlePage:
    """The Battle tab's components that its events read or redraw."""

    user: Any  # the participant's id (a State)
    # The battle this page shows (None: none), and whether a step found the page behind the store (that
    # battle voted, deleted or replaced elsewhere): the step after it then draws the page as stored.
    battle: Any
    behind: Any
    new: Any
    notice: Any  # the line beside "New battle"
    panes: dict[str, BattlePane]
    both_message: Any
    both_send: Any
    both_notice: Any
    vote_panel: Any
    vote_hint: Any
    comment: Any
    vote_buttons: dict[str, Any]
    result: Any

    @property
    def vote_outputs(self) -> list[Any]:
        """In the order of `battle_tab.vote_view`."""
        return [self.vote_panel, self.vote_hint, self.comment, *self.vote_buttons.values(), self.result]

    @property
    def both_outputs(self) -> list[Any]:
        return [self.both_message, self.both_send]

    @property
    def outputs(self) -> list[Any]:
        """What drawing the whole page redraws (a new battle, a reload), in the order of `whole_page`."""
        heads = [getattr(self.panes[side], part) for side in SIDES for part in ("title", "reveal")]
        out = [self.new, self.notice, *heads, *self.panes["A"].outputs, *self.panes["B"].outputs,
               *self.vote_outputs, *self.both_outputs, self.both_notice]
        for side in SIDES:
            out += self.panes[side].panel.outputs
        return out + [self.battle]

    def rate_outputs(self, side: str) -> list[Any]:
        """What a verdict on `side` redraws (and `behind`)."""
        p = self.panes[side]
        return [p.status, p.message, p.send, p.satisfied, p.frustrated, *self.vote_outputs, *p.panel.outputs,
                *self.both_outputs, self.behind]

    @property
    def send_both_outputs(self) -> list[Any]:
        """What the message to both systems redraws (without `behind`)."""
        return [*self.panes["A"].outputs, *self.panes["B"].outputs, *self.both_outputs, self.both_notice]

    @property
    def vote_result_outputs(self) -> list[Any]:
        """What a vote redraws (without `behind`): the result, both heads and every control."""
        a, b = self.panes["A"], self.panes["B"]
        out = [self.result, a.title, b.title, a.reveal, b.reveal, *self.vote_outputs[:-1]]
        for side in SIDES:
            out += self.panes[side].outputs[2:]
        # the notice line last: a vote ends the battle, so "Welcome back ..." no longer holds
        return out + self.both_outputs + [self.notice]


def build_page(participant: Optional[ParticipantSlot], form: AspectForm) -> BattlePage:
    user = participant.user if participant is not None else gr.State(None)
    battle = gr.State(None)
    behind = gr.State(False)
    _intro()
    new, notice = _new_row(ready=participant is None)
    with gr.Row(equal_height=False):
        panes = {side: _pane(side, form) for side in SIDES}
    both_message, both_send, both_notice = _both_row()
    vote_panel, vote_hint, comment, vote_buttons, result = _vote_panel()
    return BattlePage(user=user, battle=battle, behind=behind, new=new, notice=notice, panes=panes,
                      both_message=both_message, both_send=both_send, both_notice=both_notice,
                      vote_panel=vote_panel, vote_hint=vote_hint, comment=comment, vote_buttons=vote_buttons,
                      result=result)


def _intro() -> None:
    gr.Markdown(
        "Chat with two anonymous systems at the same time, end each conversation with **Satisfied** or "
        "**Frustrated**, then vote for the better one. Their names are revealed after your vote.",
    )
    gr.Markdown(f"**Before you start:** {CONSENT}", elem_id="battle-consent")


def _new_row(ready: bool) -> tuple[Any, Any]:
    """"New battle" and the line beside it. Until the page knows its participant (a moment after loading)
    the button is disabled, so a battle started at once is theirs."""
    with gr.Row(equal_height=False):
        new = gr.Button("New battle", variant="primary", interactive=ready, elem_id="battle-new", scale=0,
                        min_width=160)
        notice = gr.Markdown("" if ready else GETTING_READY, elem_id="battle-notice",
                             elem_classes=["status-line"])
    return new, notice


def _pane(side: str, form: AspectForm) -> BattlePane:
    """One side's column, in a panel of its own."""
    s = side.lower()
    with gr.Column(variant="panel", min_width=300):
        title = gr.Markdown(f"### System {side}", elem_id=f"battle-title-{s}")
        reveal = gr.Markdown("", visible=False, elem_id=f"battle-reveal-{s}", elem_classes=["battle-reveal"])
        chatbot = gr.Chatbot(label=f"System {side}", height=380, elem_id=f"battle-chat-{s}",
                             buttons=WORKER_CHATBOT_BUTTONS, elem_classes=["worker-chat"],
                             feedback_options=tuple(aspect_ratings.reply_options(form)) or None)
        items = gr.Markdown(items_markdown([]), elem_id=f"battle-items-{s}")
        message = gr.Textbox(label="Your message", placeholder=f"Message System {side}...", max_lines=4,
                             interactive=False, elem_id=f"battle-msg-{s}", elem_classes=[KEEPS_DRAFT])
        send = gr.Button("Send", interactive=False, elem_id=f"battle-send-{s}")
        status = gr.Markdown(NOT_STARTED, elem_id=f"battle-status-{s}", elem_classes=["status-line"])
        with gr.Row():
            satisfied = gr.Button("Satisfied", interactive=False, elem_id=f"battle-satisfied-{s}")
            frustrated = gr.Button("Frustrated", interactive=False, elem_id=f"battle-frustrated-{s}")
        panel = aspect_form.build_panel(form, f"battle-{s}", f"Tell us more about System {side} (optional)")
    return BattlePane(title=title, reveal=reveal, chatbot=chatbot, items=items, message=message, send=send,
                      status=status, satisfied=satisfied, frustrated=frustrated, panel=panel)


def _both_row() -> tuple[Any, Any, Any]:
    """The box that sends one message to both systems, its button and the line naming a side left out."""
    with gr.Row(equal_height=False):
        message = gr.Textbox(label="Your message to both systems", max_lines=4, interactive=False,
                             placeholder="Message System A and System B...", scale=4, min_width=220,
                             elem_id="battle-msg-both", elem_classes=[KEEPS_DRAFT])
        send = gr.Button("Send to both", interactive=False, scale=1, min_width=140,
                         elem_id="battle-send-both")
    notice = gr.Markdown("", elem_id="battle-both-status", elem_classes=["status-line"])
    return message, send, notice


def _vote_panel() -> tuple[Any, Any, Any, dict[str, Any], Any]:
    """The vote, hidden until a battle starts: its hint, the comment, the four choices and the result."""
    with gr.Column(visible=False, elem_id="battle-vote-panel") as panel:
        gr.Markdown("### Which system was better?")
        hint = gr.Markdown(VOTE_LOCKED, elem_id="battle-vote-hint")
        comment = gr.Textbox(label="Optional comment", max_lines=3, interactive=False,
                             elem_id="battle-vote-comment")
        with gr.Row():
            buttons = {
                choice: gr.Button(label, interactive=False,
                                  elem_id=f"battle-vote-{choice.replace('_', '-').lower()}")
                for choice, label in VOTE_LABELS.items()
            }
        result = gr.Markdown("", elem_id="battle-result", elem_classes=["status-line"])
    return panel, hint, comment, buttons, result
