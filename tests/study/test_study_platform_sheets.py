"""The files a researcher uploads to the platform without its API (an approve list, a reject list with
reasons, the full sheet in the platform's own statuses), and a study run on Amazon Mechanical Turk: its
link parameters checked, its preview taking no place, its external-submit form at the end."""

from __future__ import annotations

import csv
from urllib.parse import parse_qs, urlsplit

import pytest

from arena.crowd.study import StudyError, parse_study
from study_support import INSTRUCTED, pid, publish, study_yaml
from webapp.leaderboard.study_results import payment_files, payment_sheet
from webapp.sessions import study as flow
from webapp.sessions.refusal import Refusal

ASSIGNMENT, HIT = "3" + "A" * 29, "3" + "H" * 29
SANDBOX = "https://workersandbox.mturk.com"


def prolific(worker: str) -> dict:
    return {"study": "pilot", "PROLIFIC_PID": pid(worker), "STUDY_ID": pid("platform-study"),
            "SESSION_ID": pid(f"S-{worker}")}


def mturk(worker: str, assignment: str = ASSIGNMENT, submit_to: str = SANDBOX) -> dict:
    return {"study": "pilot", "workerId": worker, "assignmentId": assignment, "hitId": HIT,
            "turkSubmitTo": submit_to}


def all_tasks(services, params: dict, attention=None, tasks: int = 2):
    study, p = flow.enter(services, params)
    flow.consent(services, study, p)
    flow.begin(services, study, p)
    for number in range(1, tasks + 1):
        study, p = flow.enter(services, params)
        flow.send(services, study, p, "A", "a western please")
        flow.rate(services, study, p, "A", "satisfied")
        flow.submit(services, study, p, None, attention if number == 2 else None)
    return flow.enter(services, params)


def test_the_approve_and_reject_lists_are_in_the_form_prolific_takes(services, tmp_path):
    publish(services, attention_check=INSTRUCTED, bonus={"fixed": "1.50"})
    all_tasks(services, prolific("good"), attention="Often")
    all_tasks(services, prolific("careless"), attention="Never")
    study, p = flow.enter(services, prolific("left"))
    approve, reject, bonus, sheet = payment_files(services, "pilot", tmp_path)
    assert approve.read_text() == f"{pid('good')}\n"
    assert bonus.read_text().splitlines() == ["id,amount", f"{pid('good')},1.50"]  # the careless earn none  # one id a line, nothing else, as bulk approve takes it
    with reject.open(newline="") as f:
        (row,) = list(csv.DictReader(f))
    assert row["id"] == pid("careless") and row["reason"].startswith("attention check failed")
    with sheet.open(newline="") as f:
        statuses = {r["PROLIFIC_PID"]: (r["status"], r["status_after_upload"], r["arena_decision"])
                    for r in csv.DictReader(f)}
    assert statuses == {pid("good"): ("AWAITING REVIEW", "APPROVED", "approve"),
                        pid("careless"): ("AWAITING REVIEW", "REJECTED", "reject"),
                        pid("left"): ("ACTIVE", "ACTIVE", "unfinished")}


def test_a_worker_asked_to_return_and_one_whose_place_lapsed_have_the_platforms_statuses(services, tmp_path):
    import time

    publish(services, tasks_per_participant=1, abandon_after_minutes=0.01)  # a place is held 0.6 s at most
    _, stalled = flow.enter(services, prolific("stalled"))
    stalled.data["step"] = "full"  # every place was taken when they came back: the page asked them to return
    services.store.save_participant(stalled)
    flow.enter(services, prolific("gone"))
    time.sleep(1.0)
    flow.enter(services, prolific("here"))
    with payment_sheet(services, "pilot", tmp_path).open(newline="") as f:
        statuses = {r["PROLIFIC_PID"]: r["status"] for r in csv.DictReader(f)}
    assert statuses == {pid("stalled"): "RETURNED", pid("gone"): "TIMED-OUT", pid("here"): "ACTIVE"}


def test_an_mturk_study_reads_mturks_parameters_and_posts_its_submit_form(services, tmp_path):
    publish(services, platform="mturk", tasks_per_participant=2, bonus={"per_valid_task": "0.20"})
    worker = "A1B2C3D4E5F6G7"
    study, p = all_tasks(services, mturk(worker))
    assert flow.completed(p)
    address = flow.completion_address(services, study, p)
    parts = urlsplit(address)
    assert f"{parts.scheme}://{parts.netloc}{parts.path}" == f"{SANDBOX}/mturk/externalSubmit"
    assert parse_qs(parts.query) == {"assignmentId": [ASSIGNMENT], "completion": ["CODE-7731"]}
    approve, reject, bonus, sheet = payment_files(services, "pilot", tmp_path)
    assert approve.read_text() == f"{ASSIGNMENT}\n"
    assert bonus.read_text().splitlines() == ["id,amount,assignmentId", f"{worker},0.40,{ASSIGNMENT}"]  # MTurk approves an assignment, not a worker
    with sheet.open(newline="") as f:
        (row,) = list(csv.DictReader(f))
    assert (row["workerId"], row["assignmentId"], row["hitId"]) == (worker, ASSIGNMENT, HIT)
    assert (row["status"], row["status_after_upload"], row["arena_decision"]) == ("Submitted", "Approved",
                                                                                   "approve")
    # The raw assignment id stays in the researcher-only table: the worker's row keeps the HIT and host only.
    assert ASSIGNMENT not in str(p.data) and worker not in str(p.data)


@pytest.mark.parametrize("params, line", [
    ({"assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE"}, "previewing this task on MTurk"),
    ({"workerId": "not-a-worker"}, "workerId in this link is not one MTurk gives"),
    ({"assignmentId": "short"}, "assignmentId in this link is not one MTurk gives"),
    ({"hitId": "${hitId}"}, "hitId in this link is the platform's placeholder"),
    ({"turkSubmitTo": "https://evil.example.com"}, "turkSubmitTo in this link is not Amazon Mechanical Turk's"),
    ({"workerId": ""}, "no worker id"),
])
def test_mturks_preview_and_malformed_ids_take_nothing(services, params, line):
    publish(services, platform="mturk")
    with pytest.raises(Refusal, match=line) as refused:
        flow.enter(services, {**mturk("A1B2C3D4E5F6G7"), **params})
    assert "\n" not in refused.value.text
    assert services.store.list_participants("pilot") == [] and services.store.platform_ids("pilot") == {}


def test_a_prolific_link_on_an_mturk_study_is_refused(services):
    publish(services, platform="mturk")
    with pytest.raises(Refusal, match="no worker id"):
        flow.enter(services, prolific("w"))


def test_an_mturk_study_file_returns_through_mturk_and_needs_no_redirect():
    assert parse_study(study_yaml(platform="mturk", completion_code=None)).platform == "mturk"
    with pytest.raises(StudyError, match="redirect_url: an MTurk study returns"):
        parse_study(study_yaml(platform="mturk", redirect_url="https://example.org/done"))
    with pytest.raises(StudyError, match="platform"):
        parse_study(study_yaml(platform="crowdflower"))
