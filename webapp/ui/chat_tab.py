"""Chat tab: one named system, one person, one conversation at a time (its rules: `webapp.sessions.chat`).

Per-session state lives in `gr.State` (the current Dialogue); the store keeps
every turn as it happens, and the participant's conversation under way is
found again after a reload (the turn guard's memory, else the store). A
message shows the moment it is sent, with a typing indicator until the reply.
Refusals (an empty message, feedback twice, the limit) are a line in the
status line under the input, never an error toast; a conversation that
reached its limit waits to be rated and never silently becomes a new one.
While a conversation is under way (a message sent, not rated yet), "New
conversation", another system in the dropdown and leaving the page ask first
(`webapp.ui.parts.under_way`); what is typed and not sent survives a reload, and stays in its box
whenever the message is refused or the conversation changed elsewhere.

The components are built part by part in `webapp.ui.chat_layout`; here are
what each event does (`ChatEvents`) and the wiring of every event (`_wire`).
"""

from __future__ import annotations

from typing import Any, Iterator, Optional

import gradio as gr

from arena.dialogue import Dialogue
from webapp.services import Services
from webapp.sessions.chat import check_send, give_feedback, resumable, send_message, start_conversation
from webapp.sessions import aspect_ratings
from webapp.ui.chat_layout import CONSENT, ChatPage, build_page
from webapp.ui.parts.participant import ParticipantSlot, user_of
from webapp.sessions.refusal import Refusal
from webapp.sessions.session_choices import OFFERED
from webapp.sessions.warming import warming_line
from webapp.ui.parts.refusal_notice import notice
from webapp.ui.parts import under_way
from webapp.ui.parts.page_script import name_message_js
from webapp.ui.parts.render import chat_messages, echo_messages, items_markdown, latest_items
from webapp.sessions.turn_step import CHANGED_ELSEWHERE, limit_status
from webapp.ui.parts.score_words import NOT_FINISHED, PENDING, plain_scores
from webapp.ui.parts.scorecard import factor_figure
from webapp.sessions.turns_in_flight import session_of

__all__ = ["CONSENT", "build"]  # the Battle tab shows the same consent line


def build(services: Services, participant: Optional[ParticipantSlot] = None) -> None:
    form = aspect_ratings.form_for(services)
    page = build_page(services, participant, form)
    _wire(page, ChatEvents(services, page), participant, show_reply_ratings=bool(form.utterance))


def _skips(n: int) -> tuple[Any, ...]:
    return tuple(gr.skip() for _ in range(n))


