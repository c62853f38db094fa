"""Battle tab: two anonymous systems side by side, then a vote.

A battle's systems are drawn by `webapp.pairing` (least-played pair first,
sides at random) and stay on the server: the page only ever sees "System A"
and "System B" until the vote is stored. Each pane is its own conversation
with its own input, items and Satisfied/Frustrated buttons; both can be used
at once. The per-session `BattleSession` is created by "New battle" and
afterwards only mutated in place (never returned as an output), so events of
the two panes running concurrently cannot overwrite each other's changes.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Optional

import gradio as gr

from arena.crs_interface import CRSUnavailable
from arena.dialogue import Dialogue, UserInfo, UserKind, Vote, new_id, utc_now
from webapp.pairing import NotEnoughSystems, SharedPairScheduler
from arena.runner import DialogueEnded, MessageRejected, finish_dialogue
from arena.store_safety import BattleAlreadyVoted, save_battle_once
from webapp.services import Services
from webapp.ui import aspect_form
from webapp.ui.chat_tab import CONSENT, session_user_id
from webapp.ui.render import chat_messages, escape_text, items_markdown, latest_items
from webapp.vote_limits import LimitReached, limiter_for, origin_key, request_origin
from webapp.ui.refusal import refuse

log = logging.getLogger(__name__)

SIDES = ("A", "B")
VOTE_LABELS = {"A": "A is better", "B": "B is better", "tie": "Tie", "both_bad": "Both are bad"}
NOT_STARTED = "_Press **New battle** to meet two anonymous systems._"


@dataclass
class BattleSession:
    battle_id: str
    ticket: Optional[str]
    dialogues: dict[str, Dialogue]  # side -> dialogue
    vote: Optional[Vote] = None
    started_at: datetime = field(default_factory=utc_now)
    user_key: str = "user:unknown"  # hashed session and IP (webapp.vote_limits.origin_key)
    ip_key: str = "ip:unknown"
    flagged: Optional[str] = None  # why the stored vote was flagged, if it was
    lock: threading.Lock = field(default_factory=threading.Lock)
    busy: dict[str, threading.Lock] = field(default_factory=lambda: {s: threading.Lock() for s in SIDES})

    def rated(self, side: str) -> bool:
        return self.dialogues[side].feedback is not None

    def both_rated(self) -> bool:
        return all(self.rated(s) for s in SIDES)


def scheduler_for(services: Services) -> SharedPairScheduler:
    """One scheduler per Services, counting human battles stored or under way in any app process."""
    scheduler = services.extras.get("pair_scheduler")
    if scheduler is None:
        scheduler = services.extras.setdefault("pair_scheduler", SharedPairScheduler(services.store))
    return scheduler


def release(services: Services, session: Optional[BattleSession]) -> None:
    if session is not None and session.vote is None:
        scheduler_for(services).done(session.ticket)


def origin_keys(services: Services, request: Any) -> tuple[str, str]:
    """Hashed (user, IP) keys of a request, salted with the database's own secret."""
    salt = services.extras.get("origin_salt")
    if salt is None:
        salt = services.extras.setdefault("origin_salt", services.store.get_or_create_secret("origin_salt"))
    session, host = request_origin(request)
    return origin_key("user", session, salt), origin_key("ip", host, salt)


def start_battle(services: Services, user_id: str, previous: Optional[BattleSession] = None,
                 request: Any = None) -> BattleSession:
    user_key, ip_key = origin_keys(services, request)
    try:
        limiter_for(services).check("battle", user_key, ip_key)
    except LimitReached as exc:
        raise refuse(str(exc)) from None
    release(services, previous)
    try:
        (crs_a, crs_b), ticket = scheduler_for(services).draw(services.registry.available())
    except NotEnoughSystems:
        raise refuse(
            "A battle needs at least two available systems; the Chat tab lists which are ready."
        ) from None
    battle_id = new_id()
    dialogues = {
        side: Dialogue(
            crs_id=crs,
            user=UserInfo(kind=UserKind.HUMAN, id=user_id),
            metadata={"source": "battle", "battle_id": battle_id, "side": side},
        )
        for side, crs in zip(SIDES, (crs_a, crs_b), strict=True)
    }
    return BattleSession(battle_id=battle_id, ticket=ticket, dialogues=dialogues, user_key=user_key,
                         ip_key=ip_key)


def _session(session: Optional[BattleSession]) -> BattleSession:
    if session is None:
        raise refuse("Press “New battle” first.")
    return session


