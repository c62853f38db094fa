"""A battle's rules, without the page: start, one turn, a rating, the vote, the reveal.

A battle's systems are drawn by `webapp.sessions.pairing` (least-played pair first,
sides at random) and stay on the server: the page only ever sees "System A"
and "System B" until the vote is stored. Each participant has at most one
battle under way, kept in `webapp.sessions.battle_state.BattleBook` under their id, so a reload (or a
second tab of the same browser) finds the same `BattleSession` object, with
its locks, instead of a copy. Both dialogues are stored when the battle
starts; after a restart of the app a participant's unvoted battle is rebuilt
from the store (`webapp.sessions.participants.open_battle`).

The book is only this process's copy: another replica may have served the
participant's last step. So `current` checks the book against the store on
every step (the battle still open, and each side as stored), a turn or a
label is written over the side's stored version, and a page that is behind
gets `CHANGED_ELSEWHERE` with the battle as stored. A battle voted or deleted
elsewhere is never written again; a page still showing it (`page_behind`) gets
the same line, and the page is drawn again as the store has it.

Every refusal raises `Refusal` (webapp.sessions.refusal) with words for the
participant; the tab shows them in the pane's status line.
"""

from __future__ import annotations

import logging
from typing import Any, Optional

from arena.dialogue import Dialogue, UserInfo, UserKind, Vote, new_id
from arena.store import StoreError
from arena.store import BattleAlreadyVoted, DialogueChanged
from webapp.sessions import participants
from webapp.sessions.battle_state import SIDES, BattleSession
from webapp.sessions.pairing import NotEnoughSystems
from webapp.services import Services
from webapp.sessions.refusal import Refusal, refuse
from webapp.sessions.session_base import as_stored, rate_conversation, send_turn, stored_user
from webapp.sessions.turn_step import ChangedElsewhere, checked_message, limit_status, refused_when_full
from arena.text_safety import escape_text
from webapp.protection.vote_limits import LimitReached, origin_keys_of

log = logging.getLogger(__name__)

def release(services: Services, session: Optional[BattleSession]) -> None:
    if session is not None and session.vote is None:
        services.pair_scheduler.done(session.ticket)


def origin_keys(services: Services, request: Any, user_id: Optional[str] = None) -> tuple[str, str]:
    """Hashed (user, IP) keys of a request: the participant (one per browser, across reloads) when known,
    else the browser session."""
    return origin_keys_of(services, request, user_id if participants.is_participant(user_id) else None)


def current(services: Services, user_id: str, request: Any = None) -> Optional[BattleSession]:
    """The participant's battle under way, as the store has it: the one in this process's book brought up
    to date, else their unvoted battle rebuilt from the store. A battle voted here stays (its reveal)."""
    book = services.battle_book
    session = book.get(user_id)
    if session is not None and session.vote is not None:
        return session
    if not stored_user(user_id):
        return session
    found = participants.open_battle(services.store, user_id)
    if found is None:  # voted or deleted elsewhere (or never started): nothing under way
        if session is not None:
            book.forget(user_id)
        return None
    battle_id, dialogues = found
    if session is not None and session.battle_id == battle_id:
        _catch_up(session, dialogues)
        return session
    user_key, ip_key = origin_keys(services, request, user_id)
    # The pairing claim of the first process expires on its own; this one has none to release.
    rebuilt = BattleSession(battle_id=battle_id, ticket=None, dialogues=dialogues, user_key=user_key,
                            ip_key=ip_key, started_at=min(d.created_at for d in dialogues.values()))
    return book.put(user_id, rebuilt)


def _catch_up(session: BattleSession, stored: dict[str, Dialogue]) -> None:
    """Take each side as stored, unless this process is writing a reply into it right now."""
    for side in SIDES:
        if session.busy[side].locked():
            continue
        with session.lock:
            session.dialogues[side] = stored[side]


def _side_as_stored(services: Services, session: BattleSession, side: str) -> int:
    """The side's stored version, after checking the session's copy is that conversation; raises
    `ChangedElsewhere` (the session then holds the stored copy) when it is not."""
    if store_voted(services, session):
        raise ChangedElsewhere()
    try:
        stored = as_stored(services, session.dialogues[side])
    except ChangedElsewhere:
        current = services.store.current_dialogue(session.dialogues[side].dialogue_id)
        if current is not None:  # the session shows the side as stored from now on
            session.dialogues[side] = current.dialogue
        raise
    session.dialogues[side] = stored.dialogue
    return stored.version


def store_voted(services: Services, session: BattleSession) -> bool:
    return services.store.battle_voted(session.battle_id)