class ChatEvents:
    """What each event of the Chat tab does; every handler returns the updates for its outputs."""

    def __init__(self, services: Services, page: ChatPage):
        self.services = services
        self.page = page
        self.guard = services.turn_guard

    def view(self, dialogue: Optional[Dialogue], status_text: Any, message_value: Optional[str] = "",
             busy: bool = False) -> tuple[Any, ...]:
        """Updates for `page.outputs` (state, chatbot, items, status, message, send, satisfied, frustrated);
        `message_value` None keeps what is typed in the box."""
        open_ = dialogue is None or (dialogue.feedback is None and not dialogue.ended)
        can_send = open_ and not busy and (dialogue is None
                                           or dialogue.num_turns < self.services.settings.max_turns)
        can_rate = (dialogue is not None and dialogue.feedback is None and bool(dialogue.agent_turns())
                    and not busy)
        mark = busy or under_way.chat_under_way(dialogue)  # busy: a message just sent
        box = (under_way.message_box(mark, interactive=can_send) if message_value is None
               else under_way.message_box(mark, value=message_value, interactive=can_send))
        return (dialogue, chat_messages(dialogue), items_markdown(latest_items(dialogue)), status_text, box,
                gr.Button(interactive=can_send), gr.Button(interactive=can_rate),
                gr.Button(interactive=can_rate))

    def on_new(self, crs_name: str, participant_id: Optional[str], request: gr.Request) -> tuple[Any, ...]:
        # Updates for `page.new_outputs`: a new conversation with `crs_name`. No docstring: Gradio would
        # publish it as this API endpoint's description (/chat_start), which would change the API's page.
        panel = self.page.panel
        user = user_of(self.services, participant_id, request)
        try:
            dialogue, text = start_conversation(self.services, crs_name, user)
        except Refusal as exc:
            return (*_skips(3), notice(exc), *_skips(len(self.page.new_outputs) - 4))
        with self.guard.step(user) as step:
            step.remember(dialogue)
        return (*self.view(dialogue, text), "", NOT_FINISHED, gr.Plot(value=None, visible=False),
                *panel.hide())

    def on_resume(self, participant_id: Optional[str], request: gr.Request) -> tuple[Any, ...]:
        """Once the page knows its participant: their conversation under way, if any, and the controls."""
        services = self.services
        dialogue = resumable(services, user_of(services, participant_id, request))
        if dialogue is None:  # a fresh page: only what was waiting for the participant is enabled
            return (gr.Dropdown(interactive=True), gr.Button(interactive=True), *_skips(4),
                    *self.view(None, gr.skip(), message_value=None)[4:],
                    *_skips(len(self.page.new_outputs) - 8))
        note = "Welcome back: your conversation continues where you left it."
        if dialogue.ended:
            note = limit_status(dialogue, services.settings.max_turns)
        offered = dialogue.crs_id in services.registry.available()
        choice = (gr.Dropdown(value=dialogue.crs_id, interactive=True) if offered
                  else gr.Dropdown(interactive=True))
        return (choice, gr.Button(interactive=True), *self.view(dialogue, note, message_value=None),
                gr.skip(), NOT_FINISHED, gr.Plot(value=None, visible=False), *self.page.panel.hide())

    def on_redraw(self, participant_id: Optional[str], request: gr.Request) -> tuple[Any, ...]:
        """After the participant's data changed (deleted): the tab as their conversation now stands."""
        dialogue = resumable(self.services, user_of(self.services, participant_id, request))
        return (gr.skip(), gr.skip(), *self.view(dialogue, ""), "", NOT_FINISHED,
                gr.Plot(value=None, visible=False), *self.page.panel.hide())

    def on_send(self, text: str, dialogue: Optional[Dialogue], crs_name: str, message_id: Optional[str],
                participant_id: Optional[str], request: gr.Request) -> Iterator[tuple[Any, ...]]:
        # The message at once with a typing indicator, then the reply (updates for `page.outputs`);
        # no docstring, as in `on_new`.
        services = self.services
        user = user_of(services, participant_id, request)
        started = ""
        try:
            if dialogue is None:
                dialogue = resumable(services, user)
            check_send(services, dialogue, text)
            if dialogue is None:  # the first message starts a conversation with the chosen system
                dialogue, started = start_conversation(services, crs_name, user)
                with self.guard.step(user) as step:
                    step.remember(dialogue)
        except Refusal as exc:  # the message stays in its box, to be fixed and sent again
            yield (*_skips(3), notice(exc), *_skips(4))
            return
        yield (dialogue, echo_messages(dialogue, text), gr.skip(), started,
               *self.view(dialogue, "", busy=True)[4:])
        warming = warming_line(services, dialogue.crs_id)  # the reply follows once the model has loaded
        if warming:
            yield (*_skips(3), " ".join(part for part in (started, warming) if part), *_skips(4))
        try:
            with services.turns_in_flight.turn(session_of(request)):  # a closed page waits for its reply
                dialogue, status_text = send_message(services, dialogue, text, session_key=user,
                                                     message_id=message_id)
        except Refusal as exc:
            yield self.view(dialogue, notice(exc), message_value=text)
            return
        if status_text == CHANGED_ELSEWHERE:  # the conversation as stored; the message was not sent
            yield self.view(dialogue, status_text, message_value=text)
            return
        yield self.view(dialogue, " ".join(part for part in (started, status_text) if part))

    def on_feedback(self, sentiment: str):
        """The handler of one verdict button (updates for `page.feedback_outputs`)."""
        services, panel = self.services, self.page.panel

        def handler(comment_text: str, dialogue: Optional[Dialogue], participant_id: Optional[str],
                    request: gr.Request) -> tuple[Any, ...]:
            try:
                dialogue, text = give_feedback(services, dialogue, sentiment, comment_text or "",
                                               session_key=user_of(services, participant_id, request),
                                               request=request)
            except Refusal as exc:  # the comment stays in its box
                return (*_skips(3), notice(exc), *_skips(len(self.page.outputs) - 4 + 2 + len(panel.outputs)))
            if text == CHANGED_ELSEWHERE:  # the conversation as stored; nothing was rated
                return (*self.view(dialogue, text), gr.skip(), NOT_FINISHED, *panel.hide())
            return (*self.view(dialogue, text), "", PENDING, *panel.show())

        return handler

    def on_refresh(self, dialogue: Optional[Dialogue]) -> tuple[Any, ...]:
        stored = self.services.store.get_dialogue(dialogue.dialogue_id) if dialogue is not None else None
        if stored is None or stored.feedback is None:
            return NOT_FINISHED, gr.Plot(value=None, visible=False)
        core = {k: v for k, v in stored.scores.items() if k.startswith("core.") and v.value is not None}
        figure = factor_figure(stored.scores, title="How an AI panel judged it") if core else None
        return plain_scores(stored), gr.Plot(value=figure, visible=figure is not None)

    def on_switch(self, crs_name: str, leave: bool, dialogue: Optional[Dialogue],
                  participant_id: Optional[str], request: gr.Request) -> tuple[Any, ...]:
        """Another system picked: a new conversation with it, unless the participant chose to stay in the one
        under way (the dropdown then shows its system again)."""
        if not leave:
            back = dialogue is not None and dialogue.crs_id in self.services.registry.available()
            return (gr.Dropdown(value=dialogue.crs_id) if back else gr.skip(),
                    *_skips(len(self.page.new_outputs)))
        return (gr.skip(), *self.on_new(crs_name, participant_id, request))

    def on_aspects(self, dialogue: Optional[Dialogue], *answers: Any) -> tuple[Any, ...]:
        rater = dialogue.user.id if dialogue is not None else "anonymous"
        try:
            saved = aspect_ratings.rate_dialogue(self.services, dialogue, answers, rater)
        except Refusal as exc:  # the answers stay picked
            return self.page.panel.keep(notice(exc))
        return self.page.panel.hide(saved)

    def on_reply_rating(self, dialogue: Optional[Dialogue], data: gr.LikeData) -> str:
        rater = dialogue.user.id if dialogue is not None else "anonymous"
        try:
            return aspect_ratings.rate_reply(self.services, dialogue, data.index, data.liked, rater)
        except Refusal as exc:  # a full store
            return notice(exc)


