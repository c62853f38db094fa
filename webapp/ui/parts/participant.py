"""Who is using the page: one pseudonymous participant per browser, known to every public tab.

The browser keeps a random token in localStorage (`gr.BrowserState`); when the
page loads, `identify` turns it into the participant id (`webapp.sessions.participants`)
and puts that id in a per-session `gr.State`, which handlers read. A State is
kept on the server, so no request can claim another participant's id; only
the token can, and it is as hard to guess as a password. Tabs register what
they resume once the participant is known (`after_identify`); `wire` runs
those steps in the page's load event, right after the identification, so the
page is drawn for its participant in one round trip.

When the store stays locked past its busy timeout while a new page is being
identified (a first visitor's key cannot be written, or the participant's rows
cannot be read), the controls that wait for the participant stay disabled and
each tab's status line beside them says why (`IDENTIFY_BUSY`); nothing is
started under a session id instead.

Clients without a browser (gradio_client, the load tests) never run the load
event: they act under their session id (`session-...`), as before.
"""

from __future__ import annotations

import functools
import inspect
import logging
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import gradio as gr

from webapp.sessions import participants
from webapp.protection.identity import server_session_id
from webapp.services import Services
from webapp.sessions.session_choices import OFFERED
from webapp.sessions.turn_step import is_store_busy
from webapp.ui.parts.refusal_notice import notice

log = logging.getLogger(__name__)

STORAGE_KEY = "crs-arena-participant"
BROWSER_SECRET_KEY = "browser_state_secret"
IDENTIFY_BUSY = ("The arena is busy and could not open your session just now, so you cannot start yet. "
                 "Please reload the page in a moment.")


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
    # each tab's step when the page loads: (resume, redraw, inputs, outputs)
    _after: list[tuple[Callable[..., Any], Callable[..., Any], list[Any], list[Any]]] = field(
        default_factory=list)
    _changes: list[Any] = field(default_factory=list)
    _busy_lines: list[Any] = field(default_factory=list)
    _when_drawn: list[Callable[[], None]] = field(default_factory=list)

    def after_identify(self, fn: Callable[..., Any], inputs: list[Any], outputs: list[Any],
                       redraw: Optional[Callable[..., Any]] = None, busy_line: Any = None) -> None:
        """Run `fn` when the page loads, once `user` holds the participant id; after the participant's
        data changed (`refresh_after`), run `redraw` (default `fn`), which draws the tab afresh.
        `busy_line` (one of `outputs`, the tab's status line) says why the tab's controls stay disabled
        when the store is too busy to identify the participant or to run `fn`."""
        if busy_line is not None:
            self._busy_lines.append(busy_line)
            fn = _busy_told(fn, outputs, busy_line)
        self._after.append((fn, redraw or fn, inputs, outputs))

    def when_drawn(self, fn: Callable[[], None]) -> None:
        """Run `fn` (without arguments; it must be cheap when repeated) once a page has the answer of its load
        event: background work started then (the warm-up, the leaderboard's job) does not share the
        interpreter with a first visitor's page while it loads."""
        self._when_drawn.append(fn)

    def refresh_after(self, event: Any) -> None:
        """Run every step's `redraw` once `event` is done (the participant's data changed)."""
        self._changes.append(event)

    def wire(self, services: Services, demo: gr.Blocks) -> None:
        """Call once every tab is built. The page's one load event identifies the participant and runs every
        tab's step in the same round trip (one request, answered once), so the controls that wait for the
        participant are enabled as soon as it is answered; the `when_drawn` work starts after it."""
        steps = list(self._after)
        outputs = self._load_outputs(steps)
        identified = self._identifier(services, steps)
        # Wrapped, as every handler that updates choice inputs (webapp.sessions.session_choices).
        loaded = demo.load(OFFERED.offering(identified, outputs), [self.token], outputs,
                           api_visibility="private", show_progress="hidden")
        if self._when_drawn:
            starters = list(self._when_drawn)

            def drawn() -> None:
                for start in starters:
                    start()

            loaded.then(drawn, None, None, api_visibility="private", show_progress="hidden")
        for event in self._changes:
            for _, redraw, inputs, step_outputs in steps:
                event.success(OFFERED.offering(redraw, step_outputs), inputs, step_outputs,
                              api_visibility="private", show_progress="hidden")

    def _load_outputs(self, steps: list[tuple[Any, ...]]) -> list[Any]:
        """What the page's load event updates: the token, the participant id, then every step's outputs."""
        for _, _, inputs, _ in steps:
            if list(inputs) != [self.user]:
                raise ValueError("a step run when the page loads reads the participant id alone")
        outputs: list[Any] = [self.token, self.user]
        for _, _, _, step_outputs in steps:
            if any(o is known for o in step_outputs for known in outputs):
                raise ValueError("two steps run when the page loads update the same component")
            outputs += step_outputs
        return outputs

    def _identifier(self, services: Services, steps: list[tuple[Any, ...]]) -> Callable[..., tuple[Any, ...]]:
        """The load event's handler: the participant from the browser's token, then every step drawn."""

        def identified(token: Any, request: gr.Request) -> tuple[Any, ...]:
            if not participants.valid_token(token):
                token = participants.new_token()
            try:
                user = participants.participant_id(services.store, token, _salt(services))
            except Exception as exc:
                if not is_store_busy(exc):
                    raise
                log.warning("a page could not be identified: the store stayed locked")
                # Nothing is started under a session id: the controls stay disabled, the lines say why.
                return (gr.skip(), gr.skip(), *self._busy_everywhere(steps))
            drawn: list[Any] = [token, user]
            for fn, _, _, step_outputs in steps:
                drawn += _step_or_skips(fn, step_outputs, user, request)
            return tuple(drawn)

        return identified

    def _busy_everywhere(self, steps: list[tuple[Any, ...]]) -> list[Any]:
        """Each step's outputs when the page cannot be identified: its busy line says why, the rest stays."""
        out: list[Any] = []
        for _, _, _, step_outputs in steps:
            out += [notice(IDENTIFY_BUSY) if any(o is line for line in self._busy_lines) else gr.skip()
                    for o in step_outputs]
        return out


