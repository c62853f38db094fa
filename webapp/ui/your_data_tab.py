"""Your data: the participant's pseudonymous id, and their own dialogues to download or delete.

Everything here acts on the participant of this browser only (the id in the
page's server-side State, from the browser's token; `webapp.ui.parts.participant`):
no input names a user, so nobody can reach another participant's data. A
deletion asks for a confirmation, is logged as moderation is, and resets the
Battle and Chat tabs.
"""

from __future__ import annotations

from typing import Any, Optional

import gradio as gr

from webapp.sessions import participants
from webapp.protection.moderation import ModerationError
from webapp.protection.private_files import LINKS
from webapp.services import Services
from webapp.ui.download_tab import ExportFolders
from webapp.ui.parts.participant import ParticipantSlot
from webapp.sessions.refusal import Refusal, refuse
from webapp.ui.parts.refusal_notice import notice
from webapp.ui.parts.render import plural
from webapp.sessions.turn_step import refused_when_full

INTRO = (
    "This browser keeps a random pseudonymous id for you, so your conversations stay yours across visits "
    "without any name, e-mail or login. Download what you have contributed, or delete it at any time. "
    "If you clear this browser's site data you get a new id, and your earlier conversations can then only "
    "be deleted by the researchers, given the id below."
)
NO_BROWSER_ID = "_Your id appears here once the page has loaded in a browser._"


def _salt(services: Services) -> Optional[str]:
    salt = services.settings.pseudonym_salt
    return salt.get_secret_value() if salt else None


def identity_markdown(services: Services, user_id: Optional[str]) -> str:
    if not participants.is_participant(user_id):
        return NO_BROWSER_ID
    alias = participants.corpus_pseudonym(services.store, user_id, _salt(services))
    return (f"Your participant id: **`{alias}`**. The published dataset lists your conversations under "
            "this id; mention it if you ever write to us about your data.")


def counts_markdown(services: Services, user_id: Optional[str]) -> str:
    if not participants.is_participant(user_id):
        return ""
    own = participants.summary(services.store, user_id, _salt(services))
    if not own.total:
        return "You have no stored conversations yet."
    text = (f"Stored: {plural(own.chats, 'chat conversation')} and "
            f"{plural(own.battles, 'battle conversation')}.")
    if own.under_way:
        text += (f" {plural(own.under_way, 'battle conversation')} of a battle still waiting for your vote "
                 f"{'is' if own.under_way == 1 else 'are'} left out of the download until you vote.")
    return text


def build(services: Services, participant: Optional[ParticipantSlot] = None, *,
          tab: Optional[gr.Tab] = None) -> None:
    user_state = participant.user if participant is not None else gr.State(None)
    folders = ExportFolders()
    gr.Markdown(INTRO)
    identity = gr.Markdown(NO_BROWSER_ID, elem_id="yourdata-id")
    counts = gr.Markdown("", elem_id="yourdata-counts")
    with gr.Row():
        # With a browser participant, both wait for the page's load event to say whose data it is: a click
        # before it would act on no one (and say so) instead of on the participant.
        waits = participant is not None
        download = gr.Button("Download my dialogues", elem_id="yourdata-download", min_width=200,
                             interactive=not waits)
        delete = gr.Button("Delete my dialogues", variant="stop", elem_id="yourdata-delete", min_width=200,
                           interactive=not waits)
    with gr.Column(visible=False, elem_id="yourdata-confirm") as confirm_box:
        gr.Markdown("This deletes every conversation you have had here, with your ratings and votes, "
                    "for good. Are you sure?")
        with gr.Row():
            confirm = gr.Button("Yes, delete them", variant="stop", elem_id="yourdata-confirm-yes", min_width=160)
            cancel = gr.Button("No, keep them", elem_id="yourdata-confirm-no", min_width=160)
    status = gr.Markdown("", elem_id="yourdata-status", elem_classes=["status-line"])
    files = gr.File(label="Your dialogues (JSON Lines)", visible=False, interactive=False, elem_id="yourdata-file")

    def on_show(participant_id: Optional[str]) -> tuple[Any, ...]:
        return (identity_markdown(services, participant_id), counts_markdown(services, participant_id),
                gr.Button(interactive=True), gr.Button(interactive=True))

    def on_download(participant_id: Optional[str]) -> tuple[Any, ...]:
        if not participants.is_participant(participant_id):
            return notice(refuse("Open this page in a browser to download your dialogues.")), gr.skip()
        try:
            with refused_when_full():
                # The file's name carries a token: its link works for a while, and not after a deletion.
                path, count = participants.export_own(services.store, participant_id, folders.new(),
                                                      _salt(services), name=LINKS.name_for(participant_id))
            LINKS.written(path)
        except Refusal as exc:
            return notice(exc), gr.skip()
        if not count:
            return "You have no conversations to download yet.", gr.File(value=None, visible=False)
        return (f"Ready: {plural(count, 'conversation')}.", gr.File(value=str(path), visible=True))

    def on_delete(participant_id: Optional[str]) -> tuple[Any, ...]:
        if not participants.is_participant(participant_id):
            return gr.skip(), notice(refuse("Open this page in a browser to delete your dialogues."))
        return gr.Column(visible=True), ""

    def on_confirm(participant_id: Optional[str]) -> tuple[Any, ...]:
        try:
            if not participants.is_participant(participant_id):
                raise refuse("Open this page in a browser to delete your dialogues.")
            own = participants.summary(services.store, participant_id, _salt(services))
            try:
                with refused_when_full():
                    counts_deleted = participants.delete_own(services.store, participant_id, _salt(services))
            except ModerationError:
                raise refuse("You have no stored conversations to delete.") from None
        except Refusal as exc:
            return gr.Column(visible=False), notice(exc), gr.skip(), gr.skip()
        LINKS.revoke(participant_id)  # a download prepared before no longer works
        # Conversations under way in this process are forgotten, so no later turn stores them again.
        services.battle_book.forget(participant_id)
        services.turn_guard.forget(participant_id)
        # The same count the moderation log records; a battle side never written in is named as such, as the
        # counts above the button (written conversations only) did not show it.
        deleted = counts_deleted["dialogues"]
        empty = max(0, deleted - own.total)
        done = (f"Deleted {plural(deleted, 'conversation')}"
                + (f" ({empty} of them empty: a battle side you never wrote in)" if empty else "")
                + f" and {plural(counts_deleted['votes'], 'vote')}.")
        return (gr.Column(visible=False), done, counts_markdown(services, participant_id),
                gr.File(value=None, visible=False))

    download.click(on_download, [user_state], [status, files], api_visibility="private")
    delete.click(on_delete, [user_state], [confirm_box, status], api_visibility="private")
    cancel.click(lambda: (gr.Column(visible=False), "Nothing was deleted."), None, [confirm_box, status],
                 api_visibility="private")
    deleted = confirm.click(on_confirm, [user_state], [confirm_box, status, counts, files],
                            api_visibility="private")
    if participant is not None:
        participant.after_identify(on_show, [participant.user], [identity, counts, download, delete])
        participant.refresh_after(deleted)  # the Battle and Chat tabs start afresh
    if tab is not None:  # the tab holding this one, given by the page
        tab.select(on_show, [user_state], [identity, counts, download, delete], api_visibility="private")
