"""Chat tab: one named system, one person, one conversation at a time (its rules: `webapp.sessions.chat`).

Per-session state lives in `gr.State` (the current Dialogue); the store keeps
every turn as it happens, and the participant's conversation under way is
found again after a reload (the turn guard's memory, else the store). A
message shows the moment it is sent, with a typing indicator until the reply.
Refusals (an empty message, feedback twice, the limit) are a line in the
status line under the input, never an error toast; a conversation that
reached its limit waits to be rated and never silently becomes a new one.
While a conversation is under way (a message sent, not rated yet), "New
conversation", another system in the dropdown and leaving the page ask first
(`webapp.ui.parts.under_way`); what is typed and not sent survives a reload, and stays in its box
whenever the message is refused or the conversation changed elsewhere.
"""

from __future__ import annotations

from typing import Any, Iterator, Optional

import gradio as gr

from arena.dialogue import Dialogue
from webapp.services import Services
from webapp.sessions.chat import check_send, give_feedback, resumable, send_message, start_conversation, system_choices
from webapp.sessions import aspect_ratings
from webapp.ui.parts import aspect_form
from webapp.ui.parts.participant import ParticipantSlot, user_of
from webapp.sessions.refusal import Refusal
from webapp.sessions.warming import warming_line
from webapp.ui.parts.refusal import notice
from webapp.ui.parts import under_way
from webapp.ui.parts.page_script import KEEPS_DRAFT, name_message_js
from webapp.ui.parts.render import (
    WORKER_CHATBOT_BUTTONS, chat_messages, echo_messages, items_markdown, latest_items,
)
from webapp.sessions.turn_step import CHANGED_ELSEWHERE, limit_status
from webapp.ui.parts.score_words import NOT_FINISHED, PENDING, plain_scores
from webapp.ui.parts.scorecard import factor_figure

CONSENT = (
    "By chatting you agree that the conversation and your feedback are stored and published as an open "
    "dataset under CC BY 4.0. Please do not share any personal information."
)
NO_SYSTEMS = "No system is available right now; please come back a little later."


