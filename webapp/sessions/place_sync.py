"""The arena's place count pushed to Prolific without a click, for every linked study that recruits there.

The arena's places for a study move on their own: a worker is flagged and the place given back, a new
version of the study file changes the quotas or `prolific.places`. A job on the process's one scheduler
(`arena.store.jobs_scheduler.Periodic`) compares, at each tick, the arena's count
(`platform_link.arena_places`) with the count last set on the platform (the link's `places`) and sets the
platform's total when they differ:

* debounced: a new count is sent once it has stayed the same for `quiet_s` (by default one tick), so a
  burst of changes (three workers flagged in a row) is one call with the last count;
* once across replicas: every replica ticks, but the push is claimed in the store first
  (`claim_places_push`, a compare-and-set from the count read to the new one) and only the replica whose
  claim took sends it. The call sets a total, so even a repeat would do no harm;
* never lost with its sender: the claim records when it was taken, and the platform's answer confirms it.
  A replica that dies between its claim and its call leaves the claim unconfirmed; once it is older than
  `lease_s` (longer than any call with its retries), the next check of any replica takes it over
  (`retake_places_push`, one replica only) and sends the claimed count again, so the platform's count is
  not left behind until a Refresh;
* retries: the client waits the Retry-After of a 429 and backs off on a network failure; what still fails
  is one line on the Studies page's Prolific line (`places_line`), the claim is undone and the arena's
  places are untouched, and the next tick tries again;
* only growth once published: Prolific refuses to take places from a published study, so when the arena
  wants fewer the line says so and nothing is sent (the researcher decides on the platform).

Only studies the platform recruits for (or paused there) are pushed, and never an arena study that is
closed: a draft gets its places when it is created and when the researcher asks, and giving places to a
study that ended there would open it again.
"""

from __future__ import annotations

import logging
import threading
import time
from datetime import timedelta
from typing import Callable, Optional

from arena.crowd.prolific_api import PlatformError
from arena.dialogue import utc_now
from arena.runtime.config import Settings
from arena.store.jobs_scheduler import Periodic
from arena.store.platform_studies import PlatformLink
from arena.store.statements import utc_key
from webapp.leaderboard import study_results as results
from webapp.services import Services
from webapp.sessions import platform_link as platform

log = logging.getLogger(__name__)

PUSHED_STATUSES = (*platform.LIVE, "PAUSED")  # the platform's statuses whose places the arena keeps in step
DEFAULT_EVERY_S = 30.0
# How long a claimed push may stay unconfirmed before its sender is taken to have died: longer than the
# client's longest call (five tries of a 20 s timeout, with up to 30 s between them).
DEFAULT_LEASE_S = 600.0


def _token_set() -> bool:
    token = Settings.from_env().prolific_token  # read each time, as the client reads it
    return token is not None and bool(token.get_secret_value().strip())


def only_grows_line(wanted: int, there: int) -> str:
    return (f"The arena now has {wanted} places and Prolific {there}: Prolific only lets a published "
            "study's places grow, so nothing was sent (lower them on Prolific if you mean to).")


def failed_line(wanted: int, error: PlatformError) -> str:
    reason = " ".join(str(error).split())
    return f"The arena's {wanted} places did not reach Prolific ({reason}); tried again at the next check."


