"""Transitions and bonuses sent to the recruiting platform once (arena.store.platform_payments and
arena.crowd.platform_review), against the local server that models the platform's API, on SQLite and
PostgreSQL: a double click, a retry, two threads or two store handles send each call once; a refusal or a
network failure gives one line and leaves the arena as it was; a pay call whose outcome is unknown is never
sent again."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal

import pytest

from arena.crowd.platform_review import (APPROVE, REJECT, RETURN, pay_bonus, review_submissions,
                                         unpaid_lines)
from arena.crowd.prolific_api import ProlificClient, StudyDraft
from arena.store import Store
from tests.support.prolific_server import ProlificServer

REASON = ("You finished the first task in four seconds and answered the attention question wrongly, so "
          "your answers cannot be used.")


@pytest.fixture
def server():
    with ProlificServer() as running:
        yield running


def _client(server: ProlificServer) -> ProlificClient:
    return ProlificClient(server.token, server.url, backoff_base_s=0.01, max_wait_s=0.05, timeout_s=5.0)


def _study(server: ProlificServer, workers: int = 3) -> tuple[str, list[str], list[str]]:
    """A published study with `workers` completed submissions; (study id, submission ids, participant ids)."""
    client = _client(server)
    study = client.create_study(StudyDraft(
        name="Movie chat", internal_name="pilot", description="Chat with a recommender.",
        external_study_url="http://localhost/study/?study=pilot&PROLIFIC_PID={{%PROLIFIC_PID%}}",
        completion_codes=[{"code": "C0DE", "code_type": "COMPLETED",
                           "actions": [{"action": "MANUALLY_REVIEW"}]}],
        total_available_places=workers, estimated_completion_time=10, reward=150))
    client.transition_study(study.id, "PUBLISH")
    submissions, people = [], []
    for n in range(workers):
        person = f"{n:024x}"
        sid = server.reserve(study.id, person)
        server.start_submission(sid)
        server.complete(sid, "C0DE")
        submissions.append(sid)
        people.append(person)
    return study.id, submissions, people


def _status(server: ProlificServer, submission_id: str) -> str:
    return server.state.submissions[submission_id].status


def _transition_requests(server: ProlificServer) -> int:
    return sum(1 for _, path, _ in server.state.requests
               if path.endswith("/transition/") and "submissions" in path)


def test_each_transition_is_sent_once_however_often_it_is_clicked(store, server):
    study, subs, _ = _study(server)
    client = _client(server)
    first = review_submissions(store, client, "pilot", [subs[0]], APPROVE, actor="ada")
    again = review_submissions(store, client, "pilot", [subs[0]], APPROVE, actor="ada")
    assert first.sent == [subs[0]] and again.sent == [] and again.already == [subs[0]]
    assert "nothing sent again" in again.line()
    assert _status(server, subs[0]) == "APPROVED" and _transition_requests(server) == 1
    entries = [e for e in store.moderation_entries() if e["action"] == "platform approve"]
    assert [e["target"] for e in entries] == [subs[0]] and entries[0]["actor"] == "ada"
    with ThreadPoolExecutor(6) as pool:  # six clicks at once on a rejection: one goes out
        outcomes = list(pool.map(lambda _: review_submissions(
            store, client, "pilot", [subs[1]], REJECT, actor="ada", message=REASON, category="FAILED_CHECK"),
            range(6)))
    assert sum(len(o.sent) for o in outcomes) == 1 and _transition_requests(server) == 2
    assert _status(server, subs[1]) == "REJECTED"
    assert server.state.submissions[subs[1]].rejection["message"] == REASON


def test_a_rejection_under_100_characters_is_refused_with_one_line_and_nothing_sent(store, server):
    _, subs, _ = _study(server, 1)
    outcome = review_submissions(store, _client(server), "pilot", subs, REJECT, actor="ada",
                                 message="Too fast.", category="TOO_QUICKLY")
    assert outcome.sent == [] and "at least 100 characters" in outcome.line() and "\n" not in outcome.line()
    assert _transition_requests(server) == 0 and store.platform_transitions("pilot") == {}
    assert _status(server, subs[0]) == "AWAITING REVIEW"


def test_bulk_approval_is_one_call_and_a_repeat_sends_nothing(store, server):
    study, subs, _ = _study(server, 3)
    client = _client(server)
    review_submissions(store, client, "pilot", [subs[0]], APPROVE, actor="ada")
    outcome = review_submissions(store, client, "pilot", subs, APPROVE, actor="ada")
    assert sorted(outcome.sent) == sorted(subs[1:]) and outcome.already == [subs[0]]
    assert server.state.bulk_approvals == 1 and {_status(server, s) for s in subs} == {"APPROVED"}
    assert review_submissions(store, client, "pilot", subs, APPROVE, actor="ada").sent == []
    assert server.state.bulk_approvals == 1


def test_network_failure_and_refusal_give_one_line_and_leave_the_arena_as_it_was(store, server):
    _, subs, _ = _study(server, 2)
    client = ProlificClient(server.token, server.url, max_retries=0, timeout_s=5.0)
    log_before = store.last_moderation_entry_id()
    server.fail_next(0)  # the connection drops
    dropped = review_submissions(store, client, "pilot", [subs[0]], APPROVE, actor="ada")
    assert dropped.sent == [] and "could not reach Prolific" in dropped.failure and "\n" not in dropped.line()
    server.fail_next(400)
    refused = review_submissions(store, client, "pilot", [subs[0]], RETURN, actor="ada",
                                 reasons=["left early"])
    assert refused.sent == [] and "(400)" in refused.failure
    assert store.platform_transitions("pilot") == {} and store.last_moderation_entry_id() == log_before
    assert _status(server, subs[0]) == "AWAITING REVIEW"
    assert review_submissions(store, client, "pilot", [subs[0]], APPROVE, actor="ada").sent == [subs[0]]


def _lines(people: list[str]) -> list[tuple[str, Decimal]]:
    return [(p, Decimal("0.50")) for p in people]


def test_a_bonus_is_paid_once_under_a_repeat_click_and_two_threads(store, server):
    study, _, people = _study(server, 3)
    client = _client(server)
    lines = _lines(people)
    with ThreadPoolExecutor(4) as pool:
        outcomes = list(pool.map(lambda _: pay_bonus(store, client, "pilot", study, lines, actor="ada"),
                                 range(4)))
    assert sorted(o.state for o in outcomes).count("paid") == 1
    assert len(server.pay_calls) == 1 and set(server.pay_calls.values()) == {1}
    again = pay_bonus(store, client, "pilot", study, lines, actor="ada")
    assert again.state == "paid" and "nothing sent again" in again.line
    assert sum(server.pay_calls.values()) == 1
    assert unpaid_lines(store, "pilot", lines) == []
    assert [e["action"] for e in store.moderation_entries()].count("platform bonus paid") == 1


def test_two_store_handles_on_one_database_pay_once(db_location, server):
    study, _, people = _study(server, 2)
    first, second = Store(db_location), Store(db_location)
    try:
        with ThreadPoolExecutor(2) as pool:
            outcomes = list(pool.map(lambda s: pay_bonus(s, _client(server), "pilot", study, _lines(people),
                                                         actor="ada"), (first, second)))
        assert [o.state for o in outcomes].count("paid") == 1 and sum(server.pay_calls.values()) == 1
        # A later payment with one more line leaves out the workers paid already.
        assert unpaid_lines(second, "pilot", _lines([*people, "f" * 24])) == _lines(["f" * 24])
        overlap = pay_bonus(second, _client(server), "pilot", study, _lines(people[:1]), actor="ada")
        assert overlap.state == "refused" and "already in a bonus payment" in overlap.line
    finally:
        first.close()
        second.close()


def test_an_unknown_pay_outcome_is_never_paid_again(store, server):
    study, _, people = _study(server, 2)
    client = _client(server)
    server.fail_next(0, after=True, path="/pay/")  # paid, but the answer is lost on the way back
    lost = pay_bonus(store, client, "pilot", study, _lines(people), actor="ada")
    assert lost.state == "unknown" and "check the study's bonuses on Prolific" in lost.line
    assert sum(server.pay_calls.values()) == 1
    again = pay_bonus(store, client, "pilot", study, _lines(people), actor="ada")
    assert again.state == "unknown" and sum(server.pay_calls.values()) == 1
    assert [b.state for b in store.bonus_payments("pilot")] == ["unknown"]


def test_a_refused_bonus_changes_nothing_and_may_be_paid_later(store, server):
    study, _, people = _study(server, 2)
    client = ProlificClient(server.token, server.url, max_retries=0, timeout_s=5.0)
    server.fail_next(400, path="bonus-payments")
    refused = pay_bonus(store, client, "pilot", study, _lines(people), actor="ada")
    assert refused.state == "refused" and "(400)" in refused.line and "\n" not in refused.line
    server.fail_next(0, path="bonus-payments")  # not reached: nothing was set up
    assert pay_bonus(store, client, "pilot", study, _lines(people), actor="ada").state == "refused"
    server.fail_next(403, path="/pay/")  # set up, but the pay call refused: nothing paid
    assert pay_bonus(store, client, "pilot", study, _lines(people), actor="ada").state == "refused"
    assert store.bonus_payments("pilot") == [] and store.bonused_workers("pilot") == set()
    assert server.state.payments == []
    assert pay_bonus(store, client, "pilot", study, _lines(people), actor="ada").state == "paid"
    assert len(server.state.payments) == 2


def test_a_claim_abandoned_by_its_sender_is_taken_over_and_the_old_sender_writes_nothing(store):
    import sqlalchemy as sa

    from arena.store import schema as t

    first = store.claim_transition("pilot", "sub-1", APPROVE, actor="ada")
    assert first.claim_id and store.claim_transition("pilot", "sub-1", APPROVE, actor="bo").claim_id is None
    with store.write() as conn:  # the first sender vanished long ago
        conn.execute(sa.update(t.platform_transitions).values(updated_at="2000-01-01T00:00:00.000000Z"))
    second = store.claim_transition("pilot", "sub-1", APPROVE, actor="bo")
    assert second.claim_id and second.claim_id != first.claim_id
    assert store.finish_transition(first, answer="APPROVED") is False
    assert store.finish_transition(second, answer="APPROVED") is True
    assert store.claim_transition("pilot", "sub-1", APPROVE, actor="cy").state == "done"
