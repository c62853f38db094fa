"""The arena's place count reaches Prolific without a click (webapp/sessions/place_sync.py), against the local
server that models Prolific's API: a change is sent once, after it settled; a 429 waits its Retry-After; a
refusal or a lost connection is the Studies page's line and leaves the arena's places alone; fewer places
than a published study has are never sent; and two app processes on one database send a change once."""

from __future__ import annotations

import dataclasses
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path

import sqlalchemy as sa

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))

from study_support import publish  # noqa: E402

from arena.crowd.prolific_api import ProlificClient  # noqa: E402
from arena.dialogue import utc_now  # noqa: E402
from arena.store import schema as t  # noqa: E402
from arena.store.statements import utc_key  # noqa: E402
from arena.store import Store  # noqa: E402
from webapp.sessions import platform_link as platform  # noqa: E402
from webapp.sessions.place_sync import PlaceSync  # noqa: E402
from webapp.ui import studies_platform as section  # noqa: E402

PROLIFIC = {"reward": 250, "estimated_minutes": 15, "description": "Chat with movie recommenders."}
LINK = "https://arena.example/study/?study=pilot&PROLIFIC_PID={{%PROLIFIC_PID%}}"
PLACES = 8  # three systems, five tasks each, two tasks a worker


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _published(services, prolific) -> str:
    publish(services, prolific=PROLIFIC)
    platform.create(services, "pilot", LINK, ProlificClient.from_environment)
    (study_id,) = prolific.state.studies
    platform.publish(services, "pilot", ProlificClient.from_environment)
    assert prolific.state.studies[study_id].status == "ACTIVE"
    return study_id


def _flag(services, worker: str) -> None:
    """A worker excluded by a flag: their place is given back, so the arena wants one more."""
    version = services.store.study_text("pilot")[0]
    services.store.join_study("pilot", worker, version, {"flags": ["too fast"]})


def _patches(prolific, study_id: str) -> int:
    with prolific.lock:
        return sum(1 for method, path in prolific.hits if method == "PATCH" and study_id in path)


def _places(prolific, study_id: str) -> int:
    return prolific.state.studies[study_id].fields["total_available_places"]



