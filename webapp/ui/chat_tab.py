"""Chat tab: one named system, one person, one conversation at a time.

Per-session state lives in `gr.State` (the current Dialogue); the store keeps
every turn as it happens so nothing is lost if the page is closed.
"""

from __future__ import annotations

import logging
from typing import Any, Optional

import gradio as gr

from arena.dialogue import Dialogue, UserInfo, UserKind
from arena.runner import DialogueEnded, MessageRejected, finish_dialogue
from arena.crs_interface import CRSUnavailable
from webapp.idempotent_sends import BadMessageId, already_sent, clean_message_id, forget_sent, remember_sent
from webapp.label_limits import admit_label
from webapp.services import Services
from webapp.session_identity import server_session_id
from webapp.vote_limits import LimitReached
from webapp.ui import aspect_form
from webapp.ui.render import chat_messages, escape_text, items_markdown, latest_items, scores_markdown
from webapp.ui.scorecard import core_scorecard
from webapp.ui.turn_guard import guard_for, repeats_last_message
from webapp.ui.refusal import refuse

log = logging.getLogger(__name__)

CONSENT = (
    "By chatting you agree that the conversation and your feedback are stored and published as an open "
    "dataset under CC BY 4.0. Please do not share any personal information."
)


def session_user_id(request: Optional[gr.Request]) -> str:
    session = server_session_id(request)
    return f"session-{session}" if session else "anonymous"


def session_key(request: Optional[gr.Request]) -> Optional[str]:
    """The browser session's own key (issued by the server), or None when the request carries none."""
    session = server_session_id(request)
    return f"session-{session}" if session else None


def system_choices(services: Services) -> list[str]:
    return services.registry.available()


def systems_status_markdown(services: Services) -> str:
    rows = services.registry.status_table()
    lines = ["| system | status | why | how to fix |", "|---|---|---|---|"]
    for row in rows:
        fix = f"`{row['fix']}`" if row["fix"] else ""
        lines.append(
            f"| {escape_text(row['system'])} | {row['status']} | {escape_text(row['why'])} | {fix} |"
        )
    return "\n".join(lines)


def start_conversation(services: Services, crs_name: str, request: Optional[gr.Request]) -> tuple[Dialogue, str]:
    if not crs_name:
        raise refuse("Please choose a system first.")
    problem = services.registry.problem(crs_name)
    if problem is not None:
        raise refuse(str(problem))
    dialogue = Dialogue(
        crs_id=crs_name,
        user=UserInfo(kind=UserKind.HUMAN, id=session_user_id(request)),
        metadata={"source": "chat"},
    )
    return dialogue, f"New conversation with **{escape_text(crs_name)}**. {CONSENT}"


def send_message(
    services: Services, dialogue: Optional[Dialogue], text: str, session_key: Optional[str] = None,
    message_id: Optional[str] = None,
) -> tuple[Dialogue, str]:
    """Run one turn; returns the dialogue and a status line. Raises gr.Error for refusals.

    Steps of one session (`session_key`, else the dialogue) run one at a time;
    a second copy of the message being answered (Enter, then Send) adds nothing.
    """
    if dialogue is None and session_key is None:
        raise refuse("Start a conversation first.")
    try:
        message_id = clean_message_id(message_id)
    except BadMessageId as exc:
        raise refuse(str(exc)) from None
    key = session_key or dialogue.dialogue_id
    with guard_for(services.extras).step(key, text) as step:
        if dialogue is None or (step.latest is not None and step.latest.dialogue_id == dialogue.dialogue_id):
            # The page may still hold the state from before an event that ran first.
            dialogue = step.latest or dialogue
        if dialogue is None:
            raise refuse("Start a conversation first.")
        if step.duplicate or repeats_last_message(dialogue, text) or already_sent(dialogue, message_id):
            return dialogue, ""
        remember_sent(dialogue, message_id)  # stored with the turn (webapp.idempotent_sends)
        try:
            status = _run_turn(services, dialogue, text)
        except gr.Error:
            forget_sent(dialogue, message_id)
            raise
        step.remember(dialogue)
    return dialogue, status


