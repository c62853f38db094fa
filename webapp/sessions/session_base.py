"""What the Chat, the Battle and a study's tasks do the same way: check the page against the store, then
send a turn or rate over the version read.

Any app process may serve any step of a participant (`webapp.sessions.turn_step`
says why), so every session's send and rate start here:

- `as_stored`: the stored copy of the page's conversation and its version, or
  `ChangedElsewhere` when the page is behind (a turn taken, a verdict given or
  changed, the conversation deleted on another replica); `as_stored_or_new`
  the same where the first send creates the conversation (the Chat);
- `send_turn`: the system's answer, stored over that version;
- `rate_conversation`: a first verdict (through the label limits where the
  session has them) or, in a study, a changed one, stored over that version,
  so that a verdict given elsewhere meanwhile is never written over;
- `stored_user`: whether the store can be asked for a user's conversations, and
  so whether a first send claims its start there (`webapp.sessions.first_message`).

What differs between the sessions (one conversation or two panes, a study's
places and checks) stays in their own modules.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Optional

from arena.dialogue import Dialogue, Feedback, Utterance
from arena.store import VersionedDialogue
from webapp.sessions import first_message, participants
from webapp.sessions.turn_step import (
    ChangedElsewhere,
    read_current,
    refused_when_full,
    same_conversation,
    store_label,
    stored_turn,
)


class PageView(NamedTuple):
    """What a page shows of a conversation, enough to tell whether the store has moved on since it was drawn:
    its number of turns, its verdict (None: not rated) and how it ended."""

    turns: int
    verdict: Optional[str]
    end_reason: Optional[str]

    @classmethod
    def of(cls, d: Dialogue) -> "PageView":
        return cls(len(d.utterances), d.feedback.sentiment if d.feedback else None, d.end_reason)

    def shows(self, stored: Optional[VersionedDialogue]) -> bool:
        """Whether the conversation as stored is the one this page shows."""
        return stored is not None and PageView.of(stored.dialogue) == self


def stored_user(user_id: Optional[str]) -> bool:
    """Whether the store can be asked for this user's conversations: a participant, or a browser session
    named by the server (the same name in every process)."""
    return participants.is_participant(user_id) or str(user_id or "").startswith("session-")


def as_stored(services: Any, page: Dialogue) -> VersionedDialogue:
    """The stored copy of the page's conversation and its version; `ChangedElsewhere` when it was deleted or
    the page's copy is not that conversation any more. The stored copy may hold more than the page (the
    background scorer's dialogue acts): a step goes on from it, so its write drops nothing."""
    stored = as_stored_or_new(services, page)
    if stored is None:
        raise ChangedElsewhere()
    return stored


def as_stored_or_new(services: Any, page: Dialogue) -> Optional[VersionedDialogue]:
    """`as_stored` for a session whose conversation is created by its first send (the Chat): None while the
    page's conversation was never stored and holds nothing yet; a page holding turns that the store does
    not (deleted elsewhere) is behind, `ChangedElsewhere`, as in `as_stored`."""
    stored = read_current(services, page)
    if not same_conversation(page, stored):
        raise ChangedElsewhere()
    return stored


def claim_first_send(services: Any, page: Dialogue, message_id: Optional[str],
                     text: str) -> tuple[Optional[str], Optional[VersionedDialogue]]:
    """The first send of a conversation not stored yet (`as_stored_or_new` gave None): claim its start in the
    store (`webapp.sessions.first_message`) so that the same message reaching two processes stores one
    conversation. Returns (the key claimed, to give back with `first_message.release_start` if the turn is
    refused; None), or (None, the conversation another process started with it first), or (None, None) for
    a user the store keeps nothing for."""
    if not stored_user(page.user.id):
        return None, None
    key = first_message.start_key(page.user.id, message_id, text)
    other = first_message.claim_start(services, page, key)
    return (key, None) if other is None else (None, other)


def send_turn(services: Any, dialogue: Dialogue, text: str, *, version: int,
              unavailable: str) -> Utterance:
    """One turn of `dialogue` (read at `version`), stored over that version (`turn_step.stored_turn`)."""
    return stored_turn(services, dialogue, text, version=version, unavailable=unavailable)


def rate_conversation(services: Any, dialogue: Dialogue, sentiment: str, comment: str = "", *, version: int,
                      limited: bool = True, keys: Optional[tuple[str, str]] = None,
                      request: Any = None) -> None:
    """Store the verdict on `dialogue` (read at `version`) over that version: a first verdict ends the
    conversation (`turn_step.store_label`, with the label limits when `limited`); a verdict already given is
    replaced (a study's verdict may change until its task is submitted). A write finding the conversation
    changed elsewhere raises `ChangedElsewhere`, with `dialogue` as it was."""
    if dialogue.feedback is None:
        store_label(services, dialogue, sentiment, comment, request=request, keys=keys, limited=limited,
                    version=version)
        return
    if dialogue.feedback.sentiment == sentiment:
        return
    with refused_when_full(dialogue):
        dialogue.feedback = Feedback(sentiment=sentiment, comment=dialogue.feedback.comment)
        # `finished`: the row holds a label already; the version alone says whether it is still this one.
        services.store.save_dialogue_checked(dialogue, version, finished=True)
