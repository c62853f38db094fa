"""Reviewing a study's submissions and paying its bonuses on the recruiting platform, each call sent once.

Every call that changes something on the platform is claimed in the store first
(`arena.store.platform_payments`): a double click, a retry or a second replica finds the claim and sends
nothing. A refusal (4xx) or a failure to reach the platform gives one line and leaves the arena as it was
(the claim is dropped). The bonus pay call is the exception: once it may have gone out, its outcome is
kept ("unknown" when no answer came back) and the arena never sends it again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Iterable, Optional, Sequence

from arena.crowd.bonuses import total
from arena.crowd.prolific_api import PlatformError, ProlificClient, check_rejection
from arena.store.platform_payments import (CREATED, PAID, UNKNOWN, BonusBatch, TransitionClaim,
                                           WorkersAlreadyInPayment, worker_key)

APPROVE, REJECT, RETURN = "APPROVE", "REJECT", "RETURN"
ACTIONS = (APPROVE, REJECT, RETURN)
DONE_WORDS = {APPROVE: "approved", REJECT: "rejected", RETURN: "asked to return"}


@dataclass
class ReviewOutcome:
    """What one review action did: the submissions sent now, those already sent (or being sent elsewhere),
    and the one line of the failure that stopped it (empty when none did)."""

    action: str
    sent: list[str] = field(default_factory=list)
    already: list[str] = field(default_factory=list)
    failure: str = ""

    def line(self) -> str:
        parts = []
        if self.sent:
            parts.append(f"{DONE_WORDS[self.action].capitalize()} {len(self.sent)} submission(s).")
        if self.already:
            parts.append(f"{len(self.already)} already {DONE_WORDS[self.action]} (or being sent): "
                         "nothing sent again.")
        if self.failure:
            parts.append(f"Not done: {self.failure}")
        return " ".join(parts) or "Nothing to do: no submission chosen."


def _check(action: str, message: str, category: str, reasons: Sequence[str]) -> dict[str, Any]:
    """The transition's detail, or PlatformError (one line) for a request the platform would refuse."""
    if action not in ACTIONS:
        raise PlatformError(f"unknown review action {action!r}: use one of {', '.join(ACTIONS)}")
    if action == REJECT:
        check_rejection(message, category)
        return {"category": category, "message": message.strip()}
    if action == RETURN:
        texts = [r.strip() for r in reasons if r.strip()]
        if not texts:
            raise PlatformError("asking for a return needs a reason")
        return {"reasons": texts}
    return {}


def _send(client: ProlificClient, action: str, submission_id: str, detail: dict[str, Any]) -> str:
    """One transition; the submission's status afterwards."""
    if action == APPROVE:
        return client.approve(submission_id).status
    if action == REJECT:
        return client.reject(submission_id, detail["message"], detail["category"]).status
    return client.request_return(submission_id, detail["reasons"]).status


def review_submissions(store: Any, client: ProlificClient, study_id: str, submission_ids: Iterable[str],
                       action: str, *, actor: str, message: str = "", category: str = "",
                       reasons: Sequence[str] = ()) -> ReviewOutcome:
    """Approve, reject (category and message) or ask to return each submission, once. Several approvals
    go in one bulk call; the others one by one, stopping at the first failure (those sent stay sent)."""
    outcome = ReviewOutcome(action)
    try:
        detail = _check(action, message, category, reasons)
    except PlatformError as exc:
        outcome.failure = str(exc)
        return outcome
    ids = list(dict.fromkeys(s.strip() for s in submission_ids if s and s.strip()))
    if action == APPROVE and len(ids) > 1:
        return _bulk_approve(store, client, study_id, ids, actor, outcome)
    for submission_id in ids:
        claim = store.claim_transition(study_id, submission_id, action, actor=actor, detail=detail)
        if claim.claim_id is None:
            outcome.already.append(submission_id)
            continue
        try:
            status = _send(client, action, submission_id, detail)
        except PlatformError as exc:
            store.release_transition(claim)
            outcome.failure = f"{submission_id}: {exc}"
            break
        store.finish_transition(claim, answer=status)
        outcome.sent.append(submission_id)
    return outcome