def send(services: Services, session: Optional[BattleSession], side: str, text: str) -> str:
    """One turn in one pane; returns the pane's status line."""
    session = _session(session)
    dialogue = session.dialogues[side]
    if session.rated(side):
        raise refuse(f"The conversation with System {side} has ended.")
    if dialogue.ended:
        raise refuse(
            f"The conversation with System {side} reached its limit of {services.settings.max_turns} turns; "
            "please rate it with Satisfied or Frustrated."
        )
    if not session.busy[side].acquire(blocking=False):
        raise refuse(f"System {side} is still answering your previous message.")
    try:
        try:
            runner = services.runner_for(dialogue.crs_id)
        except CRSUnavailable:
            raise refuse(f"System {side} is unavailable right now; please start a new battle.") from None
        try:
            reply = runner.user_turn(dialogue, text)
        except (MessageRejected, DialogueEnded) as exc:
            raise refuse(str(exc)) from None
        services.store.save_dialogue(dialogue)
    finally:
        session.busy[side].release()
    if dialogue.ended:
        return (
            f"This conversation reached its limit of {services.settings.max_turns} turns. "
            "Please tell us whether you were satisfied or frustrated."
        )
    if reply.error:
        return (f"System {side} had a problem answering, so this battle will not count for either system. "
                "You may go on, or press “New battle” for another.")
    return ""


def rate(services: Services, session: Optional[BattleSession], side: str, sentiment: str) -> bool:
    """End one pane with the user's verdict; returns whether both panes are now rated."""
    session = _session(session)
    dialogue = session.dialogues[side]
    if not dialogue.utterances:
        raise refuse(f"Chat with System {side} before rating it.")
    with session.busy[side]:  # never while a reply is being written into the dialogue
        with session.lock:
            if session.rated(side):
                raise refuse(f"You already rated System {side}.")
            finish_dialogue(dialogue, sentiment)
    # Stored and queued for scoring now; exports and the leaderboard count it only once the vote is in.
    services.dialogue_finished(dialogue)
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
            limiter_for(services).check("vote", session.user_key, session.ip_key)
        except LimitReached as exc:
            raise refuse(str(exc)) from None
        a, b = session.dialogues["A"], session.dialogues["B"]
        cast = Vote(
            battle_id=session.battle_id, dialogue_a=a.dialogue_id, dialogue_b=b.dialogue_id,
            crs_a=a.crs_id, crs_b=b.crs_id, choice=choice,
            comment=(comment or "").strip()[: services.settings.max_message_chars],
            user_id=user_id, user_kind=UserKind.HUMAN,
        )
        settings = services.settings

        def save() -> None:
            session.flagged = save_battle_once(
                services.store, a, b, cast, user_key=session.user_key, ip_key=session.ip_key,
                started_at=session.started_at, burst_votes=settings.burst_votes,
                burst_window_s=settings.burst_window_s, min_battle_s=settings.min_battle_s,
                claim_id=session.ticket,
            )

        # The battle's claim ends in the same transaction, so no draw counts it twice (stored and under way).
        try:
            scheduler_for(services).complete(session.ticket, save)
        except BattleAlreadyVoted:
            raise refuse("This battle already has a vote; press “New battle” for another.") from None
        session.vote = cast
        if session.flagged:
            log.warning("vote %s flagged: %s", cast.vote_id, session.flagged)
    return cast


def reveal_markdown(cast: Vote) -> str:
    verdict = {
        "A": f"You preferred **{escape_text(cast.crs_a)}**.",
        "B": f"You preferred **{escape_text(cast.crs_b)}**.",
        "tie": "You called it a tie.",
        "both_bad": "You found both disappointing.",
    }[cast.choice]
    return (
        f"Thank you, your vote was saved. System A was **{escape_text(cast.crs_a)}** and System B was "
        f"**{escape_text(cast.crs_b)}**. {verdict} Press **New battle** for another round."
    )