def _wire(page: ChatPage, events: ChatEvents, participant: Optional[ParticipantSlot],
          show_reply_ratings: bool) -> None:
    """Every event of the Chat tab, with its inputs and outputs."""
    # Every handler that updates a choice input is wrapped by `OFFERED.offering` with its outputs, so that
    # the API guard checks a pick against the choices that session was given (tests/safety/
    # test_session_choices.py goes through every event of the page).
    offered = OFFERED.offering
    page.new.click(offered(events.on_new, page.new_outputs), [page.system, page.user], page.new_outputs,
                   api_name="chat_start")
    # Choosing another system (the person's own choice, not a resumed conversation) starts afresh, once the
    # page asked whether to leave a conversation under way (its answer fills `leave`).
    switch_outputs = [page.system, *page.new_outputs]
    page.system.input(offered(events.on_switch, switch_outputs),
                      [page.system, page.leave, page.dialogue, page.user], switch_outputs,
                      js=under_way.leave_js(["chat-msg"], 1), trigger_mode="once", api_visibility="private")
    if participant is not None:
        participant.after_identify(events.on_resume, [participant.user],
                                   [page.system, page.new, *page.new_outputs], redraw=events.on_redraw,
                                   busy_line=page.status)
    # One event for both triggers: while it runs, a second trigger (Enter, then Send) is ignored.
    # The page names each message it sends (an API client may name its own): the first message of a
    # conversation claims its start under that name (webapp.sessions.first_message).
    gr.on(triggers=[page.send.click, page.message.submit], fn=events.on_send,
          inputs=[page.message, page.dialogue, page.system, page.message_id, page.user], outputs=page.outputs,
          js=name_message_js(3), api_name="chat_send", trigger_mode="once", show_progress="hidden")
    rating_inputs = [page.comment, page.dialogue, page.user]
    page.satisfied.click(offered(events.on_feedback("satisfied"), page.feedback_outputs), rating_inputs,
                         page.feedback_outputs, api_name="chat_satisfied")
    page.frustrated.click(offered(events.on_feedback("frustrated"), page.feedback_outputs), rating_inputs,
                          page.feedback_outputs, api_name="chat_frustrated")
    panel = page.panel
    aspect_inputs = [page.dialogue, *panel.inputs]
    panel.save.click(offered(events.on_aspects, panel.outputs, aspect_inputs), aspect_inputs, panel.outputs,
                     api_name="chat_aspects")
    panel.skip.click(offered(lambda: panel.hide(aspect_ratings.SKIPPED), panel.outputs), None, panel.outputs,
                     api_visibility="private")
    if show_reply_ratings:
        page.chatbot.like(events.on_reply_rating, [page.dialogue], [page.status], api_visibility="private")
    page.refresh_scores.click(events.on_refresh, [page.dialogue], [page.scores, page.core_plot],
                              api_name="chat_scores")
