"""Battle tab: two anonymous systems side by side, then a vote.

The rules live in `webapp.sessions.battle`; this module lays out the page
and keeps its controls honest: a control that does not apply now is disabled
(Send while the system answers, rating after rating, the vote until both
conversations are rated), and a refusal is a line in the status line by the
control, never an error toast, with every other output left as it was.

A message shows the moment it is sent, with a typing indicator until the
reply (the send handler is a generator: first the echo, then the reply).
After the vote each pane names its system at the top ("KBRD (ReDial)") with
one line about it. A reload finds the participant's battle under way.

Below the panes one more box sends the same message to both systems at once
(as LMArena does); each answers in its own pane, and a side that cannot take
it now (rated, at its limit, still answering) is named in a line under the
box. While a battle is under way (a message sent, no vote yet) its message
boxes carry the mark that makes "New battle" and leaving the page ask first
(`webapp.ui.parts.under_way`).

The page remembers which battle it shows. A step from a page whose battle was
voted, deleted or replaced on another app process (`page_behind`) stores
nothing and says "changed elsewhere"; the event chained after it then draws
the whole page as the store has the participant's battle now, with what was
typed left in the boxes.

The components are built part by part in `webapp.ui.battle_layout`; here are
what each control shows (the view functions), what each event does
(`BattleEvents`) and the wiring of every event (`_wire`).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any, Iterator, Optional

import gradio as gr

from arena.text_safety import escape_text
from webapp.services import Services
from webapp.sessions import aspect_ratings
from webapp.sessions.battle import (
    SIDES, BattleSession, check_send, check_send_both, current, page_behind, partly_sent, rate,
    reveal_markdown, send, start_battle, system_card, vote,
)
from webapp.sessions.refusal import Refusal
from webapp.sessions.session_choices import OFFERED
from webapp.sessions.turn_step import CHANGED_ELSEWHERE, limit_status
from webapp.sessions.warming import warming_line
from webapp.ui.battle_layout import (
    GETTING_READY, NOT_STARTED, VOTE_LABELS, VOTE_LOCKED, BattlePage, build_page,
)
from webapp.ui.parts import under_way
from webapp.ui.parts.participant import ParticipantSlot, user_of
from webapp.ui.parts.refusal_notice import notice
from webapp.ui.parts.render import chat_messages, echo_messages, items_markdown, latest_items
from webapp.sessions.turns_in_flight import session_of

# The tab's texts live with its components; GETTING_READY is read from here as well.
__all__ = ["GETTING_READY", "NOT_STARTED", "VOTE_LABELS", "VOTE_LOCKED", "build"]

HELLO = "Say hello and tell the system what you would like to watch."
VOTE_OPEN = "Both conversations are rated: which system was better?"


# -- what each control shows, from the battle's state -------------------------------------------


def pane_title(services: Services, session: Optional[BattleSession], side: str) -> str:
    if session is not None and session.vote is not None:
        return f"### System {side}: {escape_text(services.registry.title(session.dialogues[side].crs_id))}"
    return f"### System {side}"


def pane_reveal(services: Services, session: Optional[BattleSession], side: str) -> Any:
    if session is None or session.vote is None:
        return gr.Markdown("", visible=False)
    return gr.Markdown(system_card(services, session.dialogues[side].crs_id), visible=True)


def pane_status(services: Services, session: Optional[BattleSession], side: str) -> str:
    if session is None:
        return NOT_STARTED
    dialogue = session.dialogues[side]
    if dialogue.feedback is not None:
        return f"You were **{dialogue.feedback.sentiment}** with System {side}."
    if not dialogue.utterances:
        return HELLO
    return limit_status(dialogue, services.settings.max_turns)


def can_send(services: Services, session: Optional[BattleSession], side: str) -> bool:
    if session is None or session.vote is not None:
        return False
    dialogue = session.dialogues[side]
    return (dialogue.feedback is None and not dialogue.ended
            and dialogue.num_turns < services.settings.max_turns)


def can_rate(session: Optional[BattleSession], side: str) -> bool:
    if session is None or session.vote is not None:
        return False
    dialogue = session.dialogues[side]
    return dialogue.feedback is None and bool(dialogue.agent_turns())


def battle_under_way(session: Optional[BattleSession]) -> bool:
    """A message sent and no vote yet: starting another battle or leaving the page would lose it."""
    return (session is not None and session.vote is None
            and any(d.utterances for d in session.dialogues.values()))


def pane_view(services: Services, session: Optional[BattleSession], side: str, *, status: Any = None,
              message: Any = None, busy: bool = False) -> tuple[Any, ...]:
    """Updates for (chatbot, items, status, message, send, satisfied, frustrated); `message`: the box's new
    text (None keeps what is typed there)."""
    dialogue = session.dialogues[side] if session is not None else None
    sending = can_send(services, session, side) and not busy
    rating = can_rate(session, side) and not busy
    mark = battle_under_way(session)
    box = (under_way.message_box(mark, interactive=sending) if message is None
           else under_way.message_box(mark, value=message, interactive=sending))
    return (
        chat_messages(dialogue), items_markdown(latest_items(dialogue)),
        pane_status(services, session, side) if status is None else status,
        box, gr.Button(interactive=sending), gr.Button(interactive=rating), gr.Button(interactive=rating),
    )


def both_view(services: Services, session: Optional[BattleSession], *, message: Any = None,
              busy: bool = False) -> tuple[Any, Any]:
    """Updates for (the box to both systems, its Send): usable while either side can take a message."""
    sending = not busy and any(can_send(services, session, side) for side in SIDES)
    update = {"interactive": sending} if message is None else {"value": message, "interactive": sending}
    return gr.Textbox(**update), gr.Button(interactive=sending)


def vote_view(session: Optional[BattleSession], result: Any = "") -> tuple[Any, ...]:
    """Updates for (vote panel, hint, comment, the four vote buttons, result)."""
    if session is None:
        return (gr.Column(visible=False), VOTE_LOCKED, gr.Textbox(value="", interactive=False),
                *[gr.Button(interactive=False) for _ in VOTE_LABELS], result)
    open_ = session.vote is None and session.both_rated()
    hint = VOTE_OPEN if open_ else ("" if session.vote is not None else VOTE_LOCKED)
    comment = (gr.Textbox(interactive=open_) if session.vote is None
               else gr.Textbox(value="", interactive=False))
    buttons = [gr.Button(interactive=open_) for _ in VOTE_LABELS]
    return (gr.Column(visible=True), hint, comment, *buttons, result)


def _skips(n: int) -> tuple[Any, ...]:
    return tuple(gr.skip() for _ in range(n))


# -- the page ---------------------------------------------------------------------------------


def build(services: Services, participant: Optional[ParticipantSlot] = None) -> None:
    form = aspect_ratings.form_for(services)
    page = build_page(participant, form)
    _wire(page, BattleEvents(services, page), participant, show_reply_ratings=bool(form.utterance))


class BattleEvents:
    """What each event of the Battle tab does; every handler returns the updates for its outputs. A handler
    for one side (or one choice) is made by a method taking that side, and keeps it as a default argument."""

    def __init__(self, services: Services, page: BattlePage):
        self.services = services
        self.page = page

    def _current(self, participant_id: Optional[str], request: gr.Request) -> Optional[BattleSession]:
        return current(self.services, user_of(self.services, participant_id, request), request)

    def whole_page(self, session: Optional[BattleSession], notice_text: str = "",
                   message: Optional[str] = "") -> tuple[Any, ...]:
        """Every output of `page.outputs`, drawn from the battle's state (new battle, reload)."""
        services = self.services
        out: list[Any] = [gr.Button(interactive=True), notice_text]
        for side in SIDES:
            out += [pane_title(services, session, side), pane_reveal(services, session, side)]
        for side in SIDES:
            out += pane_view(services, session, side, message=message)
        out += vote_view(session, reveal_markdown(session.vote, services) if session and session.vote else "")
        out += [*both_view(services, session, message=message), ""]
        for side in SIDES:
            out += self.page.panes[side].panel.hide()
        out.append(session.battle_id if session is not None else None)
        return tuple(out)

    def on_new(self, participant_id: Optional[str], request: gr.Request) -> tuple[Any, ...]:
        # No docstring: Gradio would publish it as this API endpoint's description (/battle_start).
        user = user_of(self.services, participant_id, request)
        try:
            session = start_battle(self.services, user, current(self.services, user, request), request)
        except Refusal as exc:  # the battle under way, if any, stays as it is
            return (gr.skip(), notice(exc), *_skips(len(self.page.outputs) - 2))
        return self.whole_page(session)

    def on_resume(self, participant_id: Optional[str], request: gr.Request) -> tuple[Any, ...]:
        """Once the page knows its participant: their battle under way, if any, and "New battle" enabled."""
        session = self._current(participant_id, request)
        if session is None or session.vote is not None:  # a finished battle is not shown again
            return (gr.Button(interactive=True), "", *_skips(len(self.page.outputs) - 2))
        # A reply still being written (its message sent just before the reload) is shown with its message:
        # the turn goes on in its handler's thread even when the page that sent it has gone.
        for side in SIDES:
            with session.busy[side]:
                pass
        return self.whole_page(session, "Welcome back: your battle continues where you left it.",
                               message=None)

    def on_redraw(self, participant_id: Optional[str], request: gr.Request) -> tuple[Any, ...]:
        """After the participant's data changed (deleted): the page as their battle now stands."""
        session = self._current(participant_id, request)
        return self.whole_page(session if session is not None and session.vote is None else None)

    def on_behind(self, was_behind: bool, participant_id: Optional[str],
                  request: gr.Request) -> tuple[Any, ...]:
        """After a step that found the page behind the store: the page drawn afresh, as the participant's
        battle now stands (none, or the one started elsewhere), with what is typed left in the boxes."""
        if not was_behind:
            return _skips(len(self.page.outputs) + 1)
        session = self._current(participant_id, request)
        shown = session if session is not None and session.vote is None else None
        return (*self.whole_page(shown, notice(CHANGED_ELSEWHERE), message=None), False)

    def send_handler(self, side: str):
        services = self.services

        def on_send(text: str, participant_id: Optional[str], shown: Optional[str], request: gr.Request,
                    side: str = side) -> Iterator[tuple[Any, ...]]:
            session = self._current(participant_id, request)
            if page_behind(session, shown):  # this pane as stored now, the message kept; the page follows
                yield (*pane_view(services, session, side, status=notice(CHANGED_ELSEWHERE), message=text),
                       *both_view(services, session), True)
                return
            try:
                check_send(services, session, side, text)
            except Refusal as exc:  # the message stays in its box, to be fixed and sent again
                yield (gr.skip(), gr.skip(), notice(exc), *_skips(7))
                return
            dialogue = session.dialogues[side]
            yield (echo_messages(dialogue, text), gr.skip(), "",
                   under_way.message_box(True, value="", interactive=False), gr.Button(interactive=False),
                   gr.Button(interactive=False), gr.Button(interactive=False), *_skips(3))
            warming = warming_line(services, dialogue.crs_id)  # the reply follows once the model has loaded
            if warming:
                yield (gr.skip(), gr.skip(), warming, *_skips(7))
            try:
                with services.turns_in_flight.turn(session_of(request)):  # a closed page waits for its reply
                    status_text = send(services, session, side, text)
            except Refusal as exc:
                yield (*pane_view(services, session, side, status=notice(exc), message=text),
                       *both_view(services, session), gr.skip())
                return
            yield (*pane_view(services, session, side, status=status_text), *both_view(services, session),
                   gr.skip())

        return on_send

    def rate_handler(self, side: str, sentiment: str):
        services, page = self.services, self.page

        def on_rate(participant_id: Optional[str], shown: Optional[str], request: gr.Request,
                    side: str = side, sentiment: str = sentiment) -> tuple[Any, ...]:
            session = self._current(participant_id, request)
            rate_outputs = len(page.rate_outputs(side)) - 1  # all but `behind`
            if page_behind(session, shown):  # nothing rated; the page is drawn as stored next
                return (notice(CHANGED_ELSEWHERE), *_skips(rate_outputs - 1), True)
            try:
                both = rate(services, session, side, sentiment)
            except Refusal as exc:
                return (notice(exc), *_skips(rate_outputs - 1), gr.skip())
            note = f"You were **{sentiment}** with System {side}."
            note += " Now vote below." if both else " Finish the other conversation, then vote."
            return (note, gr.Textbox(interactive=False), gr.Button(interactive=False),
                    gr.Button(interactive=False), gr.Button(interactive=False), *vote_view(session),
                    *page.panes[side].panel.show(), *both_view(services, session), gr.skip())

        return on_rate

    def aspects_handler(self, side: str):
        services, panel = self.services, self.page.panes[side].panel

        def on_aspects(participant_id: Optional[str], request: gr.Request, *answers: Any,
                       side: str = side) -> tuple[Any, ...]:
            session = self._current(participant_id, request)
            try:
                if session is None:
                    raise aspect_ratings.no_conversation()
                dialogue = session.dialogues[side]
                saved = aspect_ratings.rate_dialogue(services, dialogue, answers, dialogue.user.id)
            except Refusal as exc:  # the answers stay picked
                return panel.keep(notice(exc))
            return panel.hide(saved)

        return on_aspects

    def reply_rating_handler(self, side: str):
        services = self.services

        def on_reply_rating(participant_id: Optional[str], data: gr.LikeData, request: gr.Request,
                            side: str = side) -> str:
            session = self._current(participant_id, request)
            if session is None:
                return ""
            dialogue = session.dialogues[side]
            with session.busy[side]:  # never while a reply is being written into the dialogue
                try:
                    return aspect_ratings.rate_reply(services, dialogue, data.index, data.liked,
                                                     dialogue.user.id)
                except Refusal as exc:  # a full store
                    return notice(exc)

        return on_reply_rating

    def on_send_both(self, text: str, participant_id: Optional[str], shown: Optional[str],
                     request: gr.Request) -> Iterator[tuple[Any, ...]]:
        """One message to both systems: each side that takes it shows it at once and answers in its own pane,
        both at the same time; a side that cannot take it now is named under the box. A side whose turn is
        refused gets the message in its own box; when no side stored it, it goes back in this one."""
        services = self.services
        session = self._current(participant_id, request)
        if page_behind(session, shown):  # both panes as stored now, the message kept; the page follows
            yield (*pane_view(services, session, "A"), *pane_view(services, session, "B"),
                   *both_view(services, session, message=text), notice(CHANGED_ELSEWHERE), True)
            return
        try:
            taken, refused = check_send_both(services, session, text)
        except Refusal as exc:  # the message stays in the box, to be fixed and sent again
            yield (*_skips(len(self.page.send_both_outputs) - 1), notice(exc), gr.skip())
            return
        echoes = {
            side: (echo_messages(session.dialogues[side], text), gr.skip(), "",
                   under_way.message_box(True, interactive=False), gr.Button(interactive=False),
                   gr.Button(interactive=False), gr.Button(interactive=False)) if side in taken else _skips(7)
            for side in SIDES
        }
        line = notice(partly_sent(refused)) if refused else ""
        yield (*echoes["A"], *echoes["B"], *both_view(services, session, message="", busy=True), line,
               gr.skip())
        with services.turns_in_flight.turn(session_of(request)), \
                ThreadPoolExecutor(max_workers=len(taken), thread_name_prefix="battle-both") as pool:
            turns = {pool.submit(send, services, session, side, text): side for side in taken}
            views = {side: _skips(7) for side in SIDES}  # a pane the message did not go to stays as it is
            stored = False
            for answered, turn in enumerate(as_completed(turns), 1):
                side = turns[turn]
                try:
                    views[side] = pane_view(services, session, side, status=turn.result())
                    stored = True
                except Refusal as exc:  # the message in the pane's own box, to send it to this side again
                    views[side] = pane_view(services, session, side, status=notice(exc), message=text)
                done = answered == len(taken)  # the last update shows both answers (what an API client reads)
                box = both_view(services, session, message=None if stored else text)
                yield (*(views["A"] if done or side == "A" else _skips(7)),
                       *(views["B"] if done or side == "B" else _skips(7)),
                       *(box if done else _skips(2)), line if done else gr.skip(), gr.skip())

    def vote_handler(self, choice: str):
        services, page = self.services, self.page

        def on_vote(comment_text: str, participant_id: Optional[str], shown: Optional[str],
                    request: gr.Request, choice: str = choice) -> tuple[Any, ...]:
            user = user_of(services, participant_id, request)
            session = current(services, user, request)
            skipped = len(page.vote_result_outputs) - 1
            if page_behind(session, shown):  # no vote stored; the page is drawn as stored next
                return (notice(CHANGED_ELSEWHERE), *_skips(skipped), True)
            try:
                cast = vote(services, session, choice, comment_text, user)
            except Refusal as exc:  # the comment stays in its box
                return (notice(exc), *_skips(skipped), gr.skip())
            controls = []
            for side in SIDES:
                controls += pane_view(services, session, side)[2:]
            return (reveal_markdown(cast, services),
                    *[pane_title(services, session, side) for side in SIDES],
                    *[pane_reveal(services, session, side) for side in SIDES],
                    *vote_view(session)[:-1], *controls, *both_view(services, session), "", gr.skip())

        return on_vote