def _run_turn(services: Services, dialogue: Dialogue, text: str) -> str:
    try:
        runner = services.runner_for(dialogue.crs_id)
    except CRSUnavailable as exc:
        raise refuse(str(exc)) from None
    try:
        reply = runner.user_turn(dialogue, text)
    except (MessageRejected, DialogueEnded) as exc:
        raise refuse(str(exc)) from None
    services.store.save_dialogue(dialogue)
    status = ""
    if reply.error:
        status = "The system had a problem with that turn; it has been recorded."
    if dialogue.ended:
        services.dialogue_finished(dialogue)
        status = (
            f"This conversation reached its limit of {services.settings.max_turns} turns. "
            "Please tell us whether you were satisfied or frustrated."
        )
    return status


def give_feedback(
    services: Services, dialogue: Optional[Dialogue], sentiment: str, comment: str,
    session_key: Optional[str] = None, request: Any = None,
) -> tuple[Dialogue, str]:
    if dialogue is None or not dialogue.utterances:
        raise refuse("Chat with the system before giving feedback.")
    # Waits for a reply still being written, so the feedback is stored after it.
    with guard_for(services.extras).step(session_key or dialogue.dialogue_id) as step:
        if dialogue.feedback is not None:
            raise refuse("Feedback for this conversation was already recorded. Start a new one.")
        try:  # labels are limited and flagged like votes (webapp.label_limits)
            admit_label(services, dialogue, request=request)
        except LimitReached as exc:
            raise refuse(str(exc)) from None
        finish_dialogue(dialogue, sentiment, comment[: services.settings.max_message_chars])
        services.dialogue_finished(dialogue)
        step.remember(dialogue)
    return dialogue, f"Thank you! Your feedback (**{sentiment}**) was saved. Start a new conversation any time."