def _bulk_approve(store: Any, client: ProlificClient, study_id: str, ids: list[str], actor: str,
                  outcome: ReviewOutcome) -> ReviewOutcome:
    claims: list[TransitionClaim] = []
    for submission_id in ids:
        claim = store.claim_transition(study_id, submission_id, APPROVE, actor=actor, detail={"bulk": True})
        (claims.append(claim) if claim.claim_id else outcome.already.append(submission_id))
    if not claims:
        return outcome
    try:
        client.bulk_approve(study_id, [c.submission_id for c in claims])
    except PlatformError as exc:
        for claim in claims:
            store.release_transition(claim)
        outcome.failure = str(exc)
        return outcome
    for claim in claims:
        store.finish_transition(claim, answer="APPROVED")
        outcome.sent.append(claim.submission_id)
    return outcome


# -- bonuses ---------------------------------------------------------------------------------------------


def unpaid_lines(store: Any, study_id: str,
                 lines: Iterable[tuple[str, Decimal]]) -> list[tuple[str, Decimal]]:
    """The lines whose worker is in no live bonus payment of the study (paid, being paid, or unknown)."""
    paid = store.bonused_workers(study_id)
    return [(worker, amount) for worker, amount in lines if worker_key(study_id, worker) not in paid]


@dataclass(frozen=True)
class BonusOutcome:
    state: str  # paid, unknown, refused (nothing paid, nothing kept), or the state a repeat found
    line: str
    batch: Optional[BonusBatch] = None


def _is_refusal(exc: PlatformError) -> bool:
    """A 4xx answer: the platform received the call and did not act on it."""
    return exc.status is not None and 400 <= exc.status < 500


def pay_bonus(store: Any, client: ProlificClient, study_id: str, platform_study_id: str,
              lines: list[tuple[str, Decimal]], *, actor: str) -> BonusOutcome:
    """Create the bonus on the platform and pay it, once: claimed in the store first; a repeat of the same
    lines finds the claim and sends nothing."""
    if not lines:
        return BonusOutcome("refused", "Nothing to pay: no worker is owed a bonus (or all are paid).")
    try:
        batch = store.claim_bonus(study_id, lines, actor=actor)
    except WorkersAlreadyInPayment as exc:
        return BonusOutcome("refused", f"Not paid: {exc}")
    if batch.claim_id is None:
        return BonusOutcome(batch.state, _repeat_line(batch), batch)
    try:
        draft = client.create_bonus(platform_study_id, lines)
    except PlatformError as exc:  # nothing was paid: the arena is as it was
        store.release_bonus(batch)
        return BonusOutcome("refused", f"Not paid: {exc}")
    store.mark_bonus(batch, CREATED, bonus_id=draft.id, answer=f"set up: {draft.total_amount} with fees")
    try:
        client.pay_bonus(draft.id)
    except PlatformError as exc:
        if _is_refusal(exc):
            store.release_bonus(batch)
            return BonusOutcome("refused", f"Not paid: {exc}")
        store.mark_bonus(batch, UNKNOWN, answer=str(exc))
        return BonusOutcome(UNKNOWN, f"Outcome unknown for bonus {draft.id}: {exc}. It will not be sent "
                            "again from here: check the study's bonuses on Prolific.", batch)
    store.mark_bonus(batch, PAID, answer=f"paid {total(lines):.2f} to {len(lines)} worker(s)")
    return BonusOutcome(PAID, f"Paid {total(lines):.2f} to {len(lines)} worker(s) (bonus {draft.id}).", batch)


def _repeat_line(batch: BonusBatch) -> str:
    if batch.state == PAID:
        return f"Already paid ({batch.total:.2f} to {batch.workers} worker(s)): nothing sent again."
    if batch.state == UNKNOWN:
        return ("This payment's outcome is unknown and it is never sent again from here: check the study's "
                "bonuses on Prolific.")
    return "This payment is being made (another click or process): nothing sent again."
