"""A study run on Prolific from the Studies page, against the local server that models Prolific's API:
created from the study file and published, its status read back, places in step both ways, a pause or a
close made on either side seen on the other (a Refresh or the signed webhook), and every failure of the
platform one line that changes nothing in the arena."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))

from prolific_server import ProlificServer  # noqa: E402
from study_support import publish  # noqa: E402

from arena.crowd.prolific_api import ProlificClient, webhook_signature  # noqa: E402
from arena.crowd.study import parse_study  # noqa: E402
from webapp.sessions import platform_link as platform  # noqa: E402
from webapp.ui import studies_platform as section  # noqa: E402

PROLIFIC = {"reward": 250, "estimated_minutes": 15, "description": "Chat with movie recommenders.",
            "devices": ["desktop", "tablet"]}
LINK = "https://arena.example/study/?study=pilot&PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}" \
       "&SESSION_ID={{%SESSION_ID%}}"
PLACES = 8  # three systems, five tasks each, two tasks a worker: 15 / 2 rounded up


def _client(server: ProlificServer) -> ProlificClient:
    return ProlificClient(server.token, server.url, max_retries=0)


def _act(services, action, *args) -> str:
    return section.run_action(services, "pilot", lambda: action(services, "pilot", *args,
                                                                 ProlificClient.from_environment))


def _created(services, prolific, **changes) -> str:
    publish(services, prolific=PROLIFIC, **changes)
    line = _act(services, platform.create, LINK)
    assert line.startswith("Created on Prolific as study "), line
    (study_id,) = prolific.state.studies
    return study_id


def test_the_draft_is_built_from_the_study_file_and_published(services, prolific):
    study_id = _created(services, prolific)
    fields = prolific.state.studies[study_id].fields
    assert (fields["name"], fields["internal_name"], fields["description"]) == (
        "Movie chat pilot", "pilot", "Chat with movie recommenders.")
    assert fields["external_study_url"] == LINK and fields["prolific_id_option"] == "url_parameters"
    assert fields["completion_codes"] == [{"code": "CODE-7731", "code_type": "COMPLETED",
                                           "actions": [{"action": "MANUALLY_REVIEW"}]}]
    assert (fields["reward"], fields["estimated_completion_time"], fields["total_available_places"]) == (
        250, 15, PLACES)
    assert fields["device_compatibility"] == ["desktop", "tablet"]
    link = services.store.platform_link("pilot")
    assert (link.platform_study_id, link.status, link.places) == (study_id, "UNPUBLISHED", PLACES)
    assert _act(services, platform.create, LINK).startswith("⚠️ pilot is on Prolific already")
    assert len(prolific.state.studies) == 1

    assert _act(services, platform.publish) == "Published: Prolific says ACTIVE."
    assert prolific.state.studies[study_id].status == "ACTIVE"
    line = _act(services, platform.refresh)
    assert line == f"Prolific: study {study_id} is ACTIVE, 0 of {PLACES} places taken."
    prolific.reserve(study_id)
    assert "1 of 8 places taken" in _act(services, platform.refresh)


def test_a_file_without_a_prolific_block_and_a_missing_token_are_one_line(services, prolific, monkeypatch):
    publish(services)
    line = _act(services, platform.create, LINK)
    assert line.startswith("⚠️ pilot has no prolific: block") and "\n" not in line
    monkeypatch.delenv("PROLIFIC_API_TOKEN")
    publish(services, prolific=PROLIFIC)
    assert _act(services, platform.create, LINK) == f"⚠️ {section.NO_TOKEN}"
    assert "set PROLIFIC_API_TOKEN" in section.shown_line(services, "pilot")
    assert prolific.state.studies == {} and services.store.platform_link("pilot") is None


def test_places_follow_the_arena_and_a_count_changed_on_the_platform_is_shown(services, prolific):
    study_id = _created(services, prolific, quotas={"alpha": 7})  # 17 tasks: 9 places
    assert prolific.state.studies[study_id].fields["total_available_places"] == 9
    # Changed on the platform while a draft: the page says so and sets it back when asked.
    prolific.state.studies[study_id].fields["total_available_places"] = 12
    line = _act(services, platform.refresh)
    assert "Prolific has 12 places, the arena 9" in line
    assert _act(services, platform.set_places) == "Prolific's places set to 9."
    assert prolific.state.studies[study_id].fields["total_available_places"] == 9
    _act(services, platform.publish)
    # The arena adds places (a new version of the file) and frees one (a flagged worker's work fills none).
    publish(services, prolific=PROLIFIC, quotas={"alpha": 9})  # 19 tasks: 10 places
    services.store.join_study("pilot", "worker-a", 2, {"flags": ["too fast"]})
    assert "0 of 11 places taken" in _act(services, platform.refresh)
    assert prolific.state.studies[study_id].fields["total_available_places"] == 11
    assert services.store.platform_link("pilot").places == 11
    # Fewer places are never taken from a published study: asked, the platform's refusal is the line.
    publish(services, prolific={**PROLIFIC, "places": 4})  # and the flagged worker's place: 5
    assert "Prolific has 11 places, the arena 5" in _act(services, platform.refresh)
    line = _act(services, platform.set_places)
    assert line.startswith("⚠️ Nothing changed: Prolific refused") and "\n" not in line
    assert services.store.platform_link("pilot").places == 11


def test_pause_resume_and_close_in_the_arena_reach_the_platform_first(services, prolific):
    study_id = _created(services, prolific)
    _act(services, platform.publish)
    assert section.follow_state(services, "pilot", "paused") is None
    assert prolific.state.studies[study_id].status == "PAUSED"
    assert section.follow_state(services, "pilot", "open") is None
    assert prolific.state.studies[study_id].status == "ACTIVE"
    # A platform that refuses: the arena is told not to change anything.
    prolific.fail_next(403, path="transition")
    line = section.follow_state(services, "pilot", "paused")
    assert line.startswith("⚠️ Nothing changed: Prolific refused or could not be reached") and "\n" not in line
    assert prolific.state.studies[study_id].status == "ACTIVE"
    assert services.store.study_state("pilot") == "open"
    assert section.follow_state(services, "pilot", "closed") is None
    assert prolific.state.studies[study_id].status == "COMPLETED"


def test_without_a_token_the_arena_changes_and_says_prolific_was_not_told(services, prolific, monkeypatch):
    study_id = _created(services, prolific)
    _act(services, platform.publish)
    monkeypatch.delenv("PROLIFIC_API_TOKEN")
    assert section.follow_state(services, "pilot", "paused") is None  # nothing blocks the arena's part
    line = section.not_told(services, "pilot", "paused")
    assert "Prolific was not told: set PROLIFIC_API_TOKEN" in line and "\n" not in line
    assert prolific.state.studies[study_id].status == "ACTIVE"
    assert section.not_told(services, "pilot", "open") == ""  # ACTIVE there: nothing to resume
    monkeypatch.setenv("PROLIFIC_API_TOKEN", prolific.token)
    assert section.not_told(services, "pilot", "paused") == ""


def test_a_pause_or_stop_on_the_platform_is_applied_at_refresh(services, prolific):
    study_id = _created(services, prolific)
    _act(services, platform.publish)
    api = _client(prolific)
    api.transition_study(study_id, "PAUSE")
    line = _act(services, platform.refresh)
    assert "is PAUSED" in line and "the arena study is paused too" in line
    assert services.store.study_state("pilot") == "paused"
    api.transition_study(study_id, "START")
    assert "the arena study is open too" in _act(services, platform.refresh)
    assert services.store.study_state("pilot") == "open"
    submission = prolific.reserve(study_id)
    prolific.start_submission(submission)
    prolific.complete(submission, "CODE-7731")  # waits for the researcher's review
    api.transition_study(study_id, "STOP")
    line = _act(services, platform.refresh)
    assert "AWAITING REVIEW on Prolific: the arena study is paused" in line
    assert services.store.study_state("pilot") == "paused"
    assert services.store.platform_link("pilot").status == "AWAITING REVIEW"


def test_network_failures_and_4xx_answers_change_nothing(services, prolific, monkeypatch):
    publish(services, prolific=PROLIFIC)
    prolific.fail_next(0)  # the connection drops: creating is never sent twice
    line = _act(services, platform.create, LINK)
    assert line.startswith("⚠️ Nothing changed: could not reach Prolific") and "\n" not in line
    assert services.store.platform_link("pilot") is None
    prolific.fail_next(400, path="studies")
    line = _act(services, platform.create, LINK)
    assert line.startswith("⚠️ Nothing changed: Prolific refused to") and "\n" not in line
    assert services.store.platform_link("pilot") is None and prolific.state.studies == {}
    study_id = _created(services, prolific) if not prolific.state.studies else None
    before = services.store.platform_link("pilot")
    prolific.fail_next(404, path="transition")
    assert _act(services, platform.publish).startswith("⚠️ Nothing changed: Prolific refused")
    assert services.store.platform_link("pilot") == before
    assert prolific.state.studies[study_id].status == "UNPUBLISHED"
    monkeypatch.setenv("PROLIFIC_API_TOKEN", "not-the-token")
    line = _act(services, platform.refresh)
    assert line.startswith("⚠️ Nothing changed: Prolific refused the API token")
    assert "not-the-token" not in line
    assert services.store.platform_link("pilot") == before


def _signed(secret: str, body: bytes, stamp: str = "") -> dict[str, str]:
    stamp = stamp or str(int(time.time()))
    return {"X-Prolific-Request-Timestamp": stamp,
            "X-Prolific-Request-Signature": webhook_signature(secret, stamp, body),
            "Content-Type": "application/json"}


def test_the_webhook_applies_signed_study_status_changes_only(services, prolific, monkeypatch):
    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    from webapp.platform_webhook import WEBHOOK_PATH, add_platform_webhook

    app = FastAPI()
    add_platform_webhook(app, services)
    http = TestClient(app)
    study_id = _created(services, prolific)
    event = {"event_type": "study.status.change", "resource_id": study_id, "status": "PAUSED"}
    body = json.dumps(event).encode()
    assert http.post(WEBHOOK_PATH, content=body).status_code == 404  # no secret set: the route is off
    monkeypatch.setenv("PROLIFIC_WEBHOOK_SECRET", "s3cret")
    assert http.post(WEBHOOK_PATH, content=body).status_code == 401  # unsigned
    assert http.post(WEBHOOK_PATH, content=body, headers=_signed("other", body)).status_code == 401
    stale = _signed("s3cret", body, stamp=str(int(time.time()) - 3600))
    assert http.post(WEBHOOK_PATH, content=body, headers=stale).status_code == 401
    tampered = body.replace(b"PAUSED", b"ACTIVE")
    assert http.post(WEBHOOK_PATH, content=tampered, headers=_signed("s3cret", body)).status_code == 401
    assert services.store.study_state("pilot") == "open"
    answer = http.post(WEBHOOK_PATH, content=body, headers=_signed("s3cret", body))
    assert answer.status_code == 200 and "paused too" in answer.json()["detail"]
    assert services.store.study_state("pilot") == "paused"
    assert services.store.platform_link("pilot").status == "PAUSED"
    other = body.replace(study_id.encode(), b"0" * 24)
    answer = http.post(WEBHOOK_PATH, content=other, headers=_signed("s3cret", other))
    assert answer.status_code == 200 and answer.json()["detail"] == "not one of this arena's studies"
    junk = b"[1, 2]"
    assert http.post(WEBHOOK_PATH, content=junk, headers=_signed("s3cret", junk)).status_code == 400


def test_the_platforms_own_deliveries_reach_the_served_app(services, prolific, monkeypatch):
    """The local platform signs and sends its deliveries to the one-port server's route."""
    from asgi_server import running

    from webapp.one_port import build_server
    from webapp.platform_webhook import WEBHOOK_PATH, add_platform_webhook

    import gradio as gr

    with gr.Blocks() as page:
        gr.Markdown("public page")
    app = build_server(page, routes=[lambda served: add_platform_webhook(served, services)])
    api = _client(prolific)
    monkeypatch.setenv("PROLIFIC_WEBHOOK_SECRET", api.create_webhook_secret("w" * 24))
    study_id = _created(services, prolific)
    _act(services, platform.publish)
    with running(app) as base:
        api.subscribe_webhook("study.status.change", base + WEBHOOK_PATH, "w" * 24)
        api.transition_study(study_id, "PAUSE")
        prolific.wait_deliveries()
        assert services.store.study_state("pilot") == "paused"
        api.transition_study(study_id, "START")
        prolific.wait_deliveries()
        assert services.store.study_state("pilot") == "open"
        assert httpx.post(base + WEBHOOK_PATH, content=b"{}").status_code == 401
    assert [d["answer"] for d in prolific.state.deliveries] == [200, 200]


