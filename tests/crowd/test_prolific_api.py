"""The Prolific client against the local server that models the platform's documented API."""

from __future__ import annotations

import json
import logging
import threading
import time
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from arena.crowd.prolific_api import (
    MIN_REJECTION_MESSAGE,
    PlatformError,
    PlatformNotConfigured,
    ProlificClient,
    StudyDraft,
    verify_webhook,
    webhook_signature,
)
from arena.runtime.config import Settings, SettingsError
from tests.support.prolific_server import ProlificServer

TOKEN = "tok-5ecret-do-not-show"
CODE = "C0DE1234"
REASON = ("Your submission could not be used: the conversations were left after one message each and the "
          "attention check was answered wrongly.")


@pytest.fixture
def server():
    with ProlificServer(token=TOKEN) as running:
        yield running


@pytest.fixture
def client(server):
    with ProlificClient(TOKEN, server.url, backoff_base_s=0.01, max_wait_s=2.0) as made:
        yield made


def draft(places: int = 3) -> StudyDraft:
    return StudyDraft(
        name="Rate two recommenders", internal_name="arena-study-1", description="Chat with two systems.",
        external_study_url="https://arena.example/study?PROLIFIC_PID={{%PROLIFIC_PID%}}"
                           "&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}",
        completion_codes=[{"code": CODE, "code_type": "COMPLETED",
                           "actions": [{"action": "MANUALLY_REVIEW"}]}],
        total_available_places=places, estimated_completion_time=12, reward=240,
    )


def published(client, server, places: int = 3) -> str:
    study = client.create_study(draft(places))
    client.transition_study(study.id, "PUBLISH")
    return study.id


def finished(server, study_id: str, participant: str) -> str:
    """A participant who reserved, started and completed with the study's code: AWAITING REVIEW."""
    submission = server.reserve(study_id, participant)
    server.start_submission(submission)
    server.complete(submission, CODE)
    return submission


def one_line(error: BaseException) -> str:
    text = str(error)
    assert "\n" not in text and TOKEN not in text
    return text


# -- studies ---------------------------------------------------------------------------------------
def test_a_study_is_created_as_a_draft_with_what_the_arena_sends(client, server):
    study = client.create_study(draft())
    assert (study.status, study.total_available_places, study.places_taken) == ("UNPUBLISHED", 3, 0)
    assert (study.name, study.internal_name) == ("Rate two recommenders", "arena-study-1")
    sent = server.state.studies[study.id].fields
    assert sent["prolific_id_option"] == "url_parameters" and sent["reward"] == 240
    assert sent["completion_codes"][0]["code"] == CODE and sent["device_compatibility"] == ["desktop"]
    assert "{{%SESSION_ID%}}" in sent["external_study_url"]
    assert client.get_study(study.id) == study


def test_the_study_transitions_and_a_refused_one_gives_the_platforms_line(client, server):
    study_id = client.create_study(draft()).id
    with pytest.raises(PlatformError) as refused:
        client.transition_study(study_id, "PAUSE")
    assert "Cannot PAUSE a study whose status is UNPUBLISHED" in one_line(refused.value)
    assert refused.value.status == 400
    assert client.transition_study(study_id, "PUBLISH").status == "ACTIVE"
    assert client.transition_study(study_id, "PAUSE").status == "PAUSED"
    assert client.transition_study(study_id, "START").status == "ACTIVE"
    assert client.transition_study(study_id, "STOP").status == "COMPLETED"
    sent = len(server.state.requests)
    with pytest.raises(PlatformError, match="unknown study action"):
        client.transition_study(study_id, "DELETE")
    assert len(server.state.requests) == sent  # refused before anything was sent


def test_a_transition_whose_answer_was_lost_is_sent_again_and_counts_once(client, server):
    study_id = client.create_study(draft()).id
    server.fail_next(0, after=True, path="/transition/")  # published, then the answer is lost
    assert client.transition_study(study_id, "PUBLISH").status == "ACTIVE"
    assert [p for m, p in server.hits if p.endswith("/transition/")] == [
        f"/api/v1/studies/{study_id}/transition/"] * 2
    assert client.transition_study(study_id, "PUBLISH").status == "ACTIVE"  # asked again: already done
    assert client.transition_study(study_id, "STOP").status == "COMPLETED"
    with pytest.raises(PlatformError, match="Cannot PAUSE a study whose status is COMPLETED"):
        client.transition_study(study_id, "PAUSE")  # a refusal the study's status does not explain


def test_stopping_with_work_to_review_waits_for_review(client, server):
    study_id = published(client, server)
    finished(server, study_id, "p1")
    assert client.transition_study(study_id, "STOP").status == "AWAITING REVIEW"