def build(services: Services, participant: Optional[ParticipantSlot] = None) -> None:
    user_state = participant.user if participant is not None else gr.State(None)
    choices = system_choices(services)
    form = aspect_ratings.form_for(services)
    dialogue_state = gr.State(None)
    gr.Markdown(f"Chat with one system about movies. {CONSENT}")
    with gr.Row(equal_height=True):
        # Usable once the page knows its participant (a moment after loading), so what is said is theirs.
        ready = participant is None
        crs_choice = gr.Dropdown(choices=choices, value=choices[0][1] if choices else None, label="System",
                                 scale=3, min_width=200, interactive=ready, elem_id="chat-system")
        new_button = gr.Button("New conversation", scale=1, min_width=160, interactive=ready, elem_id="chat-new")
    if not choices:
        gr.Markdown(NO_SYSTEMS, elem_id="chat-no-systems")
    with gr.Row(equal_height=False):
        with gr.Column(scale=3, min_width=300):
            chatbot = gr.Chatbot(label="Conversation", height=420, elem_id="chat-chatbot",
                                 buttons=WORKER_CHATBOT_BUTTONS, elem_classes=["worker-chat"],
                                 feedback_options=tuple(aspect_ratings.reply_options(form)) or None)
            message = gr.Textbox(label="Your message", placeholder="Tell the system what you feel like watching...",
                                 max_lines=6, interactive=ready, elem_id="chat-msg",
                                 elem_classes=[KEEPS_DRAFT])  # unsent text survives a reload
            send_button = gr.Button("Send", variant="primary", interactive=ready, elem_id="chat-send")
            status = gr.Markdown("", elem_id="chat-status", elem_classes=["status-line"])
            # API clients may name a message: a repeat of the same id stores nothing (webapp.sessions.idempotent_sends)
            message_id = gr.Textbox(value="", visible=False)
        with gr.Column(scale=2, min_width=200):
            items_box = gr.Markdown(items_markdown([]), elem_id="chat-items")
    comment = gr.Textbox(label="Optional comment on the whole conversation", max_lines=3, elem_id="chat-comment")
    with gr.Row():
        satisfied = gr.Button("Satisfied", variant="secondary", min_width=120, interactive=False,
                              elem_id="chat-satisfied")
        frustrated = gr.Button("Frustrated", variant="secondary", min_width=120, interactive=False,
                               elem_id="chat-frustrated")
    panel = aspect_form.build_panel(form, "chat")
    with gr.Accordion("Your conversation's scores", open=False, visible=services.settings.show_scores,
                      elem_id="chat-scores-box"):
        refresh_scores = gr.Button("Refresh scores", size="sm", elem_id="chat-scores-refresh")
        scores_box = gr.Markdown(NOT_FINISHED, elem_id="chat-scores")
        core_plot = gr.Plot(label="How an AI panel judged it", visible=False, elem_id="chat-core-plot")

    def view(dialogue: Optional[Dialogue], status_text: Any, message_value: Optional[str] = "",
             busy: bool = False) -> tuple[Any, ...]:
        """Updates for (state, chatbot, items, status, message, send, satisfied, frustrated);
        `message_value` None keeps what is typed in the box."""
        open_ = dialogue is None or (dialogue.feedback is None and not dialogue.ended)
        can_send = open_ and not busy and (dialogue is None or dialogue.num_turns < services.settings.max_turns)
        can_rate = (dialogue is not None and dialogue.feedback is None and bool(dialogue.agent_turns())
                    and not busy)
        mark = busy or under_way.chat_under_way(dialogue)  # busy: a message just sent
        box = (under_way.message_box(mark, interactive=can_send) if message_value is None
               else under_way.message_box(mark, value=message_value, interactive=can_send))
        return (dialogue, chat_messages(dialogue), items_markdown(latest_items(dialogue)), status_text, box,
                gr.Button(interactive=can_send), gr.Button(interactive=can_rate), gr.Button(interactive=can_rate))

    def skips(n: int) -> tuple[Any, ...]:
        return tuple(gr.skip() for _ in range(n))

    guard = services.turn_guard
    outputs = [dialogue_state, chatbot, items_box, status, message, send_button, satisfied, frustrated]
    new_outputs = outputs + [comment, scores_box, core_plot, *panel.outputs]

    def on_new(crs_name: str, participant_id: Optional[str], request: gr.Request) -> tuple[Any, ...]:
        user = user_of(services, participant_id, request)
        try:
            dialogue, text = start_conversation(services, crs_name, user)
        except Refusal as exc:
            return (*skips(3), notice(exc), *skips(len(new_outputs) - 4))
        with guard.step(user) as step:
            step.remember(dialogue)
        return (*view(dialogue, text), "", NOT_FINISHED, gr.Plot(value=None, visible=False), *panel.hide())

    def on_resume(participant_id: Optional[str], request: gr.Request) -> tuple[Any, ...]:
        """Once the page knows its participant: their conversation under way, if any, and the controls."""
        dialogue = resumable(services, user_of(services, participant_id, request))
        if dialogue is None:  # a fresh page: only what was waiting for the participant is enabled
            return (gr.Dropdown(interactive=True), gr.Button(interactive=True), gr.skip(), gr.skip(), gr.skip(),
                    gr.skip(), *view(None, gr.skip(), message_value=None)[4:], *skips(len(new_outputs) - 8))
        note = "Welcome back: your conversation continues where you left it."
        if dialogue.ended:
            note = limit_status(dialogue, services.settings.max_turns)
        offered = dialogue.crs_id in services.registry.available()
        choice = gr.Dropdown(value=dialogue.crs_id, interactive=True) if offered else gr.Dropdown(interactive=True)
        return (choice, gr.Button(interactive=True), *view(dialogue, note, message_value=None), gr.skip(),
                NOT_FINISHED, gr.Plot(value=None, visible=False), *panel.hide())

    def on_redraw(participant_id: Optional[str], request: gr.Request) -> tuple[Any, ...]:
        """After the participant's data changed (deleted): the tab as their conversation now stands."""
        dialogue = resumable(services, user_of(services, participant_id, request))
        return (gr.skip(), gr.skip(), *view(dialogue, ""), "", NOT_FINISHED, gr.Plot(value=None, visible=False),
                *panel.hide())

    def on_send(text: str, dialogue: Optional[Dialogue], crs_name: str, message_id: Optional[str],
                participant_id: Optional[str], request: gr.Request) -> Iterator[tuple[Any, ...]]:
        user = user_of(services, participant_id, request)
        started = ""
        try:
            if dialogue is None:
                dialogue = resumable(services, user)
            check_send(services, dialogue, text)
            if dialogue is None:  # the first message starts a conversation with the chosen system
                dialogue, started = start_conversation(services, crs_name, user)
                with guard.step(user) as step:
                    step.remember(dialogue)
        except Refusal as exc:  # the message stays in its box, to be fixed and sent again
            yield (*skips(3), notice(exc), *skips(4))
            return
        yield (dialogue, echo_messages(dialogue, text), gr.skip(), started,
               *view(dialogue, "", busy=True)[4:])
        warming = warming_line(services, dialogue.crs_id)  # the reply follows once the model has loaded
        if warming:
            yield (*skips(3), " ".join(part for part in (started, warming) if part), *skips(4))
        try:
            dialogue, status_text = send_message(services, dialogue, text, session_key=user, message_id=message_id)
        except Refusal as exc:
            yield view(dialogue, notice(exc), message_value=text)
            return
        if status_text == CHANGED_ELSEWHERE:  # the conversation as stored; the message was not sent
            yield view(dialogue, status_text, message_value=text)
            return
        yield view(dialogue, " ".join(part for part in (started, status_text) if part))

    def on_feedback(sentiment: str):
        def handler(comment_text: str, dialogue: Optional[Dialogue], participant_id: Optional[str],
                    request: gr.Request) -> tuple[Any, ...]:
            try:
                dialogue, text = give_feedback(services, dialogue, sentiment, comment_text or "",
                                               session_key=user_of(services, participant_id, request), request=request)
            except Refusal as exc:  # the comment stays in its box
                return (*skips(3), notice(exc), *skips(len(outputs) - 4 + 2 + len(panel.outputs)))
            if text == CHANGED_ELSEWHERE:  # the conversation as stored; nothing was rated
                return (*view(dialogue, text), gr.skip(), NOT_FINISHED, *panel.hide())
            return (*view(dialogue, text), "", PENDING, *panel.show())

        return handler

    def on_refresh(dialogue: Optional[Dialogue]) -> tuple[Any, ...]:
        stored = services.store.get_dialogue(dialogue.dialogue_id) if dialogue is not None else None
        if stored is None or stored.feedback is None:
            return NOT_FINISHED, gr.Plot(value=None, visible=False)
        core = {k: v for k, v in stored.scores.items() if k.startswith("core.") and v.value is not None}
        figure = factor_figure(stored.scores, title="How an AI panel judged it") if core else None
        return plain_scores(stored), gr.Plot(value=figure, visible=figure is not None)

    def on_switch(crs_name: str, leave: bool, dialogue: Optional[Dialogue], participant_id: Optional[str],
                  request: gr.Request) -> tuple[Any, ...]:
        """Another system picked: a new conversation with it, unless the participant chose to stay in the one
        under way (the dropdown then shows its system again)."""
        if not leave:
            back = dialogue is not None and dialogue.crs_id in services.registry.available()
            return (gr.Dropdown(value=dialogue.crs_id) if back else gr.skip(), *skips(len(new_outputs)))
        return (gr.skip(), *on_new(crs_name, participant_id, request))

    new_button.click(on_new, [crs_choice, user_state], new_outputs, api_name="chat_start")
    # Choosing another system (the person's own choice, not a resumed conversation) starts afresh, once the
    # page asked whether to leave a conversation under way (its answer fills `leave`).
    leave = gr.Checkbox(value=True, visible=False)
    crs_choice.input(on_switch, [crs_choice, leave, dialogue_state, user_state], [crs_choice, *new_outputs],
                     js=under_way.leave_js(["chat-msg"], 1), trigger_mode="once", api_visibility="private")
    if participant is not None:
        participant.after_identify(on_resume, [participant.user], [crs_choice, new_button, *new_outputs],
                                   redraw=on_redraw, busy_line=status)
    # One event for both triggers: while it runs, a second trigger (Enter, then Send) is ignored.
    # The page names each message it sends (an API client may name its own): the first message of a
    # conversation claims its start under that name (webapp.sessions.first_message).
    gr.on(triggers=[send_button.click, message.submit], fn=on_send,
          inputs=[message, dialogue_state, crs_choice, message_id, user_state], outputs=outputs,
          js=name_message_js(3), api_name="chat_send", trigger_mode="once", show_progress="hidden")
    feedback_outputs = outputs + [comment, scores_box, *panel.outputs]
    satisfied.click(on_feedback("satisfied"), [comment, dialogue_state, user_state], feedback_outputs,
                    api_name="chat_satisfied")
    frustrated.click(on_feedback("frustrated"), [comment, dialogue_state, user_state], feedback_outputs,
                     api_name="chat_frustrated")

    def on_aspects(dialogue: Optional[Dialogue], *answers: Any) -> tuple[Any, ...]:
        rater = dialogue.user.id if dialogue is not None else "anonymous"
        try:
            saved = aspect_ratings.rate_dialogue(services, dialogue, answers, rater)
        except Refusal as exc:  # the answers stay picked
            return panel.keep(notice(exc))
        return panel.hide(saved)

    panel.save.click(on_aspects, [dialogue_state, *panel.inputs], panel.outputs, api_name="chat_aspects")
    panel.skip.click(lambda: panel.hide(aspect_ratings.SKIPPED), None, panel.outputs, api_visibility="private")

    def on_reply_rating(dialogue: Optional[Dialogue], data: gr.LikeData) -> str:
        rater = dialogue.user.id if dialogue is not None else "anonymous"
        try:
            return aspect_ratings.rate_reply(services, dialogue, data.index, data.liked, rater)
        except Refusal as exc:  # a full store
            return notice(exc)

    if form.utterance:
        chatbot.like(on_reply_rating, [dialogue_state], [status], api_visibility="private")
    refresh_scores.click(on_refresh, [dialogue_state], [scores_box, core_plot], api_name="chat_scores")