def _tick_together(syncs: list[PlaceSync]) -> list[list[str]]:
    """The lines of each sync's tick, the ticks started at one moment on their own threads."""
    start = threading.Barrier(len(syncs))
    lines: list[list[str]] = []

    def tick(sync: PlaceSync) -> None:
        start.wait()
        lines.append(sync.tick())

    threads = [threading.Thread(target=tick, args=(sync,)) for sync in syncs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return lines

def test_a_burst_of_changes_is_sent_once_after_it_settled(services, prolific):
    study_id = _published(services, prolific)
    clock = Clock()
    sync = PlaceSync(services, ProlificClient.from_environment, every_s=30, clock=clock)
    assert sync.tick() == [] and _patches(prolific, study_id) == 0  # in step: nothing to send
    _flag(services, "worker-a")
    assert sync.tick() == []  # a change seen: it waits one tick in case more follow
    clock.now += 10
    _flag(services, "worker-b")
    clock.now += 25
    assert sync.tick() == []  # it moved again within the tick: still waiting
    clock.now += 30
    assert sync.tick() == [f"pilot: places set to {PLACES + 2} on Prolific (were {PLACES})"]
    assert _places(prolific, study_id) == PLACES + 2 and _patches(prolific, study_id) == 1
    assert services.store.platform_link("pilot").places == PLACES + 2
    clock.now += 30
    assert sync.tick() == [] and _patches(prolific, study_id) == 1


def test_the_scheduled_check_sends_a_change_without_a_click(services, prolific):
    study_id = _published(services, prolific)
    sync = PlaceSync(services, ProlificClient.from_environment, every_s=0.2).start()
    try:
        _flag(services, "worker-a")
        deadline = time.monotonic() + 20
        while _places(prolific, study_id) != PLACES + 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _places(prolific, study_id) == PLACES + 1
        time.sleep(1.0)  # several more ticks
        assert _patches(prolific, study_id) == 1
    finally:
        sync.stop()
    assert "with 9 places" in section.shown_line(services, "pilot")


def test_a_429_waits_its_retry_after_and_then_goes_through(services, prolific):
    study_id = _published(services, prolific)
    sync = PlaceSync(services, ProlificClient.from_environment, every_s=30, quiet_s=0)
    _flag(services, "worker-a")
    prolific.fail_next(429, path=f"studies/{study_id}/", retry_after=1)
    started = time.monotonic()
    assert sync.tick() == [f"pilot: places set to {PLACES + 1} on Prolific (were {PLACES})"]
    assert time.monotonic() - started >= 1.0
    assert _patches(prolific, study_id) == 2 and _places(prolific, study_id) == PLACES + 1


def test_a_refusal_is_the_pages_line_changes_nothing_and_is_retried(services, prolific):
    study_id = _published(services, prolific)
    sync = PlaceSync(services, ProlificClient.from_environment, every_s=30, quiet_s=0)
    _flag(services, "worker-a")
    participants = services.store.list_participants("pilot")
    prolific.fail_next(403, path=f"studies/{study_id}/")
    (line,) = sync.tick()
    assert "did not reach Prolific (Prolific refused to change the places (403)" in line and "\n" not in line
    shown = section.shown_line(services, "pilot")
    assert f"with {PLACES} places" in shown and "did not reach Prolific" in shown
    assert services.store.platform_link("pilot").places == PLACES and _places(prolific, study_id) == PLACES
    assert services.store.list_participants("pilot") == participants
    assert platform.arena_places(services, platform._newest(services, "pilot")) == PLACES + 1
    # The next tick sends it again, and the line goes once it went through.
    assert sync.tick() == [f"pilot: places set to {PLACES + 1} on Prolific (were {PLACES})"]
    assert "did not reach" not in section.shown_line(services, "pilot")
    assert _places(prolific, study_id) == PLACES + 1


def test_a_lost_connection_is_one_line_too(services, prolific):
    study_id = _published(services, prolific)
    sync = PlaceSync(services, lambda: ProlificClient.from_environment(backoff_base_s=0.01, max_retries=1),
                     every_s=30, quiet_s=0)
    _flag(services, "worker-a")
    prolific.fail_next(0, n=2, path=f"studies/{study_id}/")
    (line,) = sync.tick()
    assert "could not reach Prolific to change the places" in line
    assert services.store.platform_link("pilot").places_line == line.removeprefix("pilot: ")
    assert services.store.platform_link("pilot").places == PLACES and _places(prolific, study_id) == PLACES


def test_fewer_places_than_a_published_study_has_are_said_not_sent(services, prolific):
    study_id = _published(services, prolific)
    sync = PlaceSync(services, ProlificClient.from_environment, every_s=30, quiet_s=0)
    publish(services, prolific={**PROLIFIC, "places": 4})
    (line,) = sync.tick()
    assert "The arena now has 4 places and Prolific 8: Prolific only lets a published study's places" in line
    assert _patches(prolific, study_id) == 0 and _places(prolific, study_id) == PLACES
    assert "only lets a published study's places grow" in section.shown_line(services, "pilot")
    publish(services, prolific={**PROLIFIC, "places": 8})
    assert sync.tick() == [] and "only lets" not in section.shown_line(services, "pilot")


def test_two_processes_on_one_database_send_a_change_once(services, prolific):
    study_id = _published(services, prolific)
    other_store = Store(services.settings.db_path)  # a second handle on the same SQLite file
    other = dataclasses.replace(services, store=other_store, scorer=None, _parts={},
                                _parts_lock=threading.Lock())
    try:
        syncs = [PlaceSync(s, ProlificClient.from_environment, every_s=30, quiet_s=0)
                 for s in (services, other)]
        for round_ in range(3):
            _flag(services, f"worker-{round_}")
            lines = _tick_together(syncs)
            assert sorted(len(found) for found in lines) == [0, 1]
            assert _patches(prolific, study_id) == round_ + 1
            assert _places(prolific, study_id) == PLACES + round_ + 1
    finally:
        other_store.close()



def _died_after_claiming(services, seconds_ago: float) -> None:
    """A replica that claimed the push of one more place `seconds_ago` and died before it was confirmed."""
    assert services.store.claim_places_push("pilot", PLACES, PLACES + 1)
    _claimed_ago(services, seconds_ago)


def _claimed_ago(services, seconds_ago: float) -> None:
    when = utc_key(utc_now() - timedelta(seconds=seconds_ago))
    with services.store.write() as conn:
        conn.execute(sa.update(t.platform_studies).where(t.platform_studies.c.study_id == "pilot")
                     .values(places_claimed_at=when))


def _sync(services, lease_s: float = 600) -> PlaceSync:
    return PlaceSync(services, ProlificClient.from_environment, every_s=30, quiet_s=0, lease_s=lease_s)


def test_a_claim_whose_sender_died_is_sent_again_once_its_lease_is_over(services, prolific):
    study_id = _published(services, prolific)
    _flag(services, "worker-a")
    _died_after_claiming(services, 590)
    sync = _sync(services)
    assert sync.tick() == [] and _patches(prolific, study_id) == 0  # within the lease: its sender may be busy
    assert _places(prolific, study_id) == PLACES  # behind the arena's count
    _claimed_ago(services, 610)
    (line,) = sync.tick()
    assert line.startswith(f"pilot: places set to {PLACES + 1} on Prolific again (a push claimed at ")
    assert _places(prolific, study_id) == PLACES + 1 and _patches(prolific, study_id) == 1
    link = services.store.platform_link("pilot")
    assert link.places == PLACES + 1 and link.places_claimed_at is None  # confirmed
    assert sync.tick() == [] and _patches(prolific, study_id) == 1  # nothing more to send
    _flag(services, "worker-b")  # and the next change goes out as ever
    assert sync.tick() == [f"pilot: places set to {PLACES + 2} on Prolific (were {PLACES + 1})"]


def test_a_claim_sent_but_never_confirmed_is_sent_again_harmlessly(services, prolific):
    """The sender died after its call, before the answer was recorded: the same total is set twice, which
    changes nothing on Prolific (a set, not an add)."""
    study_id = _published(services, prolific)
    _flag(services, "worker-a")
    _died_after_claiming(services, 700)
    with ProlificClient.from_environment() as api:
        api.set_places(study_id, PLACES + 1)
    (line,) = _sync(services).tick()
    assert "again" in line and _patches(prolific, study_id) == 2 and _places(prolific, study_id) == PLACES + 1
    assert "did not reach" not in section.shown_line(services, "pilot")


def test_a_retaken_claim_that_fails_is_tried_again_at_the_next_check(services, prolific):
    study_id = _published(services, prolific)
    _flag(services, "worker-a")
    _died_after_claiming(services, 700)
    sync = _sync(services)
    prolific.fail_next(403, path=f"studies/{study_id}/")
    (line,) = sync.tick()
    assert "did not reach Prolific" in line
    assert "did not reach Prolific" in section.shown_line(services, "pilot")
    assert services.store.platform_link("pilot").places_claimed_at is not None  # still not confirmed
    (again,) = sync.tick()  # the claim was put back as it was: taken over again at once
    assert "again" in again and _places(prolific, study_id) == PLACES + 1
    assert "did not reach" not in section.shown_line(services, "pilot")
    assert services.store.platform_link("pilot").places_claimed_at is None


def test_a_count_set_or_read_on_prolific_confirms_a_claim(services, prolific):
    study_id = _published(services, prolific)
    _flag(services, "worker-a")
    _died_after_claiming(services, 5)
    platform.refresh(services, "pilot", ProlificClient.from_environment)  # Prolific still has the old count
    assert services.store.platform_link("pilot").places_claimed_at is not None
    platform.set_places(services, "pilot", ProlificClient.from_environment)  # the researcher sets it
    assert services.store.platform_link("pilot").places_claimed_at is None
    _flag(services, "worker-b")
    assert services.store.claim_places_push("pilot", PLACES + 1, PLACES + 2)
    with ProlificClient.from_environment() as api:  # its sender's call went out; then it died
        api.set_places(study_id, PLACES + 2)
    platform.refresh(services, "pilot", ProlificClient.from_environment)  # Prolific shows the claimed count
    assert services.store.platform_link("pilot").places_claimed_at is None
    assert _sync(services, lease_s=0).tick() == [] and _patches(prolific, study_id) == 2


def test_two_processes_take_over_a_dead_claim_once(services, prolific):
    study_id = _published(services, prolific)
    _flag(services, "worker-a")
    _died_after_claiming(services, 700)
    other_store = Store(services.settings.db_path)
    other = dataclasses.replace(services, store=other_store, scorer=None, _parts={},
                                _parts_lock=threading.Lock())
    try:
        syncs = [_sync(s) for s in (services, other)]
        lines = _tick_together(syncs)
        assert sorted(len(found) for found in lines) == [0, 1]
        assert _patches(prolific, study_id) == 1 and _places(prolific, study_id) == PLACES + 1
    finally:
        other_store.close()