def _wire(page: BattlePage, events: BattleEvents, participant: Optional[ParticipantSlot],
          show_reply_ratings: bool) -> None:
    """Every event of the Battle tab, with its inputs and outputs. Each step that may find the page behind
    the store is followed by `on_behind`, which then draws the page afresh."""
    # Every handler that updates a choice input is wrapped by `OFFERED.offering` with its outputs, so that
    # the API guard checks a pick against the choices that session was given (tests/safety/
    # test_session_choices.py goes through every event of the page).
    offered = OFFERED.offering
    redraw_outputs = page.outputs + [page.behind]
    redraw_args = dict(fn=offered(events.on_behind, redraw_outputs), inputs=[page.behind, page.user],
                       outputs=redraw_outputs, api_visibility="private", show_progress="hidden")
    page.new.click(offered(events.on_new, page.outputs), [page.user], page.outputs, api_name="battle_start")
    if participant is not None:
        participant.after_identify(events.on_resume, [participant.user], page.outputs,
                                   redraw=events.on_redraw, busy_line=page.notice)
    for side in SIDES:
        pane, s = page.panes[side], side.lower()
        send_args = dict(fn=events.send_handler(side), inputs=[pane.message, page.user, page.battle],
                         outputs=pane.outputs + page.both_outputs + [page.behind], show_progress="hidden")
        pane.send.click(api_name=f"battle_send_{s}", **send_args).then(**redraw_args)
        pane.message.submit(api_name=False, **send_args).then(**redraw_args)
        for sentiment in ("satisfied", "frustrated"):
            rate_outputs = page.rate_outputs(side)
            getattr(pane, sentiment).click(
                offered(events.rate_handler(side, sentiment), rate_outputs), [page.user, page.battle],
                rate_outputs, api_name=f"battle_{sentiment}_{s}",
            ).then(**redraw_args)
        panel = pane.panel
        aspect_inputs = [page.user, *panel.inputs]
        panel.save.click(offered(events.aspects_handler(side), panel.outputs, aspect_inputs), aspect_inputs,
                         panel.outputs, api_name=f"battle_aspects_{s}")
        panel.skip.click(offered(lambda panel=panel: panel.hide(aspect_ratings.SKIPPED), panel.outputs), None,
                         panel.outputs, api_visibility="private")
        if show_reply_ratings:
            pane.chatbot.like(events.reply_rating_handler(side), [page.user], [pane.status],
                              api_visibility="private")
    gr.on(triggers=[page.both_send.click, page.both_message.submit], fn=events.on_send_both,
          inputs=[page.both_message, page.user, page.battle], outputs=page.send_both_outputs + [page.behind],
          api_name="battle_send_both", trigger_mode="once", show_progress="hidden").then(**redraw_args)
    for choice, button in page.vote_buttons.items():
        button.click(events.vote_handler(choice), [page.comment, page.user, page.battle],
                     page.vote_result_outputs + [page.behind],
                     api_name=f"battle_vote_{choice.lower()}").then(**redraw_args)
