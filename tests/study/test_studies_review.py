"""The Studies tab's submissions and bonuses section against the local Prolific server: the platform's
submissions joined to the arena's workers, a rejection message filled from the flags, each transition and
the bonus sent once however often Confirm or Pay is pressed, and one line for a platform that fails."""

from __future__ import annotations

from decimal import Decimal

import pytest

from arena.crowd.prolific_api import ProlificClient, StudyDraft
from arena.store.studies import COMPLETED
from study_support import pid, publish
from tests.support.prolific_server import ProlificServer
from webapp.leaderboard import study_review as view
from webapp.ui import studies_review as section


def _client(server: ProlificServer):
    return lambda: ProlificClient(server.token, server.url, max_retries=0, timeout_s=5.0)


def _worker(services, name: str, seconds: list[float], flags: list[str]) -> str:
    worker = pid(name)
    p = services.store.join_study("pilot", f"ps-{name}", 1, {"step": "done", "served": [], "flags": flags,
                                                            "task_seconds": seconds, "platform": {}})
    p.status, p.completed_at = COMPLETED, "2026-01-01T00:00:00Z"
    services.store.save_participant(p)
    services.store.keep_platform_ids("pilot", p.pseudonym, worker, f"session-{name}")
    return worker


@pytest.fixture
def study(services, prolific):
    """A study with a fixed bonus, two workers who finished (one flagged), their submissions on the
    platform, and the link between the two; the platform study's id."""
    publish(services, bonus={"fixed": "0.75"}, min_task_seconds=30)
    good = _worker(services, "good", [40.0, 50.0], [])
    slow = _worker(services, "fast", [4.0, 50.0], ["task 1 took 4 s (minimum 30 s)"])
    api = _client(prolific)()
    made = api.create_study(StudyDraft(
        name="Pilot", internal_name="pilot", description="Chat.", external_study_url="http://x/study/",
        completion_codes=[{"code": "CODE-7731", "code_type": "COMPLETED",
                           "actions": [{"action": "MANUALLY_REVIEW"}]}],
        total_available_places=3, estimated_completion_time=10, reward=100))
    api.transition_study(made.id, "PUBLISH")
    for worker in (good, slow, pid("stranger")):
        sid = prolific.reserve(made.id, worker)
        prolific.start_submission(sid)
        prolific.complete(sid, "CODE-7731")
    services.store.link_platform_study("pilot", made.id, "ACTIVE", 3)
    return made.id


def _plain(line: str) -> str:
    """A line as the page shows it (Markdown's escapes taken out)."""
    return line.replace("\\", "")


def _by_worker(table, worker: str):
    return table[table["Prolific id"] == worker].iloc[0]


def test_submissions_are_joined_to_workers_and_the_message_comes_from_the_flags(services, prolific, study):
    line, table, choices = section.load(services, "pilot", "", _client(prolific))
    assert line.startswith("3 submission(s) on Prolific study") and len(choices) == 3
    good, fast = _by_worker(table, pid("good")), _by_worker(table, pid("fast"))
    assert (good["pseudonym"], good["tasks done"], good["arena verdict"]) == ("ps-good", 2, "approve")
    assert fast["arena verdict"] == "reject" and "took 4 s" in fast["flags"]
    assert _by_worker(table, pid("stranger"))["arena verdict"] == "not in the arena"
    message = view.rejection_message(view.selected_flags(table, [fast["submission"]]))
    assert len(message) >= 100 and "task 1 took 4 s (minimum 30 s)" in message


def test_review_is_confirmed_then_sent_once_and_logged(services, prolific, study):
    _, table, _ = section.load(services, "pilot", "", _client(prolific))
    fast = _by_worker(table, pid("fast"))["submission"]
    said, plan = section.prepare("pilot", [fast], "REJECT", "TOO_QUICKLY", "Too fast.", "")
    assert plan is None and "at least 100 characters" in said and "\n" not in said
    message = view.rejection_message(["task 1 took 4 s (minimum 30 s)"])
    said, plan = section.prepare("pilot", [fast], "REJECT", "TOO_QUICKLY", message, "")
    assert "About to send" in said and prolific.state.submissions[fast].status == "AWAITING REVIEW"
    first = section.confirm(services, plan, "ada", _client(prolific))
    assert _plain(first).startswith("Rejected 1 submission")
    again = section.confirm(services, plan, "ada", _client(prolific))  # a second click on Confirm
    assert "already rejected" in again and prolific.state.submissions[fast].status == "REJECTED"
    sent = [r for r in prolific.state.requests if r[1].endswith(f"{fast}/transition/")]
    assert len(sent) == 1
    logged = [e["target"] for e in services.store.moderation_entries() if e["action"] == "platform reject"]
    assert logged == [fast]
    _, table, _ = section.load(services, "pilot", "", _client(prolific))
    assert _by_worker(table, pid("fast"))["sent from here"] == "rejected"


