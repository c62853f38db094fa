"""An arena study run on Prolific: created there from the study file, published, paused and stopped from
the Studies page, its status read back, and its place count kept in step with the arena's places.

The arena's places for a study are the file's (`Study.platform_places`: `prolific.places`, else the total
quota over the tasks each worker does) plus one for each flagged worker whose work fills no place (the
arena freed their places, so another worker is needed). The link in the store (`PlatformLink.places`)
keeps the count the arena last set on the platform: when the arena's own count moves away from it (a new
version of the file, a worker flagged), the platform's count is set, at a Refresh or without a click by
the periodic check of `webapp.sessions.place_sync`; when the platform's count moves away from it (changed
on the platform), the page says so and offers to set it back.

Every call to the platform comes before any change in the arena: a `PlatformError` (no token, the network,
a 4xx) leaves the arena as it was and is one line for the researcher. A pause or stop seen on the platform
(a Refresh, or its webhook) is applied to the arena's running state: both pause the arena study (a stop
does not close it, which would delete the workers' platform ids that reviewing and paying still need), and
a study active again there (resumed, or given more places) is open again here. A closed arena study
stays closed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from arena.crowd.prolific_api import PlatformError, PlatformStudy, ProlificClient, StudyDraft
from arena.crowd.study import Study
from arena.store.platform_studies import PlatformLink
from webapp.leaderboard import study_results as results
from webapp.services import Services

ClientFactory = Callable[[], ProlificClient]
# The arena's running state a platform status asks for (statuses not named here change nothing).
# A study stopped on the platform (or full there) waits for review: the arena pauses it, since closing for
# good deletes the workers' platform ids that reviewing and paying still need (the researcher closes it).
STATE_OF_STATUS = {"PAUSED": "paused", "ACTIVE": "open", "AWAITING REVIEW": "paused", "COMPLETED": "paused"}
ENDED = ("AWAITING REVIEW", "COMPLETED")
LIVE = ("SCHEDULED", "PUBLISHING", "ACTIVE")  # statuses in which the platform recruits (or is about to)
FREED = ("RETURNED", "TIMED-OUT")  # submission statuses whose place the platform gives to someone else
TRANSITION_OF_STATE = {"paused": "PAUSE", "open": "START", "closed": "STOP"}


@dataclass(frozen=True)
class Outcome:
    """What an action did: `line` for the researcher; `changed` False when nothing changed anywhere."""

    line: str
    changed: bool = True


def study_draft(study: Study, link: str, places: int) -> StudyDraft:
    """What the platform is sent to create `study`: the file's title and `prolific:` block, the participant
    `link` with Prolific's placeholders, and the completion code (the file's action on it)."""
    assert study.prolific is not None and study.completion_code
    settings = study.prolific
    code = {"code": study.completion_code, "code_type": "COMPLETED",
            "actions": [{"action": settings.completion_action}]}
    return StudyDraft(name=study.title, internal_name=study.id, description=settings.description.strip(),
                      external_study_url=link, completion_codes=[code], total_available_places=places,
                      estimated_completion_time=settings.estimated_minutes, reward=settings.reward,
                      device_compatibility=list(settings.devices))


def arena_places(services: Services, study: Study) -> int:
    """The places the arena wants on the platform now (see the module doc)."""
    if study.flagged_counts:
        return study.platform_places()
    return study.platform_places() + sum(1 for p in services.store.list_participants(study.id) if p.flags)


def _newest(services: Services, study_id: str) -> Study:
    return results.newest_study(services, study_id)[1]


def create(services: Services, study_id: str, link: str, client: ClientFactory) -> Outcome:
    """Create the study on the platform as a draft (not yet published) and keep the link."""
    study = _newest(services, study_id)
    if study.prolific is None:
        return Outcome(f"{study_id} has no prolific: block in its file (reward, estimated_minutes, "
                       "description): add one and save, then create it.", changed=False)
    known = services.store.platform_link(study_id)
    if known is not None:
        return Outcome(f"{study_id} is on Prolific already (study {known.platform_study_id}).", changed=False)
    places = arena_places(services, study)
    with client() as api:
        made = api.create_study(study_draft(study, link, places))
    services.store.link_platform_study(study_id, made.id, made.status, made.total_available_places)
    return Outcome(f"Created on Prolific as study {made.id} ({made.status}, "
                   f"{made.total_available_places} places): publish it when ready.")


def _linked(services: Services, study_id: str) -> PlatformLink:
    link = services.store.platform_link(study_id)
    if link is None:
        raise PlatformError(f"{study_id} is not on Prolific yet: create it first")
    return link


def publish(services: Services, study_id: str, client: ClientFactory) -> Outcome:
    link = _linked(services, study_id)
    if services.store.study_state(study_id) != "open":
        return Outcome(f"{study_id} is {services.store.study_state(study_id)} in the arena: resume it before "
                       "publishing.", changed=False)
    with client() as api:
        done = api.transition_study(link.platform_study_id, "PUBLISH")
    services.store.note_platform_study(study_id, done.status, link.places)
    return Outcome(f"Published: Prolific says {done.status}.")


def refresh(services: Services, study_id: str, client: ClientFactory) -> Outcome:
    """Read the platform's study: its status (a pause or stop there is applied here), and places put in
    step when the arena's count moved."""
    link = _linked(services, study_id)
    wanted = arena_places(services, _newest(services, study_id))
    places = link.places
    with client() as api:
        seen = api.get_study(link.platform_study_id)
        # More places (a new file, a worker flagged) are set at once; fewer only when the researcher asks
        # (the platform refuses to take places from a published study).
        if wanted > link.places and services.store.study_state(study_id) != "closed":
            seen = api.set_places(link.platform_study_id, wanted)
            places = wanted
    # The platform showing the count confirms a claim of it (a push whose sender died, sent or not).
    services.store.note_platform_study(study_id, seen.status, places,
                                       places_sent=seen.total_available_places == places)
    return Outcome(" ".join(part for part in (status_line(seen, places, wanted),
                                              apply_status(services, study_id, seen.status)) if part))