def build(services: Services) -> None:
    choices = system_choices(services)
    form = aspect_form.form_for(services)
    dialogue_state = gr.State(None)
    gr.Markdown(f"Chat with one system about movies. {CONSENT}")
    with gr.Row():
        crs_choice = gr.Dropdown(
            choices=choices, value=choices[0] if choices else None, label="System", scale=3
        )
        new_button = gr.Button("New conversation", scale=1)
    with gr.Accordion("Systems and their status", open=not choices):
        gr.Markdown(systems_status_markdown(services))
    with gr.Row():
        with gr.Column(scale=3):
            chatbot = gr.Chatbot(label="Conversation", height=420, elem_id="chat-chatbot",
                                 feedback_options=tuple(aspect_form.reply_options(form)) or None)
            message = gr.Textbox(
                label="Your message",
                placeholder="Tell the system what you feel like watching...",
                max_lines=6,
            )
            send_button = gr.Button("Send", variant="primary")
            message_id = gr.Textbox(value="", visible=False)  # API clients may name a message: a repeat stores nothing
        with gr.Column(scale=2):
            items_box = gr.Markdown(items_markdown([]))
    status = gr.Markdown("")
    with gr.Row():
        comment = gr.Textbox(label="Optional comment", max_lines=3, scale=3)
        satisfied = gr.Button("Satisfied", variant="secondary", scale=1)
        frustrated = gr.Button("Frustrated", variant="stop", scale=1)
    panel = aspect_form.build_panel(form, "chat")
    with gr.Accordion("Automatic scores", open=False):
        refresh_scores = gr.Button("Refresh scores")
        scores_box = gr.Markdown("")
        core_plot = gr.Plot(label="CoRE factors")
        core_card = gr.Markdown("")

    def view(dialogue: Optional[Dialogue], status_text: str) -> tuple[Any, ...]:
        return dialogue, chat_messages(dialogue), items_markdown(latest_items(dialogue)), status_text

    guard = guard_for(services.extras)

    def on_new(crs_name: str, request: gr.Request) -> tuple[Any, ...]:
        dialogue, text = start_conversation(services, crs_name, request)
        key = session_key(request)
        if key is not None:
            with guard.step(key) as step:
                step.remember(dialogue)
        return (*view(dialogue, text), "", "", *panel.hide())

    def on_send(text: str, dialogue: Optional[Dialogue], crs_name: str, message_id: str,
                request: gr.Request) -> tuple[Any, ...]:
        key = session_key(request)
        if key is None:
            if dialogue is None or dialogue.ended:
                dialogue, _ = start_conversation(services, crs_name, request)
        else:
            with guard.step(key) as step:  # a fresh conversation, unless a concurrent send just made one
                latest = step.latest
                if latest is not None and not latest.ended and (dialogue is None or dialogue.ended):
                    dialogue = latest
                if dialogue is None or dialogue.ended:
                    dialogue, _ = start_conversation(services, crs_name, request)
                    step.remember(dialogue)
        dialogue, status_text = send_message(services, dialogue, text, session_key=key, message_id=message_id)
        return (*view(dialogue, status_text), "")

    def on_feedback(sentiment: str):
        def handler(comment_text: str, dialogue: Optional[Dialogue], request: gr.Request) -> tuple[Any, ...]:
            dialogue, text = give_feedback(services, dialogue, sentiment, comment_text or "",
                                           session_key=session_key(request), request=request)
            return (*view(dialogue, text), "", *panel.show())

        return handler

    def on_refresh(dialogue: Optional[Dialogue]) -> tuple[Any, ...]:
        stored = services.store.get_dialogue(dialogue.dialogue_id) if dialogue is not None else None
        if stored is None:
            return "_No stored conversation yet._", None, ""
        figure, card = None, ""
        if any(name.startswith("core.") for name in stored.scores):
            figure, card = core_scorecard(stored)
        return scores_markdown(stored), figure, card

    outputs = [dialogue_state, chatbot, items_box, status]
    new_outputs = outputs + [message, scores_box, *panel.outputs]
    new_button.click(on_new, [crs_choice], new_outputs, api_name="chat_start")
    # Switching systems starts a fresh conversation with the newly chosen one.
    crs_choice.change(on_new, [crs_choice], new_outputs, api_visibility="private")
    # One event for both triggers: while it runs, a second trigger (Enter, then Send) is ignored.
    gr.on(triggers=[send_button.click, message.submit], fn=on_send,
          inputs=[message, dialogue_state, crs_choice, message_id], outputs=outputs + [message],
          api_name="chat_send", trigger_mode="once")
    satisfied.click(
        on_feedback("satisfied"), [comment, dialogue_state], outputs + [comment, *panel.outputs],
        api_name="chat_satisfied",
    )
    frustrated.click(
        on_feedback("frustrated"), [comment, dialogue_state], outputs + [comment, *panel.outputs],
        api_name="chat_frustrated",
    )

    def on_aspects(dialogue: Optional[Dialogue], *answers: Any) -> tuple[Any, ...]:
        rater = dialogue.user.id if dialogue is not None else "anonymous"
        return panel.hide(aspect_form.rate_dialogue(services, dialogue, answers, rater))

    panel.save.click(on_aspects, [dialogue_state, *panel.inputs], panel.outputs, api_name="chat_aspects")
    panel.skip.click(lambda: panel.hide(aspect_form.SKIPPED), None, panel.outputs, api_visibility="private")

    def on_reply_rating(dialogue: Optional[Dialogue], data: gr.LikeData) -> str:
        rater = dialogue.user.id if dialogue is not None else "anonymous"
        return aspect_form.rate_reply(services, dialogue, data.index, data.liked, rater)

    if form.utterance:
        chatbot.like(on_reply_rating, [dialogue_state], [status], api_visibility="private")
    refresh_scores.click(
        on_refresh, [dialogue_state], [scores_box, core_plot, core_card], api_name="chat_scores"
    )
