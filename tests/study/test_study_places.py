"""A paid study's places and dead ends, by the rules alone: systems that cannot run, places that lapse or are
released, a full study's words, workers bound to their session or browser, new worker ids per address."""

from __future__ import annotations

from datetime import timedelta

import pytest
import sqlalchemy as sa

from arena.corpus.bundle import ExportFilter, take_snapshot
from arena.conversation.crs_interface import CRSSpec, CRSUnavailable
from arena.dialogue import utc_now
from arena.store import schema as t
from arena.store.statements import utc_key
from arena.crowd.study import parse_study
from battle_support import FakeCatalogCRS, make_services
from crs.registry import CRSRegistry
from study_support import pid, publish, study_yaml
from webapp.sessions import study as flow
from webapp.sessions.refusal import Refusal


def link(worker: str, session: str = "s1", **more) -> dict:
    return {"study": "pilot", "PROLIFIC_PID": pid(worker), "STUDY_ID": pid("platform-study"),
            "SESSION_ID": pid(session), **more}


def started(services, worker: str, **kw):
    study, p = flow.enter(services, link(worker), **kw)
    flow.consent(services, study, p)
    flow.begin(services, study, p)
    return flow.enter(services, link(worker))


def finish_task(services, worker: str):
    study, p = flow.enter(services, link(worker))
    flow.send(services, study, p, "A", "a space movie please")
    flow.rate(services, study, p, "A", "satisfied")
    flow.submit(services, study, p, None, None)
    return flow.enter(services, link(worker))


@pytest.fixture
def switchable(tmp_path):
    """Services whose systems can be switched off and on (`up[name] = False`), as a server going down."""
    up = {"alpha": True, "beta": True, "gamma": True}
    svc = make_services(tmp_path, [])
    systems = {name: FakeCatalogCRS(name) for name in up}

    def spec(name: str) -> CRSSpec:
        return CRSSpec(name=name, family="fake", dataset="redial", description="test system",
                       load=lambda: systems[name], live_check=True,
                       check=lambda: None if up[name] else CRSUnavailable(name, "its server is down", "restart it"))

    svc.registry = CRSRegistry([spec(name) for name in up])
    yield svc, up
    svc.store.close()


# -- 1. no dead ends -------------------------------------------------------------------------------


def test_a_study_naming_a_system_that_cannot_run_is_refused_with_the_reason(switchable):
    services, up = switchable
    up["beta"] = False
    study = parse_study(study_yaml())
    line = flow.systems_problem(services, study)
    assert line == "study file: systems: beta cannot run here: its server is down; to get it: restart it"
    unknown = flow.systems_problem(services, parse_study(study_yaml(systems=["alpha", "kbrd_nowhere"])))
    assert unknown.startswith("study file: systems: 'kbrd_nowhere' is not a system of this arena")
    up["beta"] = True
    assert flow.systems_problem(services, study) is None
    assert "beta" in flow.systems_status(services)


def test_no_task_is_handed_out_on_a_system_that_is_down_and_the_notice_names_the_cause(switchable):
    services, up = switchable
    publish(services, quota_per_cell=5, tasks_per_participant=1)
    up["alpha"] = up["beta"] = False
    study, p = started(services, "W1")
    assert p.data["task"]["cell"] == "gamma"
    study, w2 = flow.enter(services, link("W2"))  # came while gamma was up
    flow.consent(services, study, w2)
    up["gamma"] = False
    # A new worker is told before the consent page, and the line names the cause, not other workers.
    with pytest.raises(Refusal) as before:
        flow.enter(services, link("W3"))
    assert before.value.text == flow.SYSTEMS_DOWN and "other workers" not in before.value.text
    assert services.store.get_participant("pilot", flow.worker_pseudonym(services, "pilot", pid("W3"))) \
        is None
    assert flow.start_notice(services, study, w2) == flow.SYSTEMS_DOWN  # shown on a returning worker's page
    flow.begin(services, study, w2)
    _, w2 = flow.enter(services, link("W2"))
    assert w2.data["step"] == "full" and flow.full_notice(services, study, w2) == (flow.SYSTEMS_DOWN, True)
    up["beta"] = True
    # The first notice once a system is back says a place is free, not that places are held by others.
    assert flow.full_notice(services, study, w2) == (flow.ROOM_AGAIN, True)
    flow.retry_full(services, study, w2)
    _, w2 = flow.enter(services, link("W2"))
    assert w2.data["step"] == "task" and w2.data["task"]["cell"] == "beta"