def set_places(services: Services, study_id: str, client: ClientFactory) -> Outcome:
    """Set the platform's place count to the arena's (the researcher's answer to a count that differs)."""
    link = _linked(services, study_id)
    wanted = arena_places(services, _newest(services, study_id))
    with client() as api:
        seen = api.set_places(link.platform_study_id, wanted)
    services.store.note_platform_study(study_id, seen.status, wanted, places_sent=True)
    return Outcome(f"Prolific's places set to {seen.total_available_places}.")


def status_line(seen: PlatformStudy, agreed: int, wanted: int) -> str:
    line = (f"Prolific: study {seen.id} is {seen.status}, {seen.places_taken} of "
            f"{seen.total_available_places} places taken.")
    if seen.total_available_places != agreed or seen.total_available_places != wanted:
        line += (f" Prolific has {seen.total_available_places} places, the arena {wanted}: "
                 "'Set Prolific's places' sets them to the arena's.")
    return line


def follow_state(services: Services, study_id: str, state: str, client: ClientFactory) -> Optional[str]:
    """Before the arena pauses, resumes or closes `study_id`: the same transition on the platform (PAUSE,
    START, STOP) when the study is there and the transition applies to its status. Returns the platform's
    status after it, or None when nothing was sent; raises PlatformError (and then the arena changes
    nothing)."""
    link = services.store.platform_link(study_id)
    if link is None or not _applies(link.status, state):
        return None
    with client() as api:
        done = api.transition_study(link.platform_study_id, TRANSITION_OF_STATE[state])
    services.store.note_platform_study(study_id, done.status, link.places)
    return done.status


def would_send(services: Services, study_id: str, state: str) -> bool:
    """Whether the arena's `state` change has a transition to send to the platform (the study is there and
    the transition applies to its status as last read)."""
    link = services.store.platform_link(study_id)
    return link is not None and _applies(link.status, state)


def _applies(status: str, state: str) -> bool:
    if state == "paused":
        return status in LIVE
    if state == "open":
        return status == "PAUSED"
    return status in (*LIVE, "PAUSED")


def apply_status(services: Services, study_id: str, status: str) -> str:
    """A status seen on the platform, applied to the arena's running state; the line saying what changed
    ("" when nothing did). A closed arena study stays closed; a study not yet published changes nothing."""
    state = STATE_OF_STATUS.get(status)
    now = services.store.study_state(study_id)
    if state is None or state == now or now == "closed":
        return ""
    services.store.set_study_state(study_id, state)
    if status in ENDED:
        return (f"It is {status} on Prolific: the arena study is paused (close it here once the "
                "submissions are reviewed and paid).")
    return f"It is {status} on Prolific: the arena study is {state} too."


def on_platform_status(services: Services, platform_study_id: str, status: str) -> Optional[str]:
    """A study status change the platform reported (its webhook): recorded and applied; None when the
    platform study is none of this arena's."""
    link = services.store.platform_link_by_platform_id(platform_study_id)
    if link is None:
        return None
    services.store.note_platform_study(link.study_id, status, link.places)
    return apply_status(services, link.study_id, status)


def on_submission_status(services: Services, platform_study_id: str, submission_id: str, status: str,
                         participant_id: str) -> Optional[str]:
    """A submission status change the platform reported (its webhook): kept as the submission's last known
    status, and a submission RETURNED or TIMED-OUT there frees the worker's places here, as the platform
    frees its place. None when the platform study is none of this arena's."""
    link = services.store.platform_link_by_platform_id(platform_study_id)
    if link is None:
        return None
    services.store.note_submission_status(link.study_id, submission_id, status)
    if status not in FREED:
        return f"submission {submission_id} is {status}"
    pseudonyms = [p for p, (worker, _) in services.store.platform_ids(link.study_id).items()
                  if worker == participant_id.strip()]
    freed = sum(services.store.release_worker(link.study_id, p) for p in pseudonyms)
    return f"submission {submission_id} is {status}: {freed} arena place(s) freed"


def local_line(services: Services, study_id: str) -> str:
    """The study's platform status as last read (no call to the platform)."""
    link = services.store.platform_link(study_id)
    if link is None:
        return "Not on Prolific yet: 'Create on Prolific' creates it from the file's prolific: block."
    line = (f"Prolific: study {link.platform_study_id} was {link.status} with {link.places} places "
            f"(read {link.synced_at[:19].replace('T', ' ')} UTC; 'Refresh from Prolific' reads it again).")
    # A place count the arena could not push on its own (webapp.sessions.place_sync), until one goes through.
    return f"{line} {link.places_line}" if link.places_line else line