def build(services: Services) -> None:
    session_state = gr.State(None)
    form = aspect_form.form_for(services)
    gr.Markdown(
        "Chat with two anonymous systems at the same time, end each conversation with **Satisfied** or "
        "**Frustrated**, then vote for the better one. Their names are revealed after your vote.",
    )
    gr.Markdown(f"**Before you start:** {CONSENT}", elem_id="battle-consent")
    new_button = gr.Button("New battle", variant="primary", elem_id="battle-new")
    panes: dict[str, dict[str, Any]] = {}
    with gr.Row(equal_height=False):
        for side in SIDES:
            s = side.lower()
            with gr.Column(variant="panel"):
                title = gr.Markdown(f"### System {side}", elem_id=f"battle-title-{s}")
                chatbot = gr.Chatbot(label=f"System {side}", height=380, elem_id=f"battle-chat-{s}",
                                     feedback_options=tuple(aspect_form.reply_options(form)) or None)
                message = gr.Textbox(
                    label="Your message", placeholder=f"Message System {side}...", max_lines=4,
                    interactive=False, elem_id=f"battle-msg-{s}",
                )
                send_button = gr.Button("Send", elem_id=f"battle-send-{s}")
                items = gr.Markdown(items_markdown([]), elem_id=f"battle-items-{s}")
                status = gr.Markdown(NOT_STARTED, elem_id=f"battle-status-{s}")
                with gr.Row():
                    satisfied = gr.Button("Satisfied", elem_id=f"battle-satisfied-{s}")
                    frustrated = gr.Button("Frustrated", variant="stop", elem_id=f"battle-frustrated-{s}")
                panel = aspect_form.build_panel(form, f"battle-{s}",
                                                f"Tell us more about System {side} (optional)")
            panes[side] = dict(title=title, chatbot=chatbot, message=message, send=send_button, items=items,
                               status=status, satisfied=satisfied, frustrated=frustrated, panel=panel)
    with gr.Column(visible=False, elem_id="battle-vote-panel") as vote_panel:
        gr.Markdown("### Which system was better?")
        comment = gr.Textbox(label="Optional comment", max_lines=3, elem_id="battle-vote-comment")
        with gr.Row():
            vote_buttons = {
                choice: gr.Button(label, elem_id=f"battle-vote-{choice.replace('_', '-').lower()}")
                for choice, label in VOTE_LABELS.items()
            }
    result = gr.Markdown("", elem_id="battle-result")

    def pane_view(session: BattleSession, side: str) -> tuple[Any, ...]:
        d = session.dialogues[side]
        return chat_messages(d), items_markdown(latest_items(d))

    def on_new(old: Optional[BattleSession], request: gr.Request) -> tuple[Any, ...]:
        session = start_battle(services, session_user_id(request), old, request)
        hello = "Say hello and tell the system what you would like to watch."
        per_side = []
        for side in SIDES:
            per_side += [
                f"### System {side}", [], items_markdown([]), hello, gr.Textbox(value="", interactive=True)
            ]
        panels = [update for side in SIDES for update in panes[side]["panel"].hide()]
        return (session, *per_side, gr.Column(visible=False), "", "", *panels)

    new_outputs: list[Any] = [session_state]
    for side in SIDES:
        p = panes[side]
        new_outputs += [p["title"], p["chatbot"], p["items"], p["status"], p["message"]]
    new_outputs += [vote_panel, comment, result]
    for side in SIDES:
        new_outputs += panes[side]["panel"].outputs
    new_button.click(on_new, [session_state], new_outputs, api_name="battle_start")

    for side in SIDES:
        p, s = panes[side], side.lower()

        def on_send(text: str, session: Optional[BattleSession], side: str = side) -> tuple[Any, ...]:
            status_text = send(services, session, side, text)
            return (*pane_view(session, side), status_text, "")

        send_args = dict(
            fn=on_send, inputs=[p["message"], session_state],
            outputs=[p["chatbot"], p["items"], p["status"], p["message"]],
        )
        p["send"].click(api_name=f"battle_send_{s}", **send_args)
        p["message"].submit(api_name=False, **send_args)

        for sentiment in ("satisfied", "frustrated"):

            def on_rate(session: Optional[BattleSession], side: str = side, sentiment: str = sentiment):
                both = rate(services, session, side, sentiment)
                note = f"You were **{sentiment}** with System {side}."
                if both:
                    note += " Now vote below."
                else:
                    note += " Finish the other conversation, then vote."
                return (note, gr.Textbox(interactive=False), gr.Column(visible=True) if both else gr.skip(),
                        *panes[side]["panel"].show())

            p[sentiment].click(
                on_rate, [session_state], [p["status"], p["message"], vote_panel, *p["panel"].outputs],
                api_name=f"battle_{sentiment}_{s}",
            )

        def on_aspects(session: Optional[BattleSession], *answers: Any, side: str = side) -> tuple[Any, ...]:
            dialogue = _session(session).dialogues[side]
            return panes[side]["panel"].hide(
                aspect_form.rate_dialogue(services, dialogue, answers, dialogue.user.id))

        def on_reply_rating(session: Optional[BattleSession], data: gr.LikeData, side: str = side) -> str:
            if session is None:
                return ""
            dialogue = session.dialogues[side]
            with session.busy[side]:  # never while a reply is being written into the dialogue
                return aspect_form.rate_reply(services, dialogue, data.index, data.liked, dialogue.user.id)

        panel = p["panel"]
        panel.save.click(on_aspects, [session_state, *panel.inputs], panel.outputs,
                         api_name=f"battle_aspects_{s}")
        panel.skip.click(lambda panel=panel: panel.hide(aspect_form.SKIPPED), None, panel.outputs,
                         api_visibility="private")
        if form.utterance:
            p["chatbot"].like(on_reply_rating, [session_state], [p["status"]], api_visibility="private")

    for choice, button in vote_buttons.items():

        def on_vote(comment_text: str, session: Optional[BattleSession], request: gr.Request, choice=choice):
            cast = vote(services, session, choice, comment_text, session_user_id(request))
            titles = [f"### System {side}: {escape_text(cast.crs_a if side == 'A' else cast.crs_b)}"
                      for side in SIDES]
            return (reveal_markdown(cast), *titles, gr.Column(visible=False), "")

        button.click(
            on_vote, [comment, session_state],
            [result, panes["A"]["title"], panes["B"]["title"], vote_panel, comment],
            api_name=f"battle_vote_{choice.lower()}",
        )
