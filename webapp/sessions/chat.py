"""The Chat's rules, without the page: start a conversation, one turn, the verdict, what a reload resumes.

One person talks with one named system. Every step of a browser session runs
under the session's turn guard (`webapp.sessions.turn_guard`), so a message
sent twice (Enter, then Send) or with a client id the dialogue already holds
(`webapp.sessions.idempotent_sends`) stores nothing; the turn itself and the
verdict are the steps every session shares (`webapp.sessions.session_base`).
Refusals raise `Refusal` with words for the participant.

Any app process may serve any step: each step reads the conversation as
stored (with its version) and writes over that version, so a page that is
behind (a turn taken on another replica, the conversation deleted or rated
there) is answered with `CHANGED_ELSEWHERE` and the stored conversation
(None when it was deleted), never written over it. A conversation's first
message claims its start in the store before the conversation is created
(`webapp.sessions.first_message`), so that message reaching two processes at
once stores one conversation.
"""

from __future__ import annotations

from typing import Any, Optional

from arena.dialogue import Dialogue, UserInfo, UserKind
from webapp.services import Services
from webapp.sessions import first_message, participants
from webapp.sessions.idempotent_sends import (BadMessageId, already_sent, clean_message_id, forget_sent,
                                              remember_sent)
from webapp.sessions.turn_guard import repeats_last_message
from webapp.sessions.session_base import (as_stored_or_new, claim_first_send, rate_conversation,
                                          send_turn, stored_user)
from webapp.sessions.turn_step import (CHANGED_ELSEWHERE, ChangedElsewhere, checked_message, limit_status,
                                       read_current, same_conversation)
from webapp.sessions.refusal import Refusal, refuse
from arena.text_safety import escape_text


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
    A conversation's first message claims its start first (`webapp.sessions.first_message`): the same
    first message sent to two processes at once stores one conversation.
    """
    message_id = _checked_id(message_id)
    if dialogue is None and session_key is None:
        raise refuse("Start a conversation first.")
    key = session_key or dialogue.dialogue_id
    with services.turn_guard.step(key, text) as step:
        if dialogue is None or (step.latest is not None and step.latest.dialogue_id == dialogue.dialogue_id):
            # The page may still hold the state from before an event that ran first.
            dialogue = step.latest or dialogue
        if dialogue is None:
            raise refuse("Start a conversation first.")
        try:
            stored = as_stored_or_new(services, dialogue)
        except ChangedElsewhere:
            return _changed_elsewhere(services, step, dialogue)
        if step.duplicate or repeats_last_message(dialogue, text) or already_sent(dialogue, message_id):
            return dialogue, ""
        # A first message claims its start in the store before the conversation is created.
        start, other = (None, None) if stored else claim_first_send(services, dialogue, message_id, text)
        if other is not None:  # the same first message reached another process first
            return _started_elsewhere(step, other.dialogue, message_id, text)
        remember_sent(dialogue, message_id)  # stored with the turn
        try:
            status = _run_turn(services, dialogue, text, stored.version if stored is not None else 0)
        except ChangedElsewhere:
            return _changed_elsewhere(services, step, dialogue)
        except Refusal:
            forget_sent(dialogue, message_id)
            first_message.release_start(services, dialogue, start)  # nothing stored: the start is free again
            raise
        except Exception:
            first_message.release_start(services, dialogue, start)
            raise
        step.remember(dialogue)
    return dialogue, status


def _checked_id(message_id: Optional[str]) -> Optional[str]:
    try:
        return clean_message_id(message_id)
    except BadMessageId as exc:
        raise refuse(str(exc)) from None


def _changed_elsewhere(services: Services, step: Any, page: Dialogue) -> tuple[Optional[Dialogue], str]:
    """The page was behind the store: the conversation as stored now (None: deleted), remembered."""
    current = read_current(services, page)
    step.remember(current.dialogue if current is not None else None)
    return (current.dialogue if current is not None else None), CHANGED_ELSEWHERE


def _started_elsewhere(step: Any, other: Dialogue, message_id: Optional[str],
                       text: str) -> tuple[Dialogue, str]:
    """Another process started the conversation with this first message: its answer when it holds this very
    message (nothing more is stored), else `CHANGED_ELSEWHERE`."""
    step.remember(other)
    return other, "" if first_message.holds_message(other, message_id, text) else CHANGED_ELSEWHERE


def _run_turn(services: Services, dialogue: Dialogue, text: str, version: int) -> str:
    reply = send_turn(services, dialogue, text, version=version,
                      unavailable="That system is not available right now; please choose another.")
    return limit_status(dialogue, services.settings.max_turns, problem=bool(reply.error))


def give_feedback(
    services: Services, dialogue: Optional[Dialogue], sentiment: str, comment: str,
    session_key: Optional[str] = None, request: Any = None,
) -> tuple[Optional[Dialogue], str]:
    """Store the participant's verdict; returns the dialogue and a status line (the stored conversation
    and `CHANGED_ELSEWHERE` when the page was behind). Raises `Refusal` for refusals."""
    if dialogue is None or not dialogue.utterances:
        raise refuse("Chat with the system before giving feedback.")
    # Waits for a reply still being written, so the feedback is stored after it.
    with services.turn_guard.step(session_key or dialogue.dialogue_id) as step:
        stored = read_current(services, dialogue)
        if stored is not None and stored.dialogue.feedback is not None:
            step.remember(stored.dialogue)
            raise refuse(f"You already rated this conversation ({stored.dialogue.feedback.sentiment}). "
                         "Press “New conversation” to start another.")
        if stored is None or not same_conversation(dialogue, stored):  # what `as_stored` checks, read once
            step.remember(stored.dialogue if stored is not None else None)
            return (stored.dialogue if stored is not None else None), CHANGED_ELSEWHERE
        # Unsaved (a full store, or changed elsewhere meanwhile), the conversation stays open to be rated
        # again.
        try:
            rate_conversation(services, dialogue, sentiment, comment, request=request, version=stored.version)
        except ChangedElsewhere:
            return _changed_elsewhere(services, step, dialogue)
        step.remember(dialogue)
    return dialogue, (f"Thank you! Your feedback (**{sentiment}**) was saved. "
                      "Press “New conversation” for another.")


def resumable(services: Services, user_id: str) -> Optional[Dialogue]:
    """The participant's conversation under way, as stored (any process may have taken its last turn); a
    conversation just started in this process and not stored yet while nothing newer is stored."""
    with services.turn_guard.step(user_id) as step:
        latest = step.latest
        stored = participants.open_chat(services.store, user_id) if stored_user(user_id) else None
        fresh = (latest is not None and not latest.utterances and latest.feedback is None
                 and (stored is None or stored.created_at <= latest.created_at))
        if fresh:
            return latest
        if stored is None and not stored_user(user_id) and latest is not None and latest.feedback is None \
                and latest.end_reason in (None, "max_turns"):
            return latest  # no id to look the conversation up by (no participant, no session)
        step.remember(stored)
        return stored
