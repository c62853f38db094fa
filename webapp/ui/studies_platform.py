"""The Studies tab's Prolific section: create the chosen study on Prolific from its file, publish it, read
its status and put the places in step (`webapp.sessions.platform_link` does the work).

The API token comes only from the server's environment (`PROLIFIC_API_TOKEN`); without it the section is
one line saying so. Any failure of the platform (the network, a 4xx answer) is one line and changes
nothing in the arena.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import gradio as gr

from arena.runtime.config import Settings
from arena.crowd.prolific_api import PROLIFIC_TOKEN_ENV, PlatformError, ProlificClient
from arena.text_safety import escape_text
from webapp.services import Services
from webapp.sessions import platform_link as platform
from webapp.ui.parts.refusal_notice import NOTICE_MARK

LinkOf = Callable[[Optional[gr.Request], str], str]  # the participant link of a study, as the page shows it
NO_TOKEN = (f"Prolific: set {PROLIFIC_TOKEN_ENV} in the server's environment (a token from Prolific's "
            "workspace settings) to create and run this study there from here.")


def configured() -> bool:
    token = Settings.from_env().prolific_token  # read each time, as the client reads it
    return token is not None and bool(token.get_secret_value().strip())


def shown_line(services: Services, study_id: Optional[str]) -> str:
    """The section's line for the chosen study, from the store (no call to the platform)."""
    if not configured():
        return NO_TOKEN
    return platform.local_line(services, study_id) if study_id else ""


def run_action(services: Services, study_id: Optional[str],
               action: Callable[[], platform.Outcome]) -> str:
    """`action`'s line, or one line saying why nothing changed."""
    if not configured():
        return f"{NOTICE_MARK} {NO_TOKEN}"
    if not study_id:
        return f"{NOTICE_MARK} Nothing changed: choose a study first."
    try:
        done = action()
    except PlatformError as exc:
        return f"{NOTICE_MARK} Nothing changed: {escape_text(' '.join(str(exc).split()))}"
    return done.line if done.changed else f"{NOTICE_MARK} {done.line}"


def build(services: Services, picked: gr.Dropdown, link_of: LinkOf,
          states: Optional[list[Any]] = None) -> list[Any]:
    """The section; returns the events of its actions (the tab shows the study again after each). After
    each of `states` (the arena's pause, resume and close, which go to the platform first) the section's
    line is read again, so the platform's new status shows."""
    client = ProlificClient.from_environment
    line = gr.Markdown(NO_TOKEN if not configured() else "", elem_id="studies-platform")
    with gr.Row():
        create = gr.Button("Create on Prolific", elem_id="studies-platform-create", min_width=100)
        publish = gr.Button("Publish", elem_id="studies-platform-publish", min_width=100)
        refresh = gr.Button("Refresh from Prolific", elem_id="studies-platform-refresh", min_width=100)
        places = gr.Button("Set Prolific's places", elem_id="studies-platform-places", min_width=100)

    def on_create(study_id: Optional[str], request: gr.Request = None) -> str:
        return run_action(services, study_id, lambda: platform.create(
            services, study_id or "", link_of(request, study_id or ""), client))

    def on_publish(study_id: Optional[str]) -> str:
        return run_action(services, study_id, lambda: platform.publish(services, study_id or "", client))

    def on_refresh(study_id: Optional[str]) -> str:
        return run_action(services, study_id, lambda: platform.refresh(services, study_id or "", client))

    def on_places(study_id: Optional[str]) -> str:
        return run_action(services, study_id, lambda: platform.set_places(services, study_id or "", client))

    def on_pick(study_id: Optional[str]) -> Any:
        return shown_line(services, study_id)

    picked.change(on_pick, [picked], [line], api_name="study_platform_show")
    for event in states or []:
        event.then(on_pick, [picked], [line], api_visibility="private")
    return [create.click(on_create, [picked], [line], api_name="study_platform_create"),
            publish.click(on_publish, [picked], [line], api_name="study_platform_publish"),
            refresh.click(on_refresh, [picked], [line], api_name="study_platform_refresh"),
            places.click(on_places, [picked], [line], api_name="study_platform_places")]


VERB_OF_STATE = {"paused": "pause", "open": "resume", "closed": "stop"}


def not_told(services: Services, study_id: str, state: str) -> str:
    """The line added to the arena's pause, resume or close of a study on the platform when no token is
    set: the arena changed, the platform did not ("" when there was nothing to tell it)."""
    if configured() or not platform.would_send(services, study_id, state):
        return ""
    return (f" {NOTICE_MARK} Prolific was not told: set {PROLIFIC_TOKEN_ENV} in the server's environment, "
            f"or {VERB_OF_STATE[state]} the study on Prolific yourself.")


def follow_state(services: Services, study_id: str, state: str) -> Optional[str]:
    """The arena's pause, resume or close, sent to the platform first: None when it went through (or the
    study is not there, or no token is set), else the one line saying why the arena changed nothing."""
    if not configured() or services.store.platform_link(study_id) is None:
        return None
    try:
        platform.follow_state(services, study_id, state, ProlificClient.from_environment)
    except PlatformError as exc:
        return (f"{NOTICE_MARK} Nothing changed: Prolific refused or could not be reached "
                f"({escape_text(' '.join(str(exc).split()))}).")
    return None
