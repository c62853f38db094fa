"""The first message of a Chat conversation claims its start in the store before the conversation exists.

Each app process makes a conversation of its own for a message that finds none under way, so the same
first message reaching two processes at once (a client retrying through a load balancer, a page's event
sent twice) used to store two conversations. Now the first message claims a key in the store first
(`arena.store.conversation_starts`): a digest of the participant and the message's id, or of the message's
text when the client gave no id (the Chat page names every message it sends; an API client may). One
process gets the claim and creates the conversation; the other finds the conversation named in the claim,
waits while its first reply is still being written, and answers with it: as a repeat of the same message
(nothing more stored) when it holds that message, else with `CHANGED_ELSEWHERE`. A first turn that is
refused gives its claim back, so sending the message again goes through.

Only the users the store keeps conversations for claim starts (`session_base.stored_user`: participants
and server-named sessions; `anonymous` is everyone without a session).
"""

from __future__ import annotations

import hashlib
import time
from typing import Any, Optional

from arena.dialogue import Dialogue, Role
from arena.store import VersionedDialogue
from webapp.sessions.idempotent_sends import already_sent
from webapp.sessions.refusal import refuse

WAIT_STEP_S = 0.2
# Beyond the longest first turn (a model warming up, then the reply's own timeout): a claim held that
# long was left by a process that stopped; the next claim takes it over.
HOLD_MARGIN_S = 60.0
STILL_ANSWERING = ("This message is still being answered elsewhere, so it was not sent again. "
                   "Please wait a moment and send it once more.")


def start_key(user_id: str, message_id: Optional[str], text: str) -> str:
    """The claim's key: the participant and the message's id, or its text when it has none."""
    what = f"id:{message_id}" if message_id else "text:" + text.strip()
    return hashlib.sha256(f"{user_id}\n{what}".encode("utf-8")).hexdigest()


def hold_s(settings: Any) -> float:
    """How long a claim holds: the longest a first turn may take, and a margin."""
    return settings.warm_wait_s + settings.turn_timeout_s + HOLD_MARGIN_S


def claim_start(services: Any, dialogue: Dialogue, key: str) -> Optional[VersionedDialogue]:
    """Claim the start `key` for `dialogue` (not stored yet). None: the claim is this conversation's, go
    on and create it. Else the conversation that claimed it first, as stored, waited for while its first
    turn is being answered; one line (`STILL_ANSWERING`) when it is still not stored after that."""
    store, hold = services.store, hold_s(services.settings)
    deadline = time.monotonic() + hold
    while True:
        holder = store.claim_conversation_start(key, dialogue.dialogue_id, hold_s=hold)
        if holder == dialogue.dialogue_id:
            return None
        found = store.current_dialogue(holder)
        if found is not None:
            return found
        if time.monotonic() > deadline:
            raise refuse(STILL_ANSWERING)
        time.sleep(WAIT_STEP_S)


def release_start(services: Any, dialogue: Dialogue, key: Optional[str]) -> None:
    """Give the claim back: the first turn was refused and nothing of the conversation was stored."""
    if key is not None:
        services.store.release_conversation_start(key, dialogue.dialogue_id)


def holds_message(dialogue: Dialogue, message_id: Optional[str], text: str) -> bool:
    """Whether the conversation another process started holds this very message: its id, or (no id) the
    text as its only message so far."""
    if message_id is not None:
        return already_sent(dialogue, message_id)
    said = [u.text for u in dialogue.utterances if u.role == Role.USER]
    return said == [text.strip()]