def _step_or_skips(fn: Callable[..., Any], outputs: list[Any], user: str, request: gr.Request) -> list[Any]:
    """A tab's step, run in the page's load event: a tab that fails is logged and left as served, so the
    other tabs are still drawn."""
    wants_request = "request" in inspect.signature(fn).parameters  # as Gradio would pass it
    try:
        drawn = fn(user, request=request) if wants_request else fn(user)
    except Exception:
        log.exception("a tab could not be drawn when the page loaded")
        return [gr.skip() for _ in outputs]
    drawn = drawn if isinstance(drawn, (tuple, list)) else (drawn,)
    if len(drawn) != len(outputs):
        raise ValueError(f"{fn.__name__} returned {len(drawn)} updates for {len(outputs)} outputs")
    return list(drawn)


def _busy_told(fn: Callable[..., Any], outputs: list[Any], line: Any) -> Callable[..., Any]:
    """`fn`, which shows `IDENTIFY_BUSY` in `line` (and changes nothing else) when the store is too busy."""
    at = next(i for i, o in enumerate(outputs) if o is line)

    @functools.wraps(fn)  # Gradio reads the signature (the request parameter) through the wrapper
    def step(*args: Any, **kwargs: Any) -> tuple[Any, ...]:
        try:
            return fn(*args, **kwargs)
        except Exception as exc:
            if not is_store_busy(exc):
                raise
            log.warning("a page's tab could not be drawn: the store stayed locked")
            return tuple(notice(IDENTIFY_BUSY) if i == at else gr.skip() for i in range(len(outputs)))

    return step


def participant_slot(services: Services) -> ParticipantSlot:
    """Build the page's participant components (inside the Blocks, before the tabs)."""
    # The browser encrypts the stored value with this key, which the page itself receives (so it guards
    # nothing against a visitor; the token's randomness does). Kept in the database, it stays the same
    # across restarts and replicas (derived from the pseudonym salt when set, so across a restore onto an
    # empty disk too), so a returning browser can still read its token.
    secret = participants.identity_secret(services.store, BROWSER_SECRET_KEY, _salt(services))
    token = gr.BrowserState(None, storage_key=STORAGE_KEY, secret=secret)
    return ParticipantSlot(token=token, user=gr.State(None))
