"""The steps every participant session shares (Chat, Battle, Study), in one order, without the page.

- `checked_message`: a message that may be sent (a refusal in words otherwise)
- `stored_turn`: the system's answer, stored with the message (`arena.conversation.runner`, then the store)
- `store_label`: the participant's verdict on a conversation: the label limits
  (`webapp.protection.label_limits`), the label, the store, then the limits count it
- `limit_status`: the status line after a turn, announcing the message limit before it applies
- `refused_when_full`: what any of them (or a vote) does when the store is full or locked, or
  when the conversation changed elsewhere
- `read_current` / `same_conversation`: the stored copy of a conversation and its version, read at the
  start of a step, and whether the page's copy is still that conversation

A full disk, or a database locked past its busy timeout (another process holding
its write lock), is answered in words, with nothing half-written.

Several app processes may serve one participant (a load balancer without
stickiness, a restart), so no step trusts the copy of a conversation the page
or this process holds: it reads the stored copy and its version first and
writes only over that version (`arena.store.dialogue_versions`). A page whose
copy is behind (a turn taken, a label given, a vote cast or the conversation
deleted elsewhere) gets `CHANGED_ELSEWHERE` and the conversation as stored.

When the store cannot take a write (`arena.store.engine.StoreFull`: no space left, or
the database's size cap reached) its transaction is already rolled back; a file
that cannot be written (an export: ENOSPC) is never half there, as every file
is written to a temporary name and renamed (`arena.runtime.files`). What
the participant did is then undone in memory too (a turn, a rating, a verdict),
so the page shows what the store holds and the same action can simply be tried
again later: the participant sees one line by the control they used (a
`Refusal`, like any other), the operator one error line in the log. A locked
database is handled the same way (`is_store_busy`): its transaction is rolled
back by the driver, the participant's message stays in its box, and sending it
again stores it once. Neither line names a table, a statement or a path.
"""

from __future__ import annotations

import logging
from contextlib import contextmanager
from typing import Any, Iterator, Optional

from arena.conversation.crs_interface import CRSUnavailable
from arena.dialogue import Dialogue, Utterance
from arena.conversation.runner import DialogueEnded, MessageRejected, finish_dialogue, validate_message
from arena.store import DialogueChanged, StoreFull, VersionedDialogue, is_disk_full
from webapp.protection.label_limits import admit_label
from webapp.protection.vote_limits import LimitReached
from webapp.sessions.refusal import Refusal, refuse
from webapp.sessions.warming import (
    converting_refusal, failed_for_conversion, refuse_while_converting, wait_until_loaded,
)

log = logging.getLogger(__name__)

STORAGE_FULL = ("The arena cannot save anything right now (its storage is full), so this was not saved. "
                "Please try again in a little while.")
STORE_BUSY = ("The arena is busy and could not save this just now, so it was not saved. "
              "Please send it again in a moment.")
# PostgreSQL: lock_not_available, query_canceled (a statement or lock timeout), deadlock_detected
_BUSY_PGCODES = ("55P03", "57014", "40P01")


def is_store_busy(exc: BaseException) -> bool:
    """Whether `exc` (a driver error wrapped by SQLAlchemy or not) says the database stayed locked past its
    busy timeout."""
    cause = getattr(exc, "orig", None) or exc
    if getattr(cause, "pgcode", None) in _BUSY_PGCODES:
        return True
    import sqlite3

    text = str(cause).lower()
    return isinstance(cause, sqlite3.OperationalError) and ("locked" in text or "busy" in text)


CHANGED_ELSEWHERE = "This conversation changed elsewhere; reloading."


class ChangedElsewhere(Refusal):
    """The page's copy of a conversation is behind the store; the page should show the stored one."""

    def __init__(self) -> None:
        super().__init__(CHANGED_ELSEWHERE)


def _restore(dialogue: Dialogue, before: Dialogue) -> None:
    for name in type(dialogue).model_fields:
        setattr(dialogue, name, getattr(before, name))


@contextmanager
def refused_when_full(*dialogues: Optional[Dialogue]) -> Iterator[None]:
    """Run a step that stores `dialogues`; if the store is full or locked, or a checked write finds a
    conversation changed elsewhere, put them back as they were and refuse in one line."""
    kept = [(d, d.model_copy(deep=True)) for d in dialogues if d is not None]
    try:
        yield
    except DialogueChanged as exc:
        log.info("a participant's page was behind the store: %s", exc)
        for dialogue, before in kept:
            _restore(dialogue, before)
        raise ChangedElsewhere() from None
    except Exception as exc:
        full = isinstance(exc, StoreFull) or (isinstance(exc, OSError) and is_disk_full(exc))
        if not full and not is_store_busy(exc):
            raise
        log.error("a participant's write was refused: %s", str(exc).splitlines()[0] if str(exc) else exc)
        for dialogue, before in kept:
            _restore(dialogue, before)
        raise refuse(STORAGE_FULL if full else STORE_BUSY) from None


