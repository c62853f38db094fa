"""A worker's way through a study, by the rules alone: consent, tasks, checks, completion, return visits."""

from __future__ import annotations

import json
from collections import Counter

import pytest
import sqlalchemy as sa

from arena.store import schema as t
from arena.corpus.bundle import vote_rows

from arena.crowd.study import parse_study
from study_support import GOLD, INSTRUCTED, pid, publish, study_yaml
from webapp.sessions import study as flow
from webapp.leaderboard.study_results import export_study, lookup_workers, payment_sheet, study_leaderboard
from webapp.sessions.refusal import Refusal


def link(worker: str, study: str = "pilot") -> dict:
    return {"study": study, "PROLIFIC_PID": pid(worker), "STUDY_ID": pid("platform-study"),
            "SESSION_ID": pid("s1")}


def do_task(services, worker: str, *, sentiment="satisfied", choice=None, attention=None, turns=1):
    study, p = flow.enter(services, link(worker))
    for side in flow.sides(study):
        for turn in range(turns):
            flow.send(services, study, p, side, f"a space movie please ({turn})")
        flow.rate(services, study, p, side, sentiment)
    flow.submit(services, study, p, choice, attention)
    return flow.enter(services, link(worker))


def start(services, worker: str):
    study, p = flow.enter(services, link(worker))
    flow.consent(services, study, p)
    flow.begin(services, study, p)
    return flow.enter(services, link(worker))


def test_a_worker_completes_the_study_and_cannot_complete_twice(services):
    publish(services, attention_check=INSTRUCTED)
    study, p = flow.enter(services, link("W1"))
    assert p.data["step"] == "consent" and pid("W1") not in str(p.pseudonym)
    start(services, "W1")
    study, p = do_task(services, "W1")
    with pytest.raises(Refusal, match="answer every question"):
        do_task(services, "W1")  # task 2 carries the instructed item
    study, p = flow.enter(services, link("W1"))
    flow.submit(services, study, p, None, "Often")  # the verdict stands; the answer completes the task
    study, p = flow.enter(services, link("W1"))
    assert p.status == "completed" and p.data["step"] == "done" and not p.flags
    assert len(set(p.data["served"])) == 2  # never the same system twice
    again_study, again = flow.enter(services, link("W1"))
    assert again.status == "completed" and flow.completed(again)
    flow.begin(services, again_study, again)  # nothing happens: no third task, no second completion
    assert services.store.get_participant("pilot", p.pseudonym).data["step"] == "done"
    assert len(services.store.list_participants("pilot")) == 1
    stored = services.store.list_dialogues()
    assert len(stored) == 2 and {d.metadata["study"] for d in stored} == {"pilot"}
    assert {d.metadata["study_version"] for d in stored} == {1}
    assert all(pid("W1") not in d.model_dump_json() for d in stored)  # the raw worker id is nowhere


def test_a_returning_worker_resumes_the_same_task(services):
    publish(services)
    study, p = start(services, "W2")
    flow.send(services, study, p, "A", "something with robots")
    study, back = flow.enter(services, link("W2"))
    assert back.data["task"] == {**p.data["task"], "held": True}  # the first message took its place
    assert len(flow.task_dialogues(services, back)["A"].user_turns()) == 1


def test_checks_flag_the_worker_who_is_kept_and_left_out_of_results(services, tmp_path):
    publish(services, attention_check=INSTRUCTED, min_task_seconds=3600)
    for worker, answer in (("good", "Often"), ("careless", "Never")):
        start(services, worker)
        do_task(services, worker)
        do_task(services, worker, attention=answer)
    people = {p.pseudonym: p for p in services.store.list_participants("pilot")}
    assert all(p.status == "completed" for p in people.values())
    careless = flow.worker_pseudonym(services, "pilot", pid("careless"))
    assert any("attention check failed" in f for f in people[careless].flags)
    assert all(any("minimum 3600 s" in f for f in p.flags) for p in people.values())  # both far too fast
    sheet = payment_sheet(services, "pilot", tmp_path).read_text().splitlines()
    assert sheet[0] == ("PROLIFIC_PID,SESSION_ID,STUDY_ID,status,status_after_upload,arena_decision,reason,"
                        "known_answer_accuracy,completion_code,pseudonym") and len(sheet) == 3
    assert [row.split(",")[:2] + row.split(",")[3:6] for row in sheet[1:]] == [
        [pid("good"), pid("s1"), "AWAITING REVIEW", "REJECTED", "reject"],
        [pid("careless"), pid("s1"), "AWAITING REVIEW", "REJECTED", "reject"]]
    assert all(",CODE-7731," in row for row in sheet[1:])
    matched = lookup_workers(services, "pilot", f"{pid('careless')}\n{pid('good')}, stranger")
    good = flow.worker_pseudonym(services, "pilot", pid("good"))
    assert matched.to_dict("records")[1:] == [
        {"worker id": pid("good"), "pseudonym": good, "completed": "yes",
         "flags": "; ".join(people[good].flags)},
        {"worker id": "stranger", "pseudonym": "", "completed": "no", "flags": "never started"}]
    board = study_leaderboard(services, "pilot")
    assert board["conversations"].sum() == 0  # everyone was flagged: nothing counts
    result = export_study(services, "pilot", tmp_path / "export", include_flagged=True)
    assert result.counts["dialogues"] == 4 and (tmp_path / "export" / "study-pilot-v1.yaml").exists()
    records = [json.loads(line) for line in result.files["dialogues"].read_text().splitlines()]
    assert {(r["metadata"]["dialogue_metadata"]["study"], r["metadata"]["dialogue_metadata"]["study_version"])
            for r in records} == {("pilot", 1)}
    assert {r["user"]["id"] for r in records} == set(people)  # the payment sheet's pseudonyms
    card = result.files["card"].read_text()
    assert "crowdsourced study `pilot`" in card and "version(s) 1" in card
    assert export_study(services, "pilot", tmp_path / "clean").counts["dialogues"] == 0


