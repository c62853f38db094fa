"""Who is using the page: one pseudonymous participant per browser, known to every public tab.

The browser keeps a random token in localStorage (`gr.BrowserState`); when the
page loads, `identify` turns it into the participant id (`webapp.sessions.participants`)
and puts that id in a per-session `gr.State`, which handlers read. A State is
kept on the server, so no request can claim another participant's id; only
the token can, and it is as hard to guess as a password. Tabs register what
they resume once the participant is known (`after_identify`); `wire` chains
those steps after the identification when the page loads.

Clients without a browser (gradio_client, the load tests) never run the load
event: they act under their session id (`session-...`), as before.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import gradio as gr

from webapp.sessions import participants
from webapp.protection.identity import server_session_id
from webapp.services import Services

STORAGE_KEY = "crs-arena-participant"
BROWSER_SECRET_KEY = "browser_state_secret"


def _salt(services: Services) -> Optional[str]:
    salt = services.settings.pseudonym_salt
    return salt.get_secret_value() if salt else None


def session_user_id(services: Services, request: Optional[gr.Request]) -> str:
    """The browser session's id as the server issued it (never the client's own session hash)."""
    session = server_session_id(request, services.identities)
    return f"session-{session}" if session else "anonymous"


def user_of(services: Services, participant: Optional[str], request: Optional[gr.Request]) -> str:
    """The id to store with what this request does: the participant's, else the browser session's."""
    return participant if participants.is_participant(participant) else session_user_id(services, request)


@dataclass
class ParticipantSlot:
    """The page's participant: the browser's token, the id in a server-side State, the resume steps."""

    token: Any
    user: Any
    _after: list[tuple[Callable[..., Any], Callable[..., Any], list[Any], list[Any]]] = field(default_factory=list)
    _changes: list[Any] = field(default_factory=list)

    def after_identify(self, fn: Callable[..., Any], inputs: list[Any], outputs: list[Any],
                       redraw: Optional[Callable[..., Any]] = None) -> None:
        """Run `fn` when the page loads, once `user` holds the participant id; after the participant's
        data changed (`refresh_after`), run `redraw` (default `fn`), which draws the tab afresh."""
        self._after.append((fn, redraw or fn, inputs, outputs))

    def refresh_after(self, event: Any) -> None:
        """Run every step's `redraw` once `event` is done (the participant's data changed)."""
        self._changes.append(event)

    def wire(self, services: Services, demo: gr.Blocks) -> None:
        """Call once every tab is built."""
        def identify(token: Any) -> tuple[str, str]:
            if not participants.valid_token(token):
                token = participants.new_token()
            return token, participants.participant_id(services.store, token, _salt(services))

        loaded = demo.load(identify, [self.token], [self.token, self.user], api_visibility="private",
                           show_progress="hidden")
        for fn, _, inputs, outputs in self._after:
            loaded.success(fn, inputs, outputs, api_visibility="private", show_progress="hidden")
        for event in self._changes:
            for _, redraw, inputs, outputs in self._after:
                event.success(redraw, inputs, outputs, api_visibility="private", show_progress="hidden")


def participant_slot(services: Services) -> ParticipantSlot:
    """Build the page's participant components (inside the Blocks, before the tabs)."""
    # The browser encrypts the stored value with this key, which the page itself receives (so it guards
    # nothing against a visitor; the token's randomness does). Kept in the database, it stays the same
    # across restarts and replicas (derived from the pseudonym salt when set, so across a restore onto an
    # empty disk too), so a returning browser can still read its token.
    secret = participants.identity_secret(services.store, BROWSER_SECRET_KEY, _salt(services))
    token = gr.BrowserState(None, storage_key=STORAGE_KEY, secret=secret)
    return ParticipantSlot(token=token, user=gr.State(None))
