"""The Chat's rules, without the page: start a conversation, one turn, the verdict, what a reload resumes.

One person talks with one named system. Every step of a browser session runs
under the session's turn guard (`webapp.sessions.turn_guard`), so a message
sent twice (Enter, then Send) or with a client id the dialogue already holds
(`webapp.sessions.idempotent_sends`) stores nothing; the turn itself and the
verdict are the steps every session shares (`webapp.sessions.turn_step`).
Refusals raise `Refusal` with words for the participant.
"""

from __future__ import annotations

from typing import Any, Optional

from arena.dialogue import Dialogue, UserInfo, UserKind
from webapp.services import Services
from webapp.sessions import participants
from webapp.sessions.idempotent_sends import BadMessageId, already_sent, clean_message_id, forget_sent, remember_sent
from webapp.sessions.turn_guard import repeats_last_message
from webapp.sessions.turn_step import checked_message, store_label, stored_turn
from webapp.sessions.refusal import Refusal, refuse
from arena.text_safety import escape_text
from webapp.sessions.turn_step import limit_status


def system_choices(services: Services) -> list[tuple[str, str]]:
    """(name people read, id) of each system that can chat now."""
    return [(services.registry.title(name), name) for name in services.registry.available()]


def start_conversation(services: Services, crs_name: str, user_id: str) -> tuple[Dialogue, str]:
    if not crs_name:
        raise refuse("Please choose a system first.")
    if services.registry.problem(crs_name) is not None:
        raise refuse("That system is not available right now; please choose another.")
    dialogue = Dialogue(
        crs_id=crs_name,
        user=UserInfo(kind=UserKind.HUMAN, id=user_id),
        metadata={"source": "chat"},
    )
    return dialogue, (f"New conversation with **{escape_text(services.registry.title(crs_name))}** "
                      f"(up to {services.settings.max_turns} messages).")


def check_send(services: Services, dialogue: Optional[Dialogue], text: str) -> str:
    """Refuse a message that cannot be sent now; else the cleaned text (before the page echoes it)."""
    if dialogue is not None and dialogue.feedback is not None:
        raise refuse("This conversation has ended. Press “New conversation” to start another.")
    if dialogue is not None and (dialogue.ended or dialogue.num_turns >= services.settings.max_turns):
        raise refuse(f"This conversation reached its limit of {services.settings.max_turns} messages. Please "
                     "rate it with Satisfied or Frustrated, then start a new one.")
    return checked_message(services, text)


def send_message(
    services: Services, dialogue: Optional[Dialogue], text: str, session_key: Optional[str] = None,
    message_id: Optional[str] = None,
) -> tuple[Dialogue, str]:
    """Run one turn; returns the dialogue and a status line. Raises `Refusal` for refusals.

    Steps of one session (`session_key`, else the dialogue) run one at a time;
    a second copy of the message being answered (Enter, then Send) adds nothing, nor does a
    message whose client id (`message_id`, webapp.sessions.idempotent_sends) the dialogue already holds.
    """
    try:
        message_id = clean_message_id(message_id)
    except BadMessageId as exc:
        raise refuse(str(exc)) from None
    if dialogue is None and session_key is None:
        raise refuse("Start a conversation first.")
    key = session_key or dialogue.dialogue_id
    with services.turn_guard.step(key, text) as step:
        if dialogue is None or (step.latest is not None and step.latest.dialogue_id == dialogue.dialogue_id):
            # The page may still hold the state from before an event that ran first.
            dialogue = step.latest or dialogue
        if dialogue is None:
            raise refuse("Start a conversation first.")
        if step.duplicate or repeats_last_message(dialogue, text) or already_sent(dialogue, message_id):
            return dialogue, ""
        remember_sent(dialogue, message_id)  # stored with the turn
        try:
            status = _run_turn(services, dialogue, text)
        except Refusal:
            forget_sent(dialogue, message_id)
            raise
        step.remember(dialogue)
    return dialogue, status


def _run_turn(services: Services, dialogue: Dialogue, text: str) -> str:
    reply = stored_turn(services, dialogue, text,
                        unavailable="That system is not available right now; please choose another.")
    return limit_status(dialogue, services.settings.max_turns, problem=bool(reply.error))


def give_feedback(
    services: Services, dialogue: Optional[Dialogue], sentiment: str, comment: str,
    session_key: Optional[str] = None, request: Any = None,
) -> tuple[Dialogue, str]:
    if dialogue is None or not dialogue.utterances:
        raise refuse("Chat with the system before giving feedback.")
    # Waits for a reply still being written, so the feedback is stored after it.
    with services.turn_guard.step(session_key or dialogue.dialogue_id) as step:
        if dialogue.feedback is not None:
            raise refuse(f"You already rated this conversation ({dialogue.feedback.sentiment}). "
                         "Press “New conversation” to start another.")
        # Unsaved (a full store), the conversation stays open to be rated again.
        store_label(services, dialogue, sentiment, comment, request=request)
        step.remember(dialogue)
    return dialogue, f"Thank you! Your feedback (**{sentiment}**) was saved. Press “New conversation” for another."


def resumable(services: Services, user_id: str) -> Optional[Dialogue]:
    """The participant's conversation under way: the one in memory, else the one in the store."""
    with services.turn_guard.step(user_id) as step:
        latest = step.latest
        if latest is not None and latest.feedback is None and latest.end_reason in (None, "max_turns"):
            return latest
        if not participants.is_participant(user_id):
            return None
        stored = participants.open_chat(services.store, user_id)
        if stored is not None:
            step.remember(stored)
        return stored
