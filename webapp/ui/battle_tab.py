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
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any, Iterator, Optional

import gradio as gr

from webapp.services import Services
from webapp.sessions import aspect_ratings
from webapp.ui.parts import aspect_form
from webapp.sessions.battle import (
    SIDES, BattleSession, check_send, check_send_both, current, page_behind, partly_sent, rate,
    reveal_markdown, send, start_battle, system_card, vote,
)
from webapp.ui.chat_tab import CONSENT
from webapp.ui.parts.participant import ParticipantSlot, user_of
from webapp.sessions.refusal import Refusal
from webapp.sessions.warming import warming_line
from webapp.ui.parts.refusal import notice
from webapp.ui.parts import under_way
from webapp.ui.parts.page_script import KEEPS_DRAFT
from webapp.ui.parts.render import (
    WORKER_CHATBOT_BUTTONS, chat_messages, echo_messages, items_markdown, latest_items,
)
from arena.text_safety import escape_text
from webapp.sessions.turn_step import CHANGED_ELSEWHERE, limit_status

VOTE_LABELS = {"A": "A is better", "B": "B is better", "tie": "Tie", "both_bad": "Both are bad"}
NOT_STARTED = "_Press **New battle** to meet two anonymous systems._"
# Shown by the disabled "New battle" until the page knows its participant (a moment after it loads).
GETTING_READY = "_Getting your page ready: **New battle** is enabled in a moment._"
HELLO = "Say hello and tell the system what you would like to watch."
VOTE_LOCKED = "_The vote opens once you have rated both conversations (Satisfied or Frustrated)._"
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
    return dialogue.feedback is None and not dialogue.ended and dialogue.num_turns < services.settings.max_turns


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
    comment = gr.Textbox(interactive=open_) if session.vote is None else gr.Textbox(value="", interactive=False)
    return (gr.Column(visible=True), hint, comment, *[gr.Button(interactive=open_) for _ in VOTE_LABELS], result)


def _skips(n: int) -> tuple[Any, ...]:
    return tuple(gr.skip() for _ in range(n))


# -- the page ---------------------------------------------------------------------------------