def test_a_missing_field_is_named_in_the_one_line(client, server):
    bad = StudyDraft(**{**draft().__dict__, "description": ""})
    with pytest.raises(PlatformError) as refused:
        client.create_study(bad)
    assert "description: This field is required." in one_line(refused.value)
    assert server.state.studies == {}


def test_places_grow_never_shrink_once_published_and_the_count_stays_in_step(client, server):
    study_id = published(client, server, places=2)
    working = [server.reserve(study_id, "p1"), server.reserve(study_id, "p2")]
    with pytest.raises(ValueError, match="no place left"):  # places taken never above the places
        server.reserve(study_id, "p3")
    assert client.get_study(study_id).places_taken == 2
    for submission in working:
        server.start_submission(submission)
        server.complete(submission, CODE)
    assert client.get_study(study_id).status == "AWAITING REVIEW"
    with pytest.raises(PlatformError) as refused:
        client.set_places(study_id, 1)
    assert "can only be increased" in one_line(refused.value)
    grown = client.set_places(study_id, 4)
    assert (grown.total_available_places, grown.places_taken, grown.status) == (4, 2, "ACTIVE")
    server.reserve(study_id, "p3")
    assert client.get_study(study_id).places_taken == 3
    with pytest.raises(PlatformError, match="at least one place"):
        client.set_places(study_id, 0)


# -- submissions -----------------------------------------------------------------------------------
def test_every_submission_of_every_status_comes_back_over_all_pages(client, server):
    study_id = published(client, server, places=260)
    kinds = {}
    for n in range(250):
        submission = server.reserve(study_id, f"p{n}")
        kind = n % 6
        if kind:
            server.start_submission(submission)
        if kind == 2:
            server.complete(submission, CODE)
        elif kind == 3:
            server.return_submission(submission)
        elif kind == 4:
            server.time_out(submission)
        elif kind == 5:
            server.screen_out(submission)
        kinds[submission] = kind
    listed = client.list_submissions(study_id)
    assert [s.id for s in listed] == list(kinds)
    assert {s.status for s in listed} == {"RESERVED", "ACTIVE", "AWAITING REVIEW", "RETURNED", "TIMED-OUT",
                                          "SCREENED OUT"}
    done = next(s for s in listed if s.status == "AWAITING REVIEW")
    assert done.study_code == CODE and done.started_at and done.completed_at and done.participant_id
    pages = [r for r in server.state.requests if r[0] == "GET" and r[1] == "/api/v1/submissions/"]
    assert len(pages) == 3


def test_approve_reject_and_return_from_awaiting_review_only(client, server):
    study_id = published(client, server)
    first, second, third = (finished(server, study_id, f"p{n}") for n in range(3))
    assert client.approve(first).status == "APPROVED"
    assert client.approve(first).status == "APPROVED"  # a repeat is ignored, as documented
    with pytest.raises(PlatformError) as refused:
        client.reject(first, REASON, "LOW_EFFORT")
    assert "Cannot reject a submission whose status is APPROVED" in one_line(refused.value)
    rejected = client.reject(second, REASON, "FAILED_CHECK")
    assert rejected.status == "REJECTED"
    assert server.state.submissions[second].rejection == {"message": REASON, "category": "FAILED_CHECK"}
    asked = client.request_return(third, ["The task was not finished."])
    assert asked.id == third and server.state.submissions[third].return_requested


def test_a_short_rejection_is_refused_here_in_one_line_and_by_the_server(client, server):
    study_id = published(client, server)
    submission = finished(server, study_id, "p1")
    sent = len(server.state.requests)
    short = "x" * (MIN_REJECTION_MESSAGE - 1)
    with pytest.raises(PlatformError) as refused:
        client.reject(submission, short, "LOW_EFFORT")
    assert one_line(refused.value) == "a rejection's message needs at least 100 characters (this one has 99)"
    with pytest.raises(PlatformError, match="unknown rejection category"):
        client.reject(submission, REASON, "BORING")
    assert len(server.state.requests) == sent  # nothing reached the platform
    # the platform holds the same rule for callers that skip the client's check
    raw = httpx.post(f"{server.url}submissions/{submission}/transition/",
                     headers={"Authorization": f"Token {TOKEN}"},
                     json={"action": "REJECT", "message": short, "rejection_category": "LOW_EFFORT"})
    assert raw.status_code == 400 and "100 characters" in json.dumps(raw.json()["error"]["detail"])
    assert server.state.submissions[submission].status == "AWAITING REVIEW"


def test_bulk_approval_approves_those_waiting_and_completes_the_study(client, server):
    study_id = published(client, server, places=2)
    ids = [finished(server, study_id, f"p{n}") for n in range(2)]
    client.bulk_approve(study_id, ids)
    assert {s.status for s in client.list_submissions(study_id)} == {"APPROVED"}
    assert client.get_study(study_id).status == "COMPLETED"
    with pytest.raises(PlatformError, match="Unknown: nosuchid"):
        client.bulk_approve(study_id, ["nosuchid"])