def start_battle(services: Services, user_id: str, previous: Optional[BattleSession] = None,
                 request: Any = None) -> BattleSession:
    """Draw a pair, store both (empty) dialogues and keep the battle as the participant's current one."""
    user_key, ip_key = origin_keys(services, request, user_id)
    try:
        services.vote_limiter.check("battle", user_key, ip_key)
    except LimitReached as exc:
        raise refuse(str(exc)) from None
    try:
        with refused_when_full():  # drawing claims the pair in the store
            (crs_a, crs_b), ticket = services.pair_scheduler.draw(services.registry.available())
    except NotEnoughSystems:
        raise refuse("Battles are not possible right now (fewer than two systems are running). "
                     "Please try again later.") from None
    release(services, previous)
    battle_id = new_id()
    dialogues = {
        side: Dialogue(
            crs_id=crs,
            user=UserInfo(kind=UserKind.HUMAN, id=user_id),
            metadata={"source": "battle", "battle_id": battle_id, "side": side},
        )
        for side, crs in zip(SIDES, (crs_a, crs_b), strict=True)
    }
    # Stored at once, so a reload after a restart finds the battle; nothing shows or counts it before its vote.
    try:
        with refused_when_full():
            services.store.save_dialogues(list(dialogues.values()))
    except Refusal:
        try:
            services.pair_scheduler.done(ticket)
        except StoreError:  # the claim expires by itself if even this cannot be written
            pass
        raise
    session = BattleSession(battle_id=battle_id, ticket=ticket, dialogues=dialogues, user_key=user_key,
                            ip_key=ip_key)
    return services.battle_book.put(user_id, session)


def page_behind(session: Optional[BattleSession], page_battle: Optional[str]) -> bool:
    """Whether a page showing the battle `page_battle` is behind the store: that battle was voted or
    deleted elsewhere, or another one was started there (`session` is the participant's battle now, from
    `current`). A page that shows no battle is never behind: it is asked to start one."""
    return page_battle is not None and (session is None or session.battle_id != page_battle)


def _session(session: Optional[BattleSession]) -> BattleSession:
    if session is None:
        raise refuse("Press “New battle” first.")
    return session


def check_send(services: Services, session: Optional[BattleSession], side: str, text: str) -> str:
    """Refuse a message that cannot be sent now; else the cleaned text (before the page echoes it)."""
    session = _session(session)
    dialogue = session.dialogues[side]
    if session.vote is not None:
        raise refuse("This battle is over; press “New battle” for another.")
    if session.rated(side):
        raise refuse(f"The conversation with System {side} has ended.")
    if dialogue.ended or dialogue.num_turns >= services.settings.max_turns:
        raise refuse(
            f"The conversation with System {side} reached its limit of {services.settings.max_turns} messages; "
            "please rate it with Satisfied or Frustrated."
        )
    if session.answering(side):
        raise refuse(f"System {side} is still answering your previous message.")
    return checked_message(services, text)


def check_send_both(services: Services, session: Optional[BattleSession],
                    text: str) -> tuple[list[str], dict[str, Refusal]]:
    """One message for both panes: the sides that take it now, and each other side's refusal (the same
    rules as its own box). Refused when no side takes it, with each side's reason once."""
    taken: list[str] = []
    refused: dict[str, Refusal] = {}
    for side in SIDES:
        try:
            check_send(services, session, side, text)
        except Refusal as exc:
            refused[side] = exc
        else:
            taken.append(side)
    if not taken:
        reasons = list(dict.fromkeys(exc.text for exc in refused.values()))
        raise Refusal(" ".join(reasons))  # each side's refusal was logged already
    return taken, refused


def partly_sent(refused: dict[str, Refusal]) -> str:
    """The line for a message to both systems that one of them did not get."""
    return " ".join(f"System {side} did not get this message: {exc.text}" for side, exc in refused.items())


def send(services: Services, session: Optional[BattleSession], side: str, text: str) -> str:
    """One turn in one pane; returns the pane's status line."""
    check_send(services, session, side, text)
    dialogue = session.dialogues[side]
    if not session.busy[side].acquire(blocking=False):
        raise refuse(f"System {side} is still answering your previous message.")
    try:
        version = _side_as_stored(services, session, side)
        dialogue = session.dialogues[side]
        reply = send_turn(services, dialogue, text, version=version,
                          unavailable=f"System {side} is unavailable right now; please start a new battle.")
    finally:
        session.busy[side].release()
    status = limit_status(dialogue, services.settings.max_turns)
    if reply.error and not dialogue.ended:  # a failed turn voids the battle (arena.crowd.counting)
        return (f"System {side} had a problem answering, so this battle will not count for either system. "
                f"You may go on, or press “New battle” for another. {status}").strip()
    return status


