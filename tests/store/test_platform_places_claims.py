"""A place push claimed in the store (arena/store/platform_studies.py), on SQLite and PostgreSQL: a claim
records when it was taken until the platform confirms the count; a claim never confirmed is taken over by
one caller once it is older than the lease, and a failed take-over is put back as it was."""

from __future__ import annotations

from datetime import timedelta

from arena.dialogue import utc_now
from arena.store.statements import utc_key


def _key(seconds_from_now: float) -> str:
    return utc_key(utc_now() + timedelta(seconds=seconds_from_now))


def test_a_claim_is_dated_confirmed_and_taken_over_once(store):
    store.link_platform_study("pilot", "65f0", "ACTIVE", 8)
    assert store.platform_link("pilot").places_claimed_at is None
    assert store.claim_places_push("pilot", 8, 9)
    claimed_at = store.platform_link("pilot").places_claimed_at
    assert claimed_at is not None and store.platform_link("pilot").places == 9
    assert not store.claim_places_push("pilot", 9, 10)  # a claim not confirmed holds the count
    assert not store.retake_places_push("pilot", 9, claimed_at, older_than=_key(-600))  # still fresh
    assert not store.retake_places_push("pilot", 8, claimed_at, older_than=_key(1))  # not the count read
    assert store.retake_places_push("pilot", 9, claimed_at, older_than=_key(1))  # its lease is over
    assert not store.retake_places_push("pilot", 9, claimed_at, older_than=_key(1))  # once only
    retaken_at = store.platform_link("pilot").places_claimed_at
    assert retaken_at is not None and retaken_at >= claimed_at
    store.note_platform_study("pilot", "ACTIVE", 9)  # a status read confirms nothing
    assert store.platform_link("pilot").places_claimed_at == retaken_at
    store.note_platform_study("pilot", "ACTIVE", 9, places_sent=True)
    assert store.platform_link("pilot").places_claimed_at is None
    assert store.claim_places_push("pilot", 9, 10)


def test_a_failed_push_gives_its_claim_up_and_a_failed_take_over_puts_it_back(store):
    store.link_platform_study("pilot", "65f0", "ACTIVE", 8)
    assert store.claim_places_push("pilot", 8, 9)
    store.undo_places_push("pilot", 9, 8, "refused")
    link = store.platform_link("pilot")
    assert (link.places, link.places_claimed_at, link.places_line) == (8, None, "refused")
    assert store.claim_places_push("pilot", 8, 9)
    stale = _key(-3600)
    assert store.retake_places_push("pilot", 9, store.platform_link("pilot").places_claimed_at, _key(1))
    store.undo_places_push("pilot", 9, 9, "refused again", claimed_at=stale)
    link = store.platform_link("pilot")
    assert (link.places, link.places_claimed_at) == (9, stale)  # taken over again at the next check
    assert store.retake_places_push("pilot", 9, stale, older_than=_key(-600))
    store.link_platform_study("pilot", "65f1", "UNPUBLISHED", 9)  # created again: no claim
    assert store.platform_link("pilot").places_claimed_at is None