def read_current(services: Any, dialogue: Dialogue) -> Optional[VersionedDialogue]:
    """The stored copy of `dialogue` and its version (None: never stored, or deleted)."""
    return services.store.current_dialogue(dialogue.dialogue_id)


def same_conversation(page: Dialogue, stored: Optional[VersionedDialogue], *, label: bool = True) -> bool:
    """Whether the page's copy is the conversation as stored: the same turns and (with `label`) the same
    verdict and ending. A copy never stored is current only while it holds nothing (just started)."""
    if stored is None:
        return not page.utterances and page.feedback is None
    s = stored.dialogue
    if len(s.utterances) != len(page.utterances):
        return False
    return not label or (_verdict(s) == _verdict(page) and s.end_reason == page.end_reason)


def _verdict(d: Dialogue) -> Optional[str]:
    return d.feedback.sentiment if d.feedback is not None else None


def save_checked(services: Any, dialogue: Dialogue, version: Optional[int]) -> None:
    """Store `dialogue` over `version` (compare-and-set); with None, unconditionally (a study's own
    bookkeeping, a test). Raises `DialogueChanged`."""
    if version is None:
        services.store.save_dialogue(dialogue)
    else:
        services.store.save_dialogue_checked(dialogue, version)


def stored_turn(services: Any, dialogue: Dialogue, text: str, *, unavailable: str,
                version: Optional[int] = None) -> Utterance:
    """The system's answer to `text`, stored with it over the stored `version` (see `save_checked`); or one
    line refusing the step (the system is `unavailable`, the message is refused, the conversation is over
    or changed elsewhere, the disk is full, the system still warming up past its wait), nothing kept.
    A system whose model is still loading in the background is waited for (`webapp.sessions.warming`);
    while the local model's one-time conversion runs, the turn is refused at once instead."""
    refuse_while_converting(services, dialogue.crs_id)
    wait_until_loaded(services, dialogue.crs_id)
    try:
        runner = services.runner_for(dialogue.crs_id)
    except CRSUnavailable:
        raise refuse(unavailable) from None
    before = dialogue.model_copy(deep=True)
    with refused_when_full(dialogue):  # a full disk keeps neither the message nor the reply
        try:
            reply = runner.user_turn(dialogue, text)
        except (MessageRejected, DialogueEnded) as exc:
            raise refuse(str(exc)) from None
        if failed_for_conversion(reply.error):  # the conversion began as the turn was sent: taken back
            _restore(dialogue, before)
            raise converting_refusal(services, dialogue.crs_id)
        save_checked(services, dialogue, version)
    return reply


def checked_message(services: Any, text: str) -> str:
    """The message cleaned for sending, or one line refusing it (empty, too long)."""
    try:
        return validate_message(text, services.settings.max_message_chars)
    except MessageRejected as exc:
        raise refuse(str(exc)) from None


def store_label(services: Any, dialogue: Dialogue, sentiment: str, comment: str = "", *,
                request: Any = None, keys: Optional[tuple[str, str]] = None, limited: bool = True,
                version: Optional[int] = None) -> None:
    """End `dialogue` with the participant's verdict and store it (queued for scoring).

    With `limited` (the public Chat and Battle) the label passes the label limits first, for the
    request's origin or the known (user, IP) `keys`, counted atomically in the store and given back
    when the label could not be stored: a label the store refused (full) and sent again counts once.
    A full store refuses in words and leaves the dialogue open, as it was; so does a conversation changed
    elsewhere since `version`."""
    with refused_when_full(dialogue):
        admission = None
        if limited:
            try:  # labels are limited and flagged like votes (webapp.protection.label_limits)
                admission = admit_label(services, dialogue, request=request, keys=keys)
            except LimitReached as exc:
                raise refuse(str(exc)) from None
        try:
            finish_dialogue(dialogue, sentiment, comment[: services.settings.max_message_chars])
            services.dialogue_finished(dialogue, version=version)
        except BaseException:
            if admission is not None:  # not stored: the label gives its place back
                admission.take_back()
            raise
        if admission is not None:
            admission.count()


def limit_status(dialogue: Dialogue, max_turns: int, problem: bool = False) -> str:
    """The status line after a turn; the limit is announced before the last message, never silently
    applied."""
    left = max_turns - dialogue.num_turns
    if dialogue.ended or left <= 0:
        return (f"This conversation reached its limit of {max_turns} messages. "
                "Please tell us whether you were satisfied or frustrated.")
    note = "The system had a problem with that turn; it has been recorded." if problem else ""
    if left == 1:
        note += f" You can send one more message: the conversation ends after {max_turns} messages."
    return note.strip()
