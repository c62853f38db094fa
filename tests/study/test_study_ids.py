"""Only real workers take paid places: a study link's platform ids are checked against the platform's format
before anything is stored, the link pasted from the Studies tab and opened as it is is refused in one line,
and other platforms' ids are taken only where the study file says so (or in the researchers' preview)."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlsplit

import pytest

from study_support import pid, publish
from webapp.sessions import study as flow
from webapp.sessions.refusal import Refusal
from webapp.sessions.study_ids import PLACEHOLDER_LINE
from webapp.ui.studies_tab import participant_link


def nothing_stored(services) -> bool:
    store = services.store
    return not store.list_participants("pilot", previews=True) and not store.platform_ids("pilot")


def finish_everything(services, params: dict) -> None:
    study, p = flow.enter(services, params)
    flow.consent(services, study, p)
    flow.begin(services, study, p)
    study, p = flow.enter(services, params)
    flow.send(services, study, p, "A", "a space movie please")
    flow.rate(services, study, p, "A", "satisfied")
    flow.submit(services, study, p, None, None)


@pytest.mark.parametrize("ids", [
    {"PROLIFIC_PID": "anything", "SESSION_ID": "x"},  # the made-up link of the report
    {"PROLIFIC_PID": pid("w"), "SESSION_ID": "x"},  # a real worker id with a made-up session
    {"PROLIFIC_PID": pid("w"), "STUDY_ID": "abc"},
    {"PROLIFIC_PID": pid("w").upper()},  # Prolific writes lower case: not a second id for the same worker
    {"PROLIFIC_PID": pid("w") + "0"},
    {"worker_id": "A1B2C3D4E5F6G7"},  # another platform's id, in a study that takes Prolific's only
])
def test_made_up_ids_take_no_place(services, ids):
    publish(services, quota_per_cell=1, tasks_per_participant=1)
    with pytest.raises(Refusal, match="not a Prolific id.*open the study from Prolific"):
        flow.enter(services, {"study": "pilot", **ids})
    assert nothing_stored(services)


def test_the_link_of_the_studies_tab_opened_as_it_is_is_refused_in_one_line(services):
    publish(services)
    link = participant_link("https://arena.example", "pilot")
    params = dict(parse_qsl(urlsplit(link).query))
    assert params["PROLIFIC_PID"] == "{{%PROLIFIC_PID%}}"  # what a browser sends for the link as shown
    with pytest.raises(Refusal) as refused:
        flow.enter(services, params)
    assert refused.value.text == PLACEHOLDER_LINE.format(name="PROLIFIC_PID")
    assert "\n" not in refused.value.text
    assert "open" in refused.value.text and "from the platform" in refused.value.text
    # A real worker id beside a session placeholder is the pasted link too, filled in by hand.
    with pytest.raises(Refusal, match="SESSION_ID in this link is the platform's placeholder"):
        flow.enter(services, {**params, "PROLIFIC_PID": pid("w")})
    assert nothing_stored(services)


def test_a_prolific_link_as_the_platform_fills_it_in_is_taken_and_paid(services, tmp_path):
    from webapp.leaderboard.study_results import payment_sheet

    publish(services, quota_per_cell=1, tasks_per_participant=1)
    finish_everything(services, {"study": "pilot", "PROLIFIC_PID": pid("w"), "STUDY_ID": pid("study"),
                                 "SESSION_ID": pid("session")})
    sheet = payment_sheet(services, "pilot", tmp_path).read_text().splitlines()
    assert sheet[1].split(",")[:5] == [pid("w"), pid("session"), pid("study"), "AWAITING REVIEW", "APPROVED"]


def test_other_ids_only_where_the_study_file_says_so(services):
    publish(services, worker_ids="any", quota_per_cell=1, tasks_per_participant=1)
    finish_everything(services, {"study": "pilot", "worker_id": "A1B2C3D4E5F6G7",
                                 "SESSION_ID": "assignment-9"})
    (worker,) = services.store.list_participants("pilot")
    assert worker.status == "completed"
    # Placeholders stay refused whatever the setting: other tools write them as ${...} or [%...%].
    for placeholder in ("${workerId}", "[%workerId%]", "%WORKER_ID%", "{{%PROLIFIC_PID%}}"):
        with pytest.raises(Refusal, match="placeholder"):
            flow.enter(services, {"study": "pilot", "worker_id": placeholder})
    with pytest.raises(Refusal, match="not valid"):
        flow.enter(services, {"study": "pilot", "worker_id": "x" * 500})


def test_the_preview_needs_no_worker_id(services):
    publish(services)
    token = flow.preview_token(services, "pilot")
    study, walk = flow.enter(services, {"study": "pilot", "preview": token}, browser="researcher-browser")
    assert flow.is_preview(walk) and not services.store.platform_ids("pilot")