def test_the_studies_page_creates_publishes_pauses_and_closes_on_prolific(services, prolific, monkeypatch):
    from gradio_client import Client

    from battle_support import launch

    publish(services, prolific=PROLIFIC)
    demo, url = launch(services, admin=True)
    try:
        researcher = Client(url, verbose=False, httpx_kwargs={"timeout": 120})
        assert researcher.predict("pilot", api_name="/study_platform_show").startswith("Not on Prolific yet")
        line = researcher.predict("pilot", api_name="/study_platform_create")
        assert line.startswith("Created on Prolific")
        ((study_id, study),) = prolific.state.studies.items()
        assert study.fields["external_study_url"] == url.rstrip("/") + LINK.removeprefix("https://arena.example")
        line = researcher.predict("pilot", api_name="/study_platform_publish")
        assert line == "Published: Prolific says ACTIVE."
        monkeypatch.delenv("PROLIFIC_API_TOKEN")  # the arena pauses; the page says Prolific was not told
        line = researcher.predict("pilot", api_name="/study_pause")[0]
        assert "is paused" in line and "Prolific was not told" in line and study.status == "ACTIVE"
        assert services.store.study_state("pilot") == "paused"
        monkeypatch.setenv("PROLIFIC_API_TOKEN", prolific.token)
        assert "is open" in researcher.predict("pilot", api_name="/study_resume")[0]
        line = researcher.predict("pilot", api_name="/study_pause")[0]
        assert "is paused" in line and study.status == "PAUSED"
        prolific.fail_next(400, path="transition")
        line = researcher.predict("pilot", api_name="/study_resume")[0]
        assert line.startswith("⚠️ Nothing changed: Prolific refused")
        assert services.store.study_state("pilot") == "paused"
        assert "is open" in researcher.predict("pilot", api_name="/study_resume")[0]
        assert study.status == "ACTIVE"
        assert researcher.predict("pilot", api_name="/study_close")[0].startswith("Closed")
        assert study.status == "COMPLETED" and services.store.study_state("pilot") == "closed"
        assert "was COMPLETED" in researcher.predict("pilot", api_name="/study_platform_show")
    finally:
        demo.close()