def rate(services: Services, session: Optional[BattleSession], side: str, sentiment: str) -> bool:
    """End one pane with the user's verdict; returns whether both panes are now rated."""
    session = _session(session)
    dialogue = session.dialogues[side]
    if session.vote is not None:
        raise refuse("This battle is over; press “New battle” for another.")
    if not dialogue.utterances:
        raise refuse(f"Chat with System {side} before rating it.")
    with session.busy[side]:  # never while a reply is being written into the dialogue
        with session.lock:
            if session.rated(side):
                raise refuse(f"You already rated System {side} ({dialogue.feedback.sentiment}).")
            version = _side_as_stored(services, session, side)
            dialogue = session.dialogues[side]
            # Stored and queued for scoring now; exports and the leaderboard count it only once the vote is
            # in. Unsaved (a full store, or changed elsewhere), the pane stays open to be rated again.
            rate_conversation(services, dialogue, sentiment, keys=(session.user_key, session.ip_key),
                              version=version)
    with session.lock:
        return session.both_rated()


def vote(
    services: Services, session: Optional[BattleSession], choice: str, comment: str, user_id: str
) -> Vote:
    """Store the vote together with both dialogues, in one transaction (one vote per battle)."""
    session = _session(session)
    with session.lock:
        if session.vote is not None:
            raise refuse("You already voted in this battle; press “New battle” for another.")
        if not session.both_rated():
            raise refuse("Please end both conversations (Satisfied or Frustrated) before voting.")
        try:
            admission = services.vote_limiter.admit("vote", session.user_key, session.ip_key)
        except LimitReached as exc:
            raise refuse(str(exc)) from None
        # Both sides as stored now (a page behind the store is refused, the session then holding the battle
        # as stored); the vote is written only over these versions.
        versions = (_side_as_stored(services, session, "A"), _side_as_stored(services, session, "B"))
        a, b = session.dialogues["A"], session.dialogues["B"]
        cast = Vote(
            battle_id=session.battle_id, dialogue_a=a.dialogue_id, dialogue_b=b.dialogue_id,
            crs_a=a.crs_id, crs_b=b.crs_id, choice=choice,
            comment=(comment or "").strip()[: services.settings.max_message_chars],
            user_id=user_id, user_kind=UserKind.HUMAN,
        )
        settings = services.settings

        def save() -> None:
            nonlocal versions, a, b
            for attempt in range(3):
                try:
                    session.flagged = services.store.save_battle_once(
                        a, b, cast, user_key=session.user_key, ip_key=session.ip_key,
                        started_at=session.started_at, burst_votes=settings.burst_votes,
                        burst_window_s=settings.burst_window_s, min_battle_s=settings.min_battle_s,
                        claim_id=session.ticket, versions=versions,
                    )
                    return
                except DialogueChanged:
                    # The background scorer stores a side's dialogue acts between this step's read and its
                    # write: the conversation is the same, only its version moved. Read again (a side that
                    # really changed, or was deleted or voted, is refused there) and write once more.
                    if attempt == 2:
                        raise
                    versions = (_side_as_stored(services, session, "A"), _side_as_stored(services, session, "B"))
                    a, b = session.dialogues["A"], session.dialogues["B"]

        # The battle's claim ends in the same transaction, so no draw counts it twice (stored and under way).
        # One transaction: the vote and both dialogues, or nothing; only a stored vote keeps its place
        # under the limits (`admission` gives it back otherwise).
        try:
            with admission, refused_when_full(a, b):
                services.pair_scheduler.complete(session.ticket, save)
        except BattleAlreadyVoted:
            raise refuse("This battle already has a vote; press “New battle” for another.") from None
        session.vote = cast
        if session.flagged:
            log.warning("vote %s flagged: %s", cast.vote_id, session.flagged)
    return cast


# -- the reveal ------------------------------------------------------------------------------


def system_card(services: Services, crs_id: str) -> str:
    """Under the pane's title (which names the system) after the vote: one line about the system."""
    return escape_text(services.registry.blurb(crs_id) or services.registry.title(crs_id))


def reveal_markdown(cast: Vote, services: Optional[Services] = None) -> str:
    """The line under the vote: thanks, and who was who (names as people read them)."""
    title = services.registry.title if services is not None else (lambda name: name)
    a, b = escape_text(title(cast.crs_a)), escape_text(title(cast.crs_b))
    verdict = {
        "A": f"You preferred **{a}**.",
        "B": f"You preferred **{b}**.",
        "tie": "You called it a tie.",
        "both_bad": "You found both disappointing.",
    }[cast.choice]
    return (
        f"Thank you, your vote was saved. System A was **{a}** and System B was **{b}** (see the top of "
        f"each conversation). {verdict} Press **New battle** for another round."
    )