# -- bonuses ---------------------------------------------------------------------------------------
def test_a_bonus_is_set_up_then_paid_and_a_second_pay_pays_again(client, server):
    study_id = published(client, server)
    finished(server, study_id, "p1")
    finished(server, study_id, "p2")
    bonus = client.create_bonus(study_id, [("p1", Decimal("1.50")), ("p2", Decimal("0.25"))])
    assert (bonus.amount, bonus.fees, bonus.total_amount) == (175, 58, 233)
    assert server.state.requests[-1][2]["csv_bonuses"] == "p1,1.50\np2,0.25\n"
    assert server.pay_calls[bonus.id] == 0 and server.state.payments == []  # set up, not paid
    client.pay_bonus(bonus.id)
    assert server.pay_calls[bonus.id] == 1
    assert server.state.payments == [(bonus.id, "p1", 150), (bonus.id, "p2", 25)]
    client.pay_bonus(bonus.id)  # the platform's pay call is not idempotent: callers must guard it
    assert server.pay_calls[bonus.id] == 2 and len(server.state.payments) == 4


def test_bonus_lines_the_platform_would_refuse(client, server):
    study_id = published(client, server)
    finished(server, study_id, "p1")
    with pytest.raises(PlatformError) as refused:
        client.create_bonus(study_id, [("p1", Decimal("1")), ("stranger", Decimal("1"))])
    assert "did not take part in the study: stranger" in one_line(refused.value)
    for lines in ([], [("p1", Decimal("0"))], [("p,1", Decimal("1"))]):
        with pytest.raises(PlatformError):
            client.create_bonus(study_id, lines)
    assert server.state.bonuses == {}


@pytest.mark.parametrize("status, after", [(429, False), (503, False), (0, True), (0, False)])
def test_the_pay_call_is_never_sent_twice(client, server, status, after):
    study_id = published(client, server)
    finished(server, study_id, "p1")
    bonus = client.create_bonus(study_id, [("p1", Decimal("2"))])
    server.fail_next(status, after=after, path="/pay/", retry_after=0)
    with pytest.raises(PlatformError) as failed:
        client.pay_bonus(bonus.id)
    assert "not sent again" in one_line(failed.value)
    assert [path for _, path in server.hits if path.endswith("/pay/")] == [
        f"/api/v1/bulk-bonus-payments/{bonus.id}/pay/"]  # sent once, whatever came back
    assert server.pay_calls[bonus.id] == (1 if after else 0)


# -- failures --------------------------------------------------------------------------------------
def test_a_429_waits_the_retry_after_the_platform_asks_for(client, server):
    study_id = client.create_study(draft()).id
    server.fail_next(429, path=study_id, retry_after=1)
    started = time.monotonic()
    assert client.get_study(study_id).id == study_id
    assert time.monotonic() - started >= 1.0
    assert [path for method, path in server.hits if method == "GET"] == [f"/api/v1/studies/{study_id}/"] * 2


def test_the_rate_limit_slows_the_client_down_without_losing_a_call(client, server):
    study_id = client.create_study(draft()).id
    server.set_rate_limit(2, retry_after_s=0.3)
    results = [client.get_study(study_id).id for _ in range(5)]
    assert results == [study_id] * 5
    assert len(server.hits) > 6  # some were answered 429 and sent again


def test_a_429_that_lasts_gives_up_in_one_line(server):
    with ProlificClient(TOKEN, server.url, max_retries=2, backoff_base_s=0.01) as client:
        server.fail_next(429, n=5, retry_after=0)
        with pytest.raises(PlatformError) as failed:
            client.get_study("abc")
    assert "Prolific is limiting requests; could not read the study" in one_line(failed.value)
    assert failed.value.status == 429 and len(server.hits) == 3  # the first try and two retries


def test_creating_a_study_is_not_resent_after_a_lost_answer(client, server):
    server.fail_next(0, after=True, path="/studies/")
    with pytest.raises(PlatformError, match="could not reach Prolific to create the study"):
        client.create_study(draft())
    assert len(server.state.studies) == 1  # made once; the researcher checks before trying again


def test_a_stopped_server_gives_one_clear_line(server):
    client = ProlificClient(TOKEN, server.url, max_retries=1, backoff_base_s=0.01, timeout_s=2)
    server.stop()
    with pytest.raises(PlatformError) as failed:
        client.get_study("abc")
    assert one_line(failed.value).startswith("could not reach Prolific to read the study: ")