def test_a_gold_task_is_a_step_of_its_own(services):
    publish(services, attention_check=GOLD, tasks_per_participant=1)
    start(services, "W3")
    study, p = do_task(services, "W3")
    assert p.data["step"] == "gold" and p.status == "active"
    flow.answer_gold(services, study, p, "satisfied")
    _, p = flow.enter(services, link("W3"))
    assert p.status == "completed" and any("gold task failed" in f for f in p.flags)


def test_quotas_fill_evenly_and_a_full_study_says_so(services):
    publish(services, quota_per_cell=1, tasks_per_participant=1)
    served = []
    for n in range(3):
        start(services, f"W{n}")
        _, p = do_task(services, f"W{n}")
        served += p.data["served"]
    assert sorted(served) == ["alpha", "beta", "gamma"]  # one each: no system ahead of its quota
    # A worker who comes now is told before the consent page, in the platform's words, with no retry advice.
    with pytest.raises(Refusal, match="no place will open again.*Return submission"):
        flow.enter(services, link("late"))
    late = flow.worker_pseudonym(services, "pilot", pid("late"))
    assert services.store.get_participant("pilot", late) is None
    study = parse_study(study_yaml(quota_per_cell=1, tasks_per_participant=1))
    assert all(n["done"] == 1 for n in services.store.cell_fill(study).values())


def test_an_abandoned_place_is_freed(services):
    publish(services, quota_per_cell=1, tasks_per_participant=1)
    study = parse_study(study_yaml(quota_per_cell=1, tasks_per_participant=1))
    held = [services.store.reserve_cell(study, f"p{n}") for n in range(3)]
    assert services.store.reserve_cell(study, "p4") is None
    services.store.release_cell(held[0][1])
    assert services.store.reserve_cell(study, "p4")[0] == held[0][0]
    # A worker who left: their place's time runs out (set in the past here) and the place is free again.
    with services.store.write() as conn:
        conn.execute(sa.update(t.study_claims).where(t.study_claims.c.claim_id == held[1][1])
                     .values(expires_at="2000-01-01T00:00:00.000000Z"))
    assert services.store.reserve_cell(study, "p5")[0] == held[1][0]
    assert services.store.reserve_cell(study, "p6") is None


def test_a_battle_study_stores_a_vote_of_its_crowd(services):
    publish(services, mode="battle", tasks_per_participant=1)
    start(services, "B1")
    with pytest.raises(Refusal, match="which system was better"):
        do_task(services, "B1")
    study, p = flow.enter(services, link("B1"))
    stale = flow.enter(services, link("B1"))[1]  # the same task, as another tab (or app process) holds it
    flow.submit(services, study, p, "A", None)
    with pytest.raises(Refusal, match="no task under way"):
        flow.submit(services, study, stale, "B", None)
    # Another app process, whose worker lock this one does not share, is stopped by the store itself.
    assert not services.store.finish_study_task(stale, stale.data["task"]["claim"], stale.data["task"]["cell"])
    _, p = flow.enter(services, link("B1"))
    assert p.status == "completed"
    (vote,) = services.store.list_votes()
    assert services.store.pair_counts() == {}  # the open arena's pairing counts only its own battles
    (row,) = vote_rows([vote], str)
    assert (row["crowd"], row["study_version"]) == ("pilot", 1)
    assert vote.study == "pilot" and vote.study_version == 1 and "|".join(sorted((vote.crs_a, vote.crs_b))) \
        == p.data["served"][0]


def test_bad_links_are_one_clear_line(services):
    publish(services, closes="2020-01-01T00:00:00Z", opens="2019-01-01T00:00:00Z")
    for params, words in (({"study": "nope", "worker_id": pid("x")}, "no such study"),
                          ({"study": "pilot"}, "no worker id"),
                          ({"study": "pilot", "worker_id": "x" * 500}, "not valid"),
                          ({"study": "pilot", "worker_id": pid("x")}, "closed")):
        with pytest.raises(Refusal, match=words):
            flow.enter(services, params)
    assert Counter(p.status for p in services.store.list_participants("pilot")) == Counter()


def test_the_aspect_form_answers_are_stored_with_the_task(services):
    from webapp.sessions.aspect_ratings import form_for

    publish(services, aspects="default", tasks_per_participant=1)
    form = form_for(services)
    first = form.dialogue[0]
    study, p = start(services, "A1")
    flow.send(services, study, p, "A", "a heist movie")
    flow.rate(services, study, p, "A", "satisfied")
    with pytest.raises(Refusal, match="outside the scale"):
        flow.submit(services, study, p, None, None, [first.high + 10] + [None] * (len(form.dialogue) - 1))
    flow.submit(services, study, p, None, None, [first.high] + [None] * (len(form.dialogue) - 1))
    (d,) = services.store.list_dialogues()
    assert d.ratings[0].values == {first.name: first.high} and d.ratings[0].rater_id == d.user.id
    assert flow.enter(services, link("A1"))[1].status == "completed"