def test_the_bonus_preview_is_paid_once_and_a_failure_is_one_line(services, prolific, study):
    shown, lines, said = view.bonus_preview(services, "pilot")
    assert lines == [(pid("good"), Decimal("0.75"))] and "total 0.75" in said
    assert list(shown["pseudonym"]) == ["ps-good"]
    prolific.fail_next(0, path="bonus-payments")
    failed = section.pay(services, "pilot", "", lines, "ada", _client(prolific))
    assert _plain(failed).startswith("⚠️ Not paid: could not reach Prolific") and "\n" not in failed
    assert services.store.bonus_payments("pilot") == [] and prolific.state.payments == []
    paid = section.pay(services, "pilot", "", lines, "ada", _client(prolific))
    assert _plain(paid).startswith("Paid 0.75 to 1")
    assert "nothing sent again" in section.pay(services, "pilot", "", lines, "ada", _client(prolific))
    assert sum(prolific.pay_calls.values()) == 1
    _, left, said = view.bonus_preview(services, "pilot")
    assert left == [] and "1 already in a payment" in said


def test_no_token_is_one_line(services, prolific, study, monkeypatch):
    monkeypatch.delenv("PROLIFIC_API_TOKEN")
    line, table, _ = section.load(services, "pilot", "", ProlificClient.from_environment)
    assert "PROLIFIC_API_TOKEN" in _plain(line) and table is None and "\n" not in line


def test_the_section_over_http_confirms_what_was_prepared_and_pays_once(services, prolific, study):
    from gradio_client import Client

    from battle_support import launch

    demo, url = launch(services, admin=True)
    try:
        researcher = Client(url, verbose=False, httpx_kwargs={"timeout": 120})
        line, table, chosen = researcher.predict("pilot", "", api_name="/study_review_load")
        assert "3 submission" in line
        table = table.get("value", table)  # shown once it has rows: an update carrying the table
        good = next(row[0] for row in table["data"] if row[1] == pid("good"))
        said = researcher.predict("pilot", [good], "APPROVE", "FAILED_CHECK", "", "",
                                     api_name="/study_review_prepare")
        assert "About to send" in said and prolific.state.submissions[good].status == "AWAITING REVIEW"
        assert "Approved 1" in _plain(researcher.predict(api_name="/study_review_confirm"))
        assert "Nothing to confirm" in researcher.predict(api_name="/study_review_confirm")
        assert prolific.state.submissions[good].status == "APPROVED"
        said, _ = researcher.predict("pilot", api_name="/study_bonus_preview")
        assert "total 0.75" in _plain(said)
        assert "Paid 0.75" in _plain(researcher.predict("pilot", "", api_name="/study_bonus_pay"))
        assert "Preview the bonuses first" in researcher.predict("pilot", "", api_name="/study_bonus_pay")
        assert sum(prolific.pay_calls.values()) == 1
    finally:
        demo.close()


def _unknown_payment(services, prolific) -> list:
    _, lines, _ = view.bonus_preview(services, "pilot")
    prolific.fail_next(0, after=True, path="/pay/")  # paid or not: the answer is lost on the way back
    lost = section.pay(services, "pilot", "", lines, "ada", _client(prolific))
    assert "Outcome unknown" in _plain(lost)
    return lines


def test_an_unknown_payment_is_marked_paid_or_not_paid_after_a_confirmation(services, prolific, study):
    _unknown_payment(services, prolific)
    ((label, key),) = section.unknown_payments(services, "pilot")
    assert "0.75 to 1 worker(s)" in label
    said, plan = section.prepare_settle("pilot", key, "not paid")
    assert "Record" in said and plan is not None
    assert services.store.bonus_payments("pilot")[0].state == "unknown"  # nothing recorded before Record
    assert section.settle(services, plan, "ada").startswith("Recorded as not paid")
    assert services.store.bonus_payments("pilot") == [] and section.unknown_payments(services, "pilot") == []
    assert "Nothing recorded" in _plain(section.settle(services, plan, "ada"))  # a second click
    _, left, _ = view.bonus_preview(services, "pilot")
    assert left == [(pid("good"), Decimal("0.75"))]  # its lines are free for a new payment
    logged = [e["action"] for e in services.store.moderation_entries()]
    assert "platform bonus marked not paid" in logged
    _unknown_payment(services, prolific)
    ((_, key),) = section.unknown_payments(services, "pilot")
    _, plan = section.prepare_settle("pilot", key, "paid")
    assert section.settle(services, plan, "ada").startswith("Recorded as paid")
    assert [b.state for b in services.store.bonus_payments("pilot")] == ["paid"]
    _, left, _ = view.bonus_preview(services, "pilot")
    assert left == []
    assert "platform bonus marked paid" in [e["action"] for e in services.store.moderation_entries()]
    assert section.prepare_settle("pilot", None, "paid")[1] is None