def test_a_wrong_token_is_refused_in_one_line_that_does_not_show_it(server):
    wrong = "wrong-token-value"
    with ProlificClient(wrong, server.url) as client:
        with pytest.raises(PlatformError) as refused:
            client.get_study("abc")
    text = one_line(refused.value)
    assert "PROLIFIC_API_TOKEN" in text and "Invalid token" in text and wrong not in text
    assert refused.value.status == 401


def test_the_token_is_in_no_error_line_no_log_record_and_no_repr(server, caplog):
    caplog.set_level(logging.DEBUG)
    with ProlificClient(TOKEN, server.url, max_retries=1, backoff_base_s=0.01) as client:
        assert TOKEN not in repr(client) and TOKEN not in repr(vars(client))
        server.fail_next(429, retry_after=0)
        server.fail_next(503)
        errors = []
        for call in (lambda: client.get_study("abc"), lambda: client.get_study("nosuch"),
                     lambda: client.reject("abc", "short", "OTHER")):
            with pytest.raises(PlatformError) as failed:
                call()
            errors.append(str(failed.value))
    assert all(TOKEN not in line for line in errors)
    assert caplog.records and all(TOKEN not in record.getMessage() for record in caplog.records)


def test_the_client_comes_from_the_environment_or_not_at_all(server):
    with pytest.raises(PlatformNotConfigured) as missing:
        ProlificClient.from_environment({})
    assert "PROLIFIC_API_TOKEN" in str(missing.value)
    with pytest.raises(PlatformNotConfigured):
        ProlificClient.from_environment({"PROLIFIC_API_TOKEN": "   "})
    with pytest.raises(SettingsError, match="ARENA_PROLIFIC_URL"):
        ProlificClient.from_environment({"PROLIFIC_API_TOKEN": TOKEN, "ARENA_PROLIFIC_URL": "ftp://x"})
    env = {"PROLIFIC_API_TOKEN": TOKEN, "ARENA_PROLIFIC_URL": server.url}
    with ProlificClient.from_environment(env) as client:
        assert client.base_url == server.url
        assert client.create_study(draft()).status == "UNPUBLISHED"
    with ProlificClient.from_environment(settings=Settings.from_env(env)) as client:
        assert client.get_study(next(iter(server.state.studies))).status == "UNPUBLISHED"


# -- webhooks --------------------------------------------------------------------------------------
class _Receiver:
    """An endpoint that keeps what it is sent, as the arena's webhook route would receive it."""

    def __init__(self):
        self.received: list[tuple[dict, bytes]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                outer.received.append((dict(self.headers), body))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/hooks/prolific"

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def test_webhooks_are_confirmed_and_signed_deliveries_verify(client, server):
    receiver = _Receiver()
    try:
        secret = client.create_webhook_secret("workspace1")
        for event in ("study.status.change", "submission.status.change"):
            subscription = client.subscribe_webhook(event, receiver.url, "workspace1")
            assert server.state.subscriptions[subscription]["is_enabled"]  # confirmed
        study_id = published(client, server)
        finished(server, study_id, "p1")
        server.wait_deliveries()
    finally:
        receiver.close()
    events = [json.loads(body) for _, body in receiver.received]
    assert {"event_type": "study.status.change", "resource_id": study_id, "status": "ACTIVE"} in events
    assert [e["status"] for e in events if e["event_type"] == "submission.status.change"] == [
        "RESERVED", "ACTIVE", "AWAITING REVIEW"]
    for headers, body in receiver.received:
        assert verify_webhook(secret, headers["X-Prolific-Request-Timestamp"], body,
                              headers["X-Prolific-Request-Signature"])


def test_an_unknown_event_or_a_workspace_without_a_secret_is_refused(client, server):
    with pytest.raises(PlatformError, match="unknown webhook event"):
        client.subscribe_webhook("study.deleted", "https://arena.example/hook", "workspace1")
    with pytest.raises(PlatformError, match="Create a secret"):
        client.subscribe_webhook("study.status.change", "https://arena.example/hook", "workspace1")


def test_webhook_signatures_good_bad_and_stale():
    secret, body, now = "s3cret", b'{"event_type": "study.status.change"}', 1_760_000_000.0
    stamp = str(int(now))
    good = webhook_signature(secret, stamp, body)
    assert verify_webhook(secret, stamp, body, good, now=now + 10)
    assert not verify_webhook(secret, stamp, body + b" ", good, now=now)  # the body was changed
    assert not verify_webhook("other", stamp, body, good, now=now)  # another secret
    assert not verify_webhook(secret, str(int(now) + 1), body, good, now=now)  # another timestamp
    assert not verify_webhook(secret, stamp, body, good, now=now + 301)  # too old: a replay
    assert not verify_webhook(secret, "yesterday", body, good, now=now)
    assert not verify_webhook(secret, stamp, body, "", now=now)
