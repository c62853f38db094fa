"""A turn for a system whose model is still loading: a "warming up" line in the pane, then the reply.

The app answers its first page before its models have loaded (`webapp.warm_start`). A participant who
sends a message to a system still loading is not refused and nothing is recorded as failed: the page
shows `warming_line` while the turn waits (`wait_until_loaded`, called by `turn_step.stored_turn`) for
the warm-up to load that system and the models its turns use, first in the queue. Only a wait past
`ARENA_WARM_WAIT` seconds ends in one line asking to send the message again; the message stays in its
box and nothing is stored, so the battle, chat or study task goes on as before.

The local model's one-time conversion (`arena.llm.local_conversion`) is never waited for, whether the
server warms up or not (`ARENA_WARM_START=0`): while it runs, a turn for a system that replies with the
local model is not sent (`refuse_while_converting`), with one line asking to send it again; the message
stays in its box and no failed turn is stored.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from arena.llm.local_conversion import provider_converting, warming_error
from arena.text_safety import escape_text
from webapp.sessions.refusal import Refusal, refuse

WARMING_UP = ("{title} is warming up (its model is still loading); "
              "the reply will follow as soon as it is ready.")
CONVERTING = ("{title} is warming up (its model's one-time set-up is still running), so your message was not "
              "sent. Please send it again in a minute.")
# Systems that reply from another server, without the arena's own language model.
_OWN_MODEL_FREE = ("external-http", "external-ievalm")
STILL_WARMING = ("{title} is still warming up after {seconds:g} s, so your message was not sent. "
                 "Please send it again in a minute.")


def _title(services: Any, crs_id: str) -> str:
    return escape_text(services.registry.title(crs_id))


def warming_line(services: Any, crs_id: Optional[str]) -> Optional[str]:
    """The one-line notice for a turn of `crs_id` that will wait for its model; None when it is ready."""
    warming = getattr(services, "warming", None)
    if warming is None or crs_id is None or not warming.pending(crs_id) or converting(services, crs_id):
        return None  # converting: the turn is refused at once, nothing follows
    return WARMING_UP.format(title=_title(services, crs_id))


def converting(services: Any, crs_id: Optional[str]) -> bool:
    """Whether a turn of `crs_id` needs the local model while its one-time conversion still runs."""
    settings = getattr(services, "settings", None)
    if crs_id is None or getattr(settings, "llm_provider", None) != "local":
        return False
    try:
        family = services.registry.spec(crs_id).family
    except Exception:  # noqa: BLE001 - an unknown system is refused later, in its own words
        return False
    return family not in _OWN_MODEL_FREE and provider_converting(services.llm.provider)


def converting_refusal(services: Any, crs_id: str) -> Refusal:
    return refuse(CONVERTING.format(title=_title(services, crs_id)))


def refuse_while_converting(services: Any, crs_id: str) -> None:
    """One line refusing a turn of `crs_id` (not sent, nothing stored) while the local model converts."""
    if converting(services, crs_id):
        raise converting_refusal(services, crs_id)


def failed_for_conversion(error: Optional[str]) -> bool:
    """Whether a turn failed only because the conversion began as it was sent (it is then taken back)."""
    return warming_error(error)


def start_after_page(services: Any) -> Callable[[], None]:
    """What a page's load event runs once the page has its answer: the warm-up starts (once), so the first
    visitor's page is drawn and usable before the models take the interpreter."""
    def start() -> None:
        warming = getattr(services, "warming", None)
        if warming is not None:
            warming.start()

    return start


def wait_until_loaded(services: Any, crs_id: str) -> None:
    """Wait, bounded by `ARENA_WARM_WAIT`, until the warm-up has loaded `crs_id` and what its turns use
    (at once when nothing is loading); one line refusing the turn when it takes longer."""
    warming = getattr(services, "warming", None)
    if warming is None or not warming.pending(crs_id):
        return
    limit = services.settings.warm_wait_s
    if not warming.wait_for(crs_id, limit):
        raise refuse(STILL_WARMING.format(title=_title(services, crs_id), seconds=limit))