def test_a_system_that_goes_down_before_the_first_message_is_swapped_and_nothing_empty_is_exported(switchable):
    services, up = switchable
    publish(services, quota_per_cell=5, tasks_per_participant=1)
    study, p = started(services, "W1")
    first = p.data["task"]["cell"]
    up[first] = False
    with pytest.raises(Refusal, match="new task"):
        flow.send(services, study, p, "A", "hello")
    _, p = flow.enter(services, link("W1"))
    assert p.data["step"] == "task" and p.data["task"]["cell"] != first
    assert services.store.cell_fill(study)[first] == {"done": 0, "reserved": 0, "quota": 5}
    _, p = finish_task(services, "W1")
    assert p.status == "completed"
    exported = take_snapshot(services.store, ExportFilter(crowd="pilot")).dialogues
    assert len(services.store.list_dialogues()) == 2  # the given-up task's conversation stays stored ...
    assert [d.crs_id for d in exported] == [p.data["served"][0]] and all(d.utterances for d in exported)


def claim_expiry(services, claim: str) -> str:
    with services.store.read() as conn:
        return conn.execute(sa.select(t.study_claims.c.expires_at)
                            .where(t.study_claims.c.claim_id == claim)).scalar()


def lapse(services, claim: str) -> None:
    """The place's time runs out (set in the past here), as it would after its minutes without activity."""
    with services.store.write() as conn:
        conn.execute(sa.update(t.study_claims).where(t.study_claims.c.claim_id == claim)
                     .values(expires_at="2000-01-01T00:00:00.000000Z"))


# -- 2. quotas fill with good work -----------------------------------------------------------------


def test_a_flagged_worker_releases_their_places_unless_the_study_counts_flagged_work(services):
    publish(services, quota_per_cell=1, tasks_per_participant=1, min_task_seconds=3600)
    study = parse_study(study_yaml(quota_per_cell=1, tasks_per_participant=1, min_task_seconds=3600))
    started(services, "fast")
    _, p = finish_task(services, "fast")
    assert p.status == "completed" and p.flags  # finished too fast: paid or not, the researcher decides
    assert all(n["done"] == 0 and n["reserved"] == 0 for n in services.store.cell_fill(study).values())
    assert services.store.released_places("pilot") == 1


def test_flagged_work_fills_places_when_the_file_says_so(services):
    publish(services, quota_per_cell=1, tasks_per_participant=1, min_task_seconds=3600, flagged_counts=True)
    study = parse_study(study_yaml(quota_per_cell=1, tasks_per_participant=1, min_task_seconds=3600))
    started(services, "fast")
    finish_task(services, "fast")
    assert sum(n["done"] for n in services.store.cell_fill(study).values()) == 1


def test_a_place_lapses_after_minutes_without_activity_and_activity_keeps_it(services):
    publish(services, quota_per_cell=1, tasks_per_participant=1, idle_minutes=3, abandon_after_minutes=60)
    study, p = started(services, "W1")
    claim = p.data["task"]["claim"]
    flow.send(services, study, p, "A", "a film for tonight")  # the first message keeps the place
    assert claim_expiry(services, claim) <= utc_key(utc_now() + timedelta(minutes=3))  # not abandon_after
    lapse(services, claim)  # three idle minutes later
    assert services.store.cell_fill(study)[p.data["task"]["cell"]]["reserved"] == 0
    flow.send(services, study, p, "A", "back again")  # the worker comes back: the cell had room, held again
    assert claim_expiry(services, claim) > utc_key(utc_now() + timedelta(minutes=2))


def test_a_task_holds_its_place_from_its_start_and_lets_it_go_on_timeout(services):
    publish(services, quota_per_cell=1, tasks_per_participant=1, start_hold_minutes=7, idle_minutes=3,
            new_workers_per_minute=50)
    study, reader = flow.enter(services, link("reader"))
    flow.consent(services, study, reader)  # consent and instructions take nothing
    assert all(n["reserved"] == 0 for n in services.store.cell_fill(study).values())
    study, p = started(services, "W1")
    cell, claim = p.data["task"]["cell"], p.data["task"]["claim"]
    assert p.data["task"]["held"] and services.store.cell_fill(study)[cell]["reserved"] == 1  # from Start
    # Held for the first message as long as the study file says (not idle_minutes, not abandon_after_minutes).
    assert utc_key(utc_now() + timedelta(minutes=6.9)) < claim_expiry(services, claim) \
        <= utc_key(utc_now() + timedelta(minutes=7))
    flow.send(services, study, p, "A", "a film for tonight")
    flow.send(services, study, p, "A", "something older")  # later messages keep the one place
    assert sum(n["reserved"] for n in services.store.cell_fill(study).values()) == 1
    assert claim_expiry(services, claim) <= utc_key(utc_now() + timedelta(minutes=3))  # now idle_minutes
    lapse(services, claim)  # on timeout the place is free for others
    assert services.store.cell_fill(study)[cell]["reserved"] == 0


