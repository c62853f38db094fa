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
from webapp.services import Services
from webapp.ui.scorecard import core_scorecard
from webapp.ui.render import chat_messages, escape_text, items_markdown, latest_items, scores_markdown
from arena.crs_interface import CRSUnavailable

log = logging.getLogger(__name__)

CONSENT = (
    "By chatting you agree that the conversation and your feedback are stored and published as an open "
    "dataset under CC BY 4.0. Please do not share any personal information."
)


def session_user_id(request: Optional[gr.Request]) -> str:
    session = getattr(request, "session_hash", None) if request is not None else None
    return f"session-{session}" if session else "anonymous"


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
        raise gr.Error("Please choose a system first.")
    problem = services.registry.problem(crs_name)
    if problem is not None:
        raise gr.Error(str(problem))
    dialogue = Dialogue(
        crs_id=crs_name,
        user=UserInfo(kind=UserKind.HUMAN, id=session_user_id(request)),
        metadata={"source": "chat"},
    )
    return dialogue, f"New conversation with **{escape_text(crs_name)}**. {CONSENT}"


def send_message(
    services: Services, dialogue: Optional[Dialogue], text: str
) -> tuple[Dialogue, str]:
    """Run one turn; returns the dialogue and a status line. Raises gr.Error for refusals."""
    if dialogue is None:
        raise gr.Error("Start a conversation first.")
    try:
        runner = services.runner_for(dialogue.crs_id)
    except CRSUnavailable as exc:
        raise gr.Error(str(exc)) from None
    try:
        reply = runner.user_turn(dialogue, text)
    except (MessageRejected, DialogueEnded) as exc:
        raise gr.Error(str(exc)) from None
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
    return dialogue, status


def give_feedback(
    services: Services, dialogue: Optional[Dialogue], sentiment: str, comment: str
) -> tuple[Dialogue, str]:
    if dialogue is None or not dialogue.utterances:
        raise gr.Error("Chat with the system before giving feedback.")
    if dialogue.feedback is not None:
        raise gr.Error("Feedback for this conversation was already recorded. Start a new one.")
    finish_dialogue(dialogue, sentiment, comment[: services.settings.max_message_chars])
    services.dialogue_finished(dialogue)
    return dialogue, f"Thank you! Your feedback (**{sentiment}**) was saved. Start a new conversation any time."


def build(services: Services) -> None:
    choices = system_choices(services)
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
            chatbot = gr.Chatbot(label="Conversation", height=420)
            message = gr.Textbox(
                label="Your message",
                placeholder="Tell the system what you feel like watching...",
                max_lines=6,
            )
            send_button = gr.Button("Send", variant="primary")
        with gr.Column(scale=2):
            items_box = gr.Markdown(items_markdown([]))
    status = gr.Markdown("")
    with gr.Row():
        comment = gr.Textbox(label="Optional comment", max_lines=3, scale=3)
        satisfied = gr.Button("Satisfied", variant="secondary", scale=1)
        frustrated = gr.Button("Frustrated", variant="stop", scale=1)
    with gr.Accordion("Automatic scores", open=False):
        refresh_scores = gr.Button("Refresh scores")
        scores_box = gr.Markdown("")
        core_plot = gr.Plot(label="CoRE factors")
        core_card = gr.Markdown("")

    def view(dialogue: Optional[Dialogue], status_text: str) -> tuple[Any, ...]:
        return dialogue, chat_messages(dialogue), items_markdown(latest_items(dialogue)), status_text

    def on_new(crs_name: str, request: gr.Request) -> tuple[Any, ...]:
        dialogue, text = start_conversation(services, crs_name, request)
        return (*view(dialogue, text), "", "")

    def on_send(text: str, dialogue: Optional[Dialogue], crs_name: str, request: gr.Request) -> tuple[Any, ...]:
        if dialogue is None or dialogue.ended:
            dialogue, _ = start_conversation(services, crs_name, request)
        dialogue, status_text = send_message(services, dialogue, text)
        return (*view(dialogue, status_text), "")

    def on_feedback(sentiment: str):
        def handler(comment_text: str, dialogue: Optional[Dialogue]) -> tuple[Any, ...]:
            dialogue, text = give_feedback(services, dialogue, sentiment, comment_text or "")
            return (*view(dialogue, text), "")

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
    new_button.click(on_new, [crs_choice], outputs + [message, scores_box], api_name="chat_start")
    # Switching systems starts a fresh conversation with the newly chosen one.
    crs_choice.change(on_new, [crs_choice], outputs + [message, scores_box], api_visibility="private")
    send_args = dict(fn=on_send, inputs=[message, dialogue_state, crs_choice], outputs=outputs + [message])
    send_button.click(api_name="chat_send", **send_args)
    message.submit(api_visibility="private", **send_args)
    satisfied.click(
        on_feedback("satisfied"), [comment, dialogue_state], outputs + [comment], api_name="chat_satisfied"
    )
    frustrated.click(
        on_feedback("frustrated"), [comment, dialogue_state], outputs + [comment], api_name="chat_frustrated"
    )
    refresh_scores.click(
        on_refresh, [dialogue_state], [scores_box, core_plot, core_card], api_name="chat_scores"
    )
