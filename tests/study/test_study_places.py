"""A paid study's places and dead ends, by the rules alone: systems that cannot run, places that lapse or are
released, a full study's words, workers bound to their session or browser, new worker ids per address."""

from __future__ import annotations

from datetime import timedelta

import pytest
import sqlalchemy as sa

from arena.corpus.bundle import ExportFilter, take_snapshot
from arena.crs_interface import CRSSpec, CRSUnavailable
from arena.dialogue import utc_now
from arena.store import schema as t
from arena.store.statements import utc_key
from arena.study import parse_study
from battle_support import FakeCatalogCRS, make_services
from crs.registry import CRSRegistry
from study_support import publish, study_yaml
from webapp.sessions import study as flow
from webapp.sessions.refusal import Refusal


def link(worker: str, session: str = "s1", **more) -> dict:
    return {"study": "pilot", "PROLIFIC_PID": worker, "STUDY_ID": "abc", "SESSION_ID": session, **more}


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


def test_no_task_is_handed_out_on_a_system_that_is_down(switchable):
    services, up = switchable
    publish(services, quota_per_cell=5, tasks_per_participant=1)
    up["alpha"] = up["beta"] = False
    study, p = started(services, "W1")
    assert p.data["task"]["cell"] == "gamma"
    up["gamma"] = False
    study, p = started(services, "W2")
    assert p.data["step"] == "full"
    notice, may_retry = flow.full_notice(services, study, p)
    assert notice == flow.SYSTEMS_DOWN and may_retry
    up["beta"] = True
    flow.retry_full(services, study, p)
    _, p = flow.enter(services, link("W2"))
    assert p.data["step"] == "task" and p.data["task"]["cell"] == "beta"


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
    flow.send(services, study, p, "A", "a film for tonight")  # the first message takes the place

    def expires() -> str:
        with services.store.read() as conn:
            return conn.execute(sa.select(t.study_claims.c.expires_at)
                                .where(t.study_claims.c.claim_id == claim)).scalar()

    assert expires() <= utc_key(utc_now() + timedelta(minutes=3))  # not abandon_after_minutes
    with services.store.write() as conn:  # three idle minutes later
        conn.execute(sa.update(t.study_claims).where(t.study_claims.c.claim_id == claim)
                     .values(expires_at="2000-01-01T00:00:00.000000Z"))
    assert services.store.cell_fill(study)[p.data["task"]["cell"]]["reserved"] == 0
    flow.send(services, study, p, "A", "back again")  # the worker comes back: the cell had room, held again
    assert expires() > utc_key(utc_now() + timedelta(minutes=2))


def test_a_task_holds_its_place_only_from_its_first_message(services):
    publish(services, quota_per_cell=1, tasks_per_participant=1)
    study, p = started(services, "W1")
    cell = p.data["task"]["cell"]
    # Consent, instructions and an assigned task take nothing: a worker who reads and leaves fills no place.
    assert all(n["reserved"] == 0 for n in services.store.cell_fill(study).values())
    flow.send(services, study, p, "A", "a film for tonight")
    assert services.store.cell_fill(study)[cell]["reserved"] == 1
    flow.send(services, study, p, "A", "something older")  # later messages keep the one place
    assert sum(n["reserved"] for n in services.store.cell_fill(study).values()) == 1


def test_a_cell_filled_before_the_first_message_gives_another_cell_or_the_full_notice(services):
    publish(services, quota_per_cell=1, tasks_per_participant=1, new_workers_per_minute=50)
    study, p = started(services, "W1")
    _, late = started(services, "W2")
    first = p.data["task"]["cell"]
    # Meanwhile another worker (on another app process, say) takes that cell's only place.
    assert services.store.reserve_cell(study, "someone", prefer=first)[0] == first
    flow.send(services, study, p, "A", "a film for tonight")
    _, p = flow.enter(services, link("W1"))
    moved = p.data["task"]["cell"]
    assert moved != first and p.data["task"]["held"]
    (d,) = flow.task_dialogues(services, p).values()
    assert d.crs_id == moved and [u.text for u in d.user_turns()] == ["a film for tonight"]
    assert services.store.cell_fill(study)[moved]["reserved"] == 1
    # The last place goes too: a worker whose task has not begun gets the full study's notice, not a task.
    (last,) = [c for c in study.cells() if c not in (first, moved)]
    services.store.reserve_cell(study, "another", prefer=last)
    with pytest.raises(Refusal) as full:
        flow.send(services, study, late, "A", "hello")
    assert full.value.text == flow.FULL_FOR_NOW
    _, late = flow.enter(services, link("W2"))
    assert late.data["step"] == "full" and "task" not in late.data
    assert all(not d.utterances for d in services.store.list_dialogues() if d.user.id.endswith(late.pseudonym))


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
        flow.enter(services, {"study": "pilot", "PROLIFIC_PID": "P-1"}, browser="someone-else")
    # Without a platform session id, the first browser holds the worker id.
    plain = {"study": "pilot", "worker_id": "M-9"}
    flow.enter(services, plain, browser="browser-one")
    flow.enter(services, plain, browser="browser-one")
    with pytest.raises(Refusal, match="another browser"):
        flow.enter(services, plain, browser="browser-two")
    stored = str([q.data for q in services.store.list_participants("pilot")])
    assert "'s1'" not in stored and "browser-one" not in stored  # kept only as pseudonyms