def test_a_worker_who_writes_never_loses_the_task(services):
    publish(services, quota_per_cell=1, tasks_per_participant=1, new_workers_per_minute=50)
    study, real = started(services, "W1")
    _, other = started(services, "W2")
    _, third = started(services, "W3")
    assert len({w.data["task"]["cell"] for w in (real, other, third)}) == 3
    # Every place is held from Start on: a late worker is told before anything, and nobody takes a place
    # that a worker who started holds.
    with pytest.raises(Refusal) as late:
        flow.enter(services, link("late"))
    assert late.value.text == flow.FULL_FOR_NOW
    flow.send(services, study, real, "A", "a film for tonight")
    _, real = flow.enter(services, link("W1"))
    (d,) = flow.task_dialogues(services, real).values()
    assert [u.text for u in d.user_turns()] == ["a film for tonight"]
    # W2 wrote nothing within the hold: the place lapses and is taken by someone else meanwhile. W2 writing
    # now still keeps a task: with no other cell free it goes on all the same (and counts when finished).
    cell = other.data["task"]["cell"]
    lapse(services, other.data["task"]["claim"])
    assert services.store.reserve_cell(study, "someone", prefer=cell)[0] == cell
    flow.send(services, study, other, "A", "hello")
    _, other = finish_task(services, "W2")
    assert other.status == "completed" and other.data["served"] == [cell]


def test_a_lapsed_task_moves_to_a_free_cell_at_its_first_message(services):
    publish(services, quota_per_cell=1, tasks_per_participant=1, new_workers_per_minute=50)
    study, p = started(services, "W1")
    first = p.data["task"]["cell"]
    lapse(services, p.data["task"]["claim"])
    assert services.store.reserve_cell(study, "someone", prefer=first)[0] == first
    flow.send(services, study, p, "A", "a film for tonight")
    _, p = flow.enter(services, link("W1"))
    moved = p.data["task"]["cell"]
    assert moved != first and p.data["task"]["held"]
    (d,) = flow.task_dialogues(services, p).values()
    assert d.crs_id == moved and [u.text for u in d.user_turns()] == ["a film for tonight"]
    assert services.store.cell_fill(study)[moved]["reserved"] == 1


def test_a_full_study_says_whether_a_place_may_open(services):
    publish(services, quota_per_cell=1, tasks_per_participant=1, new_workers_per_minute=50)
    for n in range(3):
        study, p = started(services, f"W{n}")
        flow.send(services, study, p, "A", "hello")  # each first message takes a place
    with pytest.raises(Refusal) as held:
        flow.enter(services, link("late"))
    assert held.value.text == flow.FULL_FOR_NOW and "Return submission" in held.value.text
    for n in range(3):
        finish_task(services, f"W{n}")
    with pytest.raises(Refusal) as done:
        flow.enter(services, link("later"))
    assert done.value.text == flow.FULL_FOR_GOOD and "Try again" not in done.value.text


def test_new_worker_ids_per_address_are_limited_per_study(services):
    publish(services, new_workers_per_minute=2)
    for worker in ("a1", "a2"):
        flow.enter(services, link(worker), address="10.0.0.1")
    with pytest.raises(Refusal, match="Too many new workers"):
        flow.enter(services, link("a3"), address="10.0.0.1")
    flow.enter(services, link("a1"), address="10.0.0.1")  # a returning worker is no new worker
    flow.enter(services, link("b1"), address="10.0.0.2")
    assert len(services.store.list_participants("pilot")) == 3


def test_a_worker_id_is_bound_to_its_platform_session_or_first_browser(services):
    publish(services)
    study, p = started(services, "P-1")
    flow.send(services, study, p, "A", "my secret taste in films")
    with pytest.raises(Refusal, match="another browser or platform session"):
        flow.enter(services, link("P-1", session="s2"))
    with pytest.raises(Refusal, match="another browser or platform session"):
        flow.enter(services, {"study": "pilot", "PROLIFIC_PID": pid("P-1")}, browser="someone-else")
    # Without a platform session id, the first browser holds the worker id.
    plain = {"study": "pilot", "worker_id": pid("M-9")}
    flow.enter(services, plain, browser="browser-one")
    flow.enter(services, plain, browser="browser-one")
    with pytest.raises(Refusal, match="another browser"):
        flow.enter(services, plain, browser="browser-two")
    stored = str([q.data for q in services.store.list_participants("pilot")])
    assert pid("s1") not in stored and "browser-one" not in stored  # kept only as pseudonyms