def test_a_submission_webhook_keeps_its_status_and_a_return_frees_the_workers_places(services, prolific,
                                                                                  monkeypatch):
    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    from webapp.platform_webhook import WEBHOOK_PATH, add_platform_webhook
    from webapp.ui import studies_review

    app = FastAPI()
    add_platform_webhook(app, services)
    http = TestClient(app)
    monkeypatch.setenv("PROLIFIC_WEBHOOK_SECRET", "s3cret")
    study_id = _created(services, prolific)
    _act(services, platform.publish)
    study = services.store.study_text("pilot")
    parsed = parse_study(study[1])
    services.store.join_study("pilot", "worker-1", study[0], {})
    services.store.keep_platform_ids("pilot", "worker-1", "p" * 24, "s" * 24)
    assert services.store.reserve_cell(parsed, "worker-1") is not None
    held = sum(c["reserved"] + c["done"] for c in services.store.cell_fill(parsed).values())
    submission = prolific.reserve(study_id, participant_id="p" * 24)

    def deliver(status: str) -> str:
        event = {"event_type": "submission.status.change", "resource_id": submission, "status": status,
                 "study_id": study_id, "participant_id": "p" * 24}
        body = json.dumps(event).encode()
        answer = http.post(WEBHOOK_PATH, content=body, headers=_signed("s3cret", body))
        assert answer.status_code == 200
        return answer.json()["detail"]

    assert deliver("ACTIVE") == f"submission {submission} is ACTIVE"
    assert services.store.submission_statuses("pilot") == {submission: "ACTIVE"}
    assert "1 arena place(s) freed" in deliver("RETURNED")
    assert services.store.submission_statuses("pilot") == {submission: "RETURNED"}
    assert sum(c["reserved"] + c["done"] for c in services.store.cell_fill(parsed).values()) == held - 1
    assert services.store.platform_transitions("pilot") == {}  # a reported status is no transition
    _, table, _ = studies_review.load(services, "pilot", "", ProlificClient.from_environment)
    assert dict(zip(table["submission"], table["last reported"])) == {submission: "RETURNED"}