class PlaceSync:
    """Keeps the platform's place counts in step with the arena's (see the module doc). `tick()` is one
    check of every linked study; `start()` runs it every `every_s` seconds on the scheduler."""

    def __init__(self, services: Services, client: platform.ClientFactory, *,
                 every_s: float = DEFAULT_EVERY_S, quiet_s: Optional[float] = None,
                 lease_s: float = DEFAULT_LEASE_S, clock: Callable[[], float] = time.monotonic):
        self.services = services
        self.client = client
        self.every_s = float(every_s)
        self.quiet_s = self.every_s if quiet_s is None else float(quiet_s)
        self.lease_s = float(lease_s)
        self._clock = clock
        self._seen: dict[str, tuple[int, float]] = {}  # study -> (count waiting to be sent, first seen)
        self._lock = threading.Lock()  # one tick at a time in this process
        self._job: Optional[Periodic] = None

    def start(self) -> "PlaceSync":
        if self._job is None:
            self._job = Periodic("prolific-places", self._step).start(self.every_s)
        return self

    def stop(self) -> None:
        job, self._job = self._job, None
        if job is not None:
            job.cancel()

    def _step(self) -> float:
        try:
            self.tick()
        except Exception:  # the store is away: the next tick tries again
            log.exception("could not check the Prolific places")
        return self.every_s

    def tick(self) -> list[str]:
        """One check of every linked study; the lines of what was sent or held back (for the log)."""
        if not _token_set():
            return []
        with self._lock:
            lines = []
            for link in self.services.store.platform_links():
                line = self._check(link)
                if line:
                    lines.append(f"{link.study_id}: {line}")
            return lines

    def _check(self, link: PlatformLink) -> Optional[str]:
        store = self.services.store
        if link.status not in PUSHED_STATUSES or store.study_state(link.study_id) == "closed":
            self._seen.pop(link.study_id, None)
            return None
        if link.places_claimed_at is not None:  # claimed, not confirmed: under way, or its sender died
            return self._retake(link)
        wanted = platform.arena_places(self.services, results.newest_study(self.services, link.study_id)[1])
        if wanted == link.places:
            self._seen.pop(link.study_id, None)
            if link.places_line is not None:
                store.note_places_line(link.study_id, None)
            return None
        if wanted < link.places:  # a published study's places only grow there
            self._seen.pop(link.study_id, None)
            line = only_grows_line(wanted, link.places)
            if link.places_line != line:
                store.note_places_line(link.study_id, line)
            return line
        now = self._clock()
        waiting = self._seen.get(link.study_id)
        if waiting is None or waiting[0] != wanted:
            self._seen[link.study_id] = (wanted, now)  # a change: wait until it has settled
            waiting = self._seen[link.study_id]
        if now - waiting[1] < self.quiet_s:
            return None
        if not store.claim_places_push(link.study_id, link.places, wanted):
            self._seen.pop(link.study_id, None)
            return None  # another replica moved the count first: it sends
        return self._send(link, wanted, back_to=link.places)

    def _retake(self, link: PlatformLink) -> Optional[str]:
        """A claim not confirmed: left alone within the lease (its sender is at work); older, taken over by
        one replica, which sends the claimed count again."""
        # Claims are dated by the wall clock of the replica that took them (`now_key`), as this one reads it.
        older_than = utc_key(utc_now() - timedelta(seconds=self.lease_s))
        claimed_at = link.places_claimed_at or ""
        if not self.services.store.retake_places_push(link.study_id, link.places, claimed_at, older_than):
            return None
        log.warning("Prolific places of %s: a push of %d claimed at %s was never confirmed; sent again",
                    link.study_id, link.places, claimed_at)
        return self._send(link, link.places, back_to=link.places, claimed_at=claimed_at)

    def _send(self, link: PlatformLink, wanted: int, *, back_to: int,
              claimed_at: Optional[str] = None) -> str:
        """Send the claimed count `wanted`; on a failure the claim is undone (the count back to `back_to`,
        and a claim taken over put back as it was, `claimed_at`) with the line saying why."""
        store = self.services.store
        try:
            with self.client() as api:
                seen = api.set_places(link.platform_study_id, wanted)
        except PlatformError as exc:
            line = failed_line(wanted, exc)
            store.undo_places_push(link.study_id, wanted, back_to, line, claimed_at=claimed_at)
            log.warning("Prolific places of %s: %s", link.study_id, line)
            return line  # still waiting (settled): the next tick sends it again
        self._seen.pop(link.study_id, None)
        store.note_platform_study(link.study_id, seen.status, wanted, places_sent=True)
        store.note_places_line(link.study_id, None)
        log.info("Prolific places of %s set to %d (were %d)", link.study_id, wanted, link.places)
        if claimed_at is not None:
            return (f"places set to {wanted} on Prolific again (a push claimed at {claimed_at} was never "
                    "confirmed)")
        return f"places set to {wanted} on Prolific (were {link.places})"
