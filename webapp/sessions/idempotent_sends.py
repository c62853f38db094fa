"""Idempotent sends: a client message id makes a repeated send store nothing.

Three identical sends through the API, concurrent or queued one after the
other behind a slow reply, stored three turns: Gradio runs one session's
events in turn, so by the time the second ran the first was answered and the
"same text a moment ago" window had passed. A client (the API, a retrying
script) may now name each message with an id; a send whose id the dialogue
already holds is answered with the dialogue as it is. The ids live in the
dialogue's metadata (`CLIENT_MESSAGE_IDS`), so the check holds across
processes and restarts; the caller holds the session's turn lock
(`webapp.sessions.turn_guard`), so concurrent sends see each other's ids.
"""

from __future__ import annotations

import re
from typing import Optional

from arena.dialogue import Dialogue

CLIENT_MESSAGE_IDS = "client_message_ids"
_ID = re.compile(r"^[\w.:-]{1,64}$")


class BadMessageId(ValueError):
    pass


def clean_message_id(value: Optional[str]) -> Optional[str]:
    """The id as given (None when absent); BadMessageId when it is not 1-64 of letters, digits, `_ . : -`."""
    value = (value or "").strip()
    if not value:
        return None
    if not _ID.match(value):
        raise BadMessageId("A message id is 1 to 64 letters, digits, '_', '.', ':' or '-'.")
    return value


def already_sent(dialogue: Dialogue, message_id: Optional[str]) -> bool:
    return message_id is not None and message_id in dialogue.metadata.get(CLIENT_MESSAGE_IDS, [])


def remember_sent(dialogue: Dialogue, message_id: Optional[str]) -> None:
    if message_id is not None:
        dialogue.metadata.setdefault(CLIENT_MESSAGE_IDS, []).append(message_id)


def forget_sent(dialogue: Dialogue, message_id: Optional[str]) -> None:
    """Undo `remember_sent` when the message was refused: a retry with the same id may then go through."""
    ids = dialogue.metadata.get(CLIENT_MESSAGE_IDS, [])
    if message_id in ids:
        ids.remove(message_id)
        if not ids:
            dialogue.metadata.pop(CLIENT_MESSAGE_IDS, None)