def build(services: Services, participant: Optional[ParticipantSlot] = None) -> None:
    user_state = participant.user if participant is not None else gr.State(None)
    # The battle this page shows (None: none), and whether a step found the page behind the store (that
    # battle voted, deleted or replaced elsewhere): the step after it then draws the page as stored.
    page_battle = gr.State(None)
    behind = gr.State(False)
    form = aspect_ratings.form_for(services)
    gr.Markdown(
        "Chat with two anonymous systems at the same time, end each conversation with **Satisfied** or "
        "**Frustrated**, then vote for the better one. Their names are revealed after your vote.",
    )
    gr.Markdown(f"**Before you start:** {CONSENT}", elem_id="battle-consent")
    with gr.Row(equal_height=False):
        # Enabled once the page knows its participant (a moment after loading), so a battle started
        # at once is theirs.
        new_button = gr.Button("New battle", variant="primary", interactive=participant is None,
                               elem_id="battle-new", scale=0, min_width=160)
        notice_line = gr.Markdown(GETTING_READY if participant is not None else "", elem_id="battle-notice",
                                  elem_classes=["status-line"])
    panes: dict[str, dict[str, Any]] = {}
    with gr.Row(equal_height=False):
        for side in SIDES:
            s = side.lower()
            with gr.Column(variant="panel", min_width=300):
                title = gr.Markdown(f"### System {side}", elem_id=f"battle-title-{s}")
                reveal = gr.Markdown("", visible=False, elem_id=f"battle-reveal-{s}",
                                     elem_classes=["battle-reveal"])
                chatbot = gr.Chatbot(label=f"System {side}", height=380, elem_id=f"battle-chat-{s}",
                                     buttons=WORKER_CHATBOT_BUTTONS, elem_classes=["worker-chat"],
                                     feedback_options=tuple(aspect_ratings.reply_options(form)) or None)
                items = gr.Markdown(items_markdown([]), elem_id=f"battle-items-{s}")
                message = gr.Textbox(
                    label="Your message", placeholder=f"Message System {side}...", max_lines=4,
                    interactive=False, elem_id=f"battle-msg-{s}", elem_classes=[KEEPS_DRAFT],
                )
                send_button = gr.Button("Send", interactive=False, elem_id=f"battle-send-{s}")
                status = gr.Markdown(NOT_STARTED, elem_id=f"battle-status-{s}", elem_classes=["status-line"])
                with gr.Row():
                    satisfied = gr.Button("Satisfied", interactive=False, elem_id=f"battle-satisfied-{s}")
                    frustrated = gr.Button("Frustrated", interactive=False,
                                           elem_id=f"battle-frustrated-{s}")
                panel = aspect_form.build_panel(form, f"battle-{s}",
                                                f"Tell us more about System {side} (optional)")
            panes[side] = dict(title=title, reveal=reveal, chatbot=chatbot, message=message, send=send_button,
                               items=items, status=status, satisfied=satisfied, frustrated=frustrated, panel=panel)
    with gr.Row(equal_height=False):
        both_message = gr.Textbox(label="Your message to both systems", max_lines=4, interactive=False,
                                  placeholder="Message System A and System B...", scale=4, min_width=220,
                                  elem_id="battle-msg-both", elem_classes=[KEEPS_DRAFT])
        both_send = gr.Button("Send to both", interactive=False, scale=1, min_width=140,
                              elem_id="battle-send-both")
    both_notice = gr.Markdown("", elem_id="battle-both-status", elem_classes=["status-line"])
    with gr.Column(visible=False, elem_id="battle-vote-panel") as vote_panel:
        gr.Markdown("### Which system was better?")
        vote_hint = gr.Markdown(VOTE_LOCKED, elem_id="battle-vote-hint")
        comment = gr.Textbox(label="Optional comment", max_lines=3, interactive=False,
                             elem_id="battle-vote-comment")
        with gr.Row():
            vote_buttons = {
                choice: gr.Button(label, interactive=False,
                                  elem_id=f"battle-vote-{choice.replace('_', '-').lower()}")
                for choice, label in VOTE_LABELS.items()
            }
        result = gr.Markdown("", elem_id="battle-result", elem_classes=["status-line"])

    def pane_outputs(side: str) -> list[Any]:
        p = panes[side]
        return [p["chatbot"], p["items"], p["status"], p["message"], p["send"], p["satisfied"], p["frustrated"]]

    vote_outputs = [vote_panel, vote_hint, comment, *vote_buttons.values(), result]
    both_outputs = [both_message, both_send]
    heads = [panes[side][part] for side in SIDES for part in ("title", "reveal")]

    def whole_page(session: Optional[BattleSession], notice_text: str = "",
                   message: Optional[str] = "") -> tuple[Any, ...]:
        """Every output of `page_outputs`, drawn from the battle's state (new battle, reload)."""
        out: list[Any] = [gr.Button(interactive=True), notice_text]
        for side in SIDES:
            out += [pane_title(services, session, side), pane_reveal(services, session, side)]
        for side in SIDES:
            out += pane_view(services, session, side, message=message)
        out += vote_view(session, reveal_markdown(session.vote, services) if session and session.vote else "")
        out += [*both_view(services, session, message=message), ""]
        for side in SIDES:
            out += panes[side]["panel"].hide()
        out.append(session.battle_id if session is not None else None)
        return tuple(out)

    page_outputs = [new_button, notice_line, *heads, *pane_outputs("A"), *pane_outputs("B"), *vote_outputs,
                    *both_outputs, both_notice]
    for side in SIDES:
        page_outputs += panes[side]["panel"].outputs
    page_outputs.append(page_battle)

    def on_new(participant_id: Optional[str], request: gr.Request) -> tuple[Any, ...]:
        user = user_of(services, participant_id, request)
        try:
            session = start_battle(services, user, current(services, user, request), request)
        except Refusal as exc:  # the battle under way, if any, stays as it is
            return (gr.skip(), notice(exc), *_skips(len(page_outputs) - 2))
        return whole_page(session)

    def on_resume(participant_id: Optional[str], request: gr.Request) -> tuple[Any, ...]:
        """Once the page knows its participant: their battle under way, if any, and "New battle" enabled."""
        session = current(services, user_of(services, participant_id, request), request)
        if session is None or session.vote is not None:  # a finished battle is not shown again
            return (gr.Button(interactive=True), "", *_skips(len(page_outputs) - 2))
        # A reply still being written (its message sent just before the reload) is shown with its message:
        # the turn goes on in its handler's thread even when the page that sent it has gone.
        for side in SIDES:
            with session.busy[side]:
                pass
        return whole_page(session, "Welcome back: your battle continues where you left it.", message=None)

    def on_redraw(participant_id: Optional[str], request: gr.Request) -> tuple[Any, ...]:
        """After the participant's data changed (deleted): the page as their battle now stands."""
        session = current(services, user_of(services, participant_id, request), request)
        return whole_page(session if session is not None and session.vote is None else None)

    def on_behind(was_behind: bool, participant_id: Optional[str], request: gr.Request) -> tuple[Any, ...]:
        """After a step that found the page behind the store: the page drawn afresh, as the participant's
        battle now stands (none, or the one started elsewhere), with what is typed left in the boxes."""
        if not was_behind:
            return _skips(len(page_outputs) + 1)
        session = current(services, user_of(services, participant_id, request), request)
        shown = session if session is not None and session.vote is None else None
        return (*whole_page(shown, notice(CHANGED_ELSEWHERE), message=None), False)

    redraw_args = dict(fn=on_behind, inputs=[behind, user_state], outputs=page_outputs + [behind],
                       api_visibility="private", show_progress="hidden")

    new_button.click(on_new, [user_state], page_outputs, api_name="battle_start")
    if participant is not None:
        participant.after_identify(on_resume, [participant.user], page_outputs, redraw=on_redraw,
                                   busy_line=notice_line)

    for side in SIDES:
        p, s = panes[side], side.lower()

        def on_send(text: str, participant_id: Optional[str], shown: Optional[str], request: gr.Request,
                    side: str = side) -> Iterator[tuple[Any, ...]]:
            session = current(services, user_of(services, participant_id, request), request)
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
                status_text = send(services, session, side, text)
            except Refusal as exc:
                yield (*pane_view(services, session, side, status=notice(exc), message=text),
                       *both_view(services, session), gr.skip())
                return
            yield (*pane_view(services, session, side, status=status_text), *both_view(services, session),
                   gr.skip())

        send_args = dict(fn=on_send, inputs=[p["message"], user_state, page_battle],
                         outputs=pane_outputs(side) + both_outputs + [behind], show_progress="hidden")
        p["send"].click(api_name=f"battle_send_{s}", **send_args).then(**redraw_args)
        p["message"].submit(api_name=False, **send_args).then(**redraw_args)

        for sentiment in ("satisfied", "frustrated"):

            def on_rate(participant_id: Optional[str], shown: Optional[str], request: gr.Request,
                        side: str = side, sentiment: str = sentiment) -> tuple[Any, ...]:
                session = current(services, user_of(services, participant_id, request), request)
                rate_outputs = 5 + len(vote_outputs) + len(panes[side]["panel"].outputs) + len(both_outputs)
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
                        *panes[side]["panel"].show(), *both_view(services, session), gr.skip())

            p[sentiment].click(
                on_rate, [user_state, page_battle],
                [p["status"], p["message"], p["send"], p["satisfied"], p["frustrated"], *vote_outputs,
                 *p["panel"].outputs, *both_outputs, behind],
                api_name=f"battle_{sentiment}_{s}",
            ).then(**redraw_args)

        def on_aspects(participant_id: Optional[str], request: gr.Request, *answers: Any,
                       side: str = side) -> tuple[Any, ...]:
            panel = panes[side]["panel"]
            session = current(services, user_of(services, participant_id, request), request)
            try:
                if session is None:
                    raise aspect_ratings.no_conversation()
                dialogue = session.dialogues[side]
                saved = aspect_ratings.rate_dialogue(services, dialogue, answers, dialogue.user.id)
            except Refusal as exc:  # the answers stay picked
                return panel.keep(notice(exc))
            return panel.hide(saved)

        def on_reply_rating(participant_id: Optional[str], data: gr.LikeData, request: gr.Request,
                            side: str = side) -> str:
            session = current(services, user_of(services, participant_id, request), request)
            if session is None:
                return ""
            dialogue = session.dialogues[side]
            with session.busy[side]:  # never while a reply is being written into the dialogue
                try:
                    return aspect_ratings.rate_reply(services, dialogue, data.index, data.liked, dialogue.user.id)
                except Refusal as exc:  # a full store
                    return notice(exc)

        panel = p["panel"]
        panel.save.click(on_aspects, [user_state, *panel.inputs], panel.outputs,
                         api_name=f"battle_aspects_{s}")
        panel.skip.click(lambda panel=panel: panel.hide(aspect_ratings.SKIPPED), None, panel.outputs,
                         api_visibility="private")
        if form.utterance:
            p["chatbot"].like(on_reply_rating, [user_state], [p["status"]], api_visibility="private")

    both_send_outputs = [*pane_outputs("A"), *pane_outputs("B"), *both_outputs, both_notice]

    def on_send_both(text: str, participant_id: Optional[str], shown: Optional[str],
                     request: gr.Request) -> Iterator[tuple[Any, ...]]:
        """One message to both systems: each side that takes it shows it at once and answers in its own pane,
        both at the same time; a side that cannot take it now is named under the box. A side whose turn is
        refused gets the message in its own box; when no side stored it, it goes back in this one."""
        session = current(services, user_of(services, participant_id, request), request)
        if page_behind(session, shown):  # both panes as stored now, the message kept; the page follows
            yield (*pane_view(services, session, "A"), *pane_view(services, session, "B"),
                   *both_view(services, session, message=text), notice(CHANGED_ELSEWHERE), True)
            return
        try:
            taken, refused = check_send_both(services, session, text)
        except Refusal as exc:  # the message stays in the box, to be fixed and sent again
            yield (*_skips(len(both_send_outputs) - 1), notice(exc), gr.skip())
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
        with ThreadPoolExecutor(max_workers=len(taken), thread_name_prefix="battle-both") as pool:
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

    gr.on(triggers=[both_send.click, both_message.submit], fn=on_send_both,
          inputs=[both_message, user_state, page_battle], outputs=both_send_outputs + [behind],
          api_name="battle_send_both", trigger_mode="once", show_progress="hidden").then(**redraw_args)

    vote_result_outputs = [result, panes["A"]["title"], panes["B"]["title"], panes["A"]["reveal"],
                           panes["B"]["reveal"], *vote_outputs[:-1]]
    for side in SIDES:
        vote_result_outputs += pane_outputs(side)[2:]
    vote_result_outputs += both_outputs
    vote_result_outputs.append(notice_line)  # a vote ends the battle: "Welcome back ..." no longer holds

    for choice, button in vote_buttons.items():

        def on_vote(comment_text: str, participant_id: Optional[str], shown: Optional[str],
                    request: gr.Request, choice: str = choice) -> tuple[Any, ...]:
            user = user_of(services, participant_id, request)
            session = current(services, user, request)
            if page_behind(session, shown):  # no vote stored; the page is drawn as stored next
                return (notice(CHANGED_ELSEWHERE), *_skips(len(vote_result_outputs) - 1), True)
            try:
                cast = vote(services, session, choice, comment_text, user)
            except Refusal as exc:  # the comment stays in its box
                return (notice(exc), *_skips(len(vote_result_outputs) - 1), gr.skip())
            controls = []
            for side in SIDES:
                controls += pane_view(services, session, side)[2:]
            return (reveal_markdown(cast, services),
                    *[pane_title(services, session, side) for side in SIDES],
                    *[pane_reveal(services, session, side) for side in SIDES],
                    *vote_view(session)[:-1], *controls, *both_view(services, session), "", gr.skip())

        button.click(on_vote, [comment, user_state, page_battle], vote_result_outputs + [behind],
                     api_name=f"battle_vote_{choice.lower()}").then(**redraw_args)
