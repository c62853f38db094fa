"""The Chat tab's components, part by part (its events: `webapp.ui.chat_tab`).

Each builder below makes one part of the tab in page order and returns what
the events read or redraw; `build_page` gathers them into one `ChatPage`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import gradio as gr

from arena.crowd.aspects import AspectForm
from webapp.services import Services
from webapp.sessions import aspect_ratings
from webapp.sessions.chat import system_choices
from webapp.ui.parts import aspect_form
from webapp.ui.parts.aspect_form import AspectPanel
from webapp.ui.parts.page_script import KEEPS_DRAFT
from webapp.ui.parts.participant import ParticipantSlot
from webapp.ui.parts.render import WORKER_CHATBOT_BUTTONS, items_markdown
from webapp.ui.parts.score_words import NOT_FINISHED

CONSENT = (
    "By chatting you agree that the conversation and your feedback are stored and published as an open "
    "dataset under CC BY 4.0. Please do not share any personal information."
)
NO_SYSTEMS = "No system is available right now; please come back a little later."


@dataclass
class ChatPage:
    """The Chat tab's components that its events read or redraw."""

    user: Any  # the participant's id (a State)
    dialogue: Any  # the conversation shown (a State holding a Dialogue)
    system: Any
    new: Any
    chatbot: Any
    message: Any
    send: Any
    status: Any  # the status line under the message box
    message_id: Any  # hidden: the name an API client may give its message
    items: Any
    comment: Any
    satisfied: Any
    frustrated: Any
    panel: AspectPanel
    refresh_scores: Any
    scores: Any
    core_plot: Any
    leave: Any  # hidden: the page's answer to "leave the conversation under way?"

    @property
    def outputs(self) -> list[Any]:
        """What every turn redraws, in the order of `ChatEvents.view`."""
        return [self.dialogue, self.chatbot, self.items, self.status, self.message, self.send, self.satisfied,
                self.frustrated]

    @property
    def new_outputs(self) -> list[Any]:
        """What a new conversation redraws: the turn's outputs, the comment, the scores and the panel."""
        return self.outputs + [self.comment, self.scores, self.core_plot, *self.panel.outputs]

    @property
    def feedback_outputs(self) -> list[Any]:
        return self.outputs + [self.comment, self.scores, *self.panel.outputs]


def build_page(services: Services, participant: Optional[ParticipantSlot], form: AspectForm) -> ChatPage:
    user = participant.user if participant is not None else gr.State(None)
    dialogue = gr.State(None)
    gr.Markdown(f"Chat with one system about movies. {CONSENT}")
    # Usable once the page knows its participant (a moment after loading), so what is said is theirs.
    ready = participant is None
    system, new = _system_row(services, ready)
    chatbot, message, send, status, message_id, items = _conversation(form, ready)
    comment, satisfied, frustrated = _rating_controls()
    panel = aspect_form.build_panel(form, "chat")
    refresh_scores, scores, core_plot = _scores_box(services)
    leave = gr.Checkbox(value=True, visible=False)
    return ChatPage(user=user, dialogue=dialogue, system=system, new=new, chatbot=chatbot, message=message,
                    send=send, status=status, message_id=message_id, items=items, comment=comment,
                    satisfied=satisfied, frustrated=frustrated, panel=panel, refresh_scores=refresh_scores,
                    scores=scores, core_plot=core_plot, leave=leave)


def _system_row(services: Services, ready: bool) -> tuple[Any, Any]:
    """The system dropdown and "New conversation" (and a line when no system is offered)."""
    choices = system_choices(services)
    with gr.Row(equal_height=True):
        system = gr.Dropdown(choices=choices, value=choices[0][1] if choices else None, label="System",
                             scale=3, min_width=200, interactive=ready, elem_id="chat-system")
        new = gr.Button("New conversation", scale=1, min_width=160, interactive=ready, elem_id="chat-new")
    if not choices:
        gr.Markdown(NO_SYSTEMS, elem_id="chat-no-systems")
    return system, new


def _conversation(form: AspectForm, ready: bool) -> tuple[Any, ...]:
    """The conversation with its message box, Send and status line; beside it, the items recommended."""
    with gr.Row(equal_height=False):
        with gr.Column(scale=3, min_width=300):
            chatbot = gr.Chatbot(label="Conversation", height=420, elem_id="chat-chatbot",
                                 buttons=WORKER_CHATBOT_BUTTONS, elem_classes=["worker-chat"],
                                 feedback_options=tuple(aspect_ratings.reply_options(form)) or None)
            message = gr.Textbox(label="Your message",
                                 placeholder="Tell the system what you feel like watching...", max_lines=6,
                                 interactive=ready, elem_id="chat-msg",
                                 elem_classes=[KEEPS_DRAFT])  # unsent text survives a reload
            send = gr.Button("Send", variant="primary", interactive=ready, elem_id="chat-send")
            status = gr.Markdown("", elem_id="chat-status", elem_classes=["status-line"])
            # API clients may name a message: a repeat of the same id stores nothing
            # (webapp.sessions.idempotent_sends)
            message_id = gr.Textbox(value="", visible=False)
        with gr.Column(scale=2, min_width=200):
            items = gr.Markdown(items_markdown([]), elem_id="chat-items")
    return chatbot, message, send, status, message_id, items


def _rating_controls() -> tuple[Any, Any, Any]:
    """The comment on the whole conversation and the two verdicts (enabled once a reply came)."""
    comment = gr.Textbox(label="Optional comment on the whole conversation", max_lines=3,
                         elem_id="chat-comment")
    with gr.Row():
        satisfied = gr.Button("Satisfied", variant="secondary", min_width=120, interactive=False,
                              elem_id="chat-satisfied")
        frustrated = gr.Button("Frustrated", variant="secondary", min_width=120, interactive=False,
                               elem_id="chat-frustrated")
    return comment, satisfied, frustrated


def _scores_box(services: Services) -> tuple[Any, Any, Any]:
    """The participant's own scores for a rated conversation (shown when the settings allow)."""
    with gr.Accordion("Your conversation's scores", open=False, visible=services.settings.show_scores,
                      elem_id="chat-scores-box"):
        refresh_scores = gr.Button("Refresh scores", size="sm", elem_id="chat-scores-refresh")
        scores = gr.Markdown(NOT_FINISHED, elem_id="chat-scores")
        core_plot = gr.Plot(label="How an AI panel judged it", visible=False, elem_id="chat-core-plot")
    return refresh_scores, scores, core_plot
