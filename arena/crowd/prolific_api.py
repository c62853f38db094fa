"""A client for Prolific's researcher API (https://api.prolific.com/api/v1/).

What the arena needs from the platform: a study created as a draft and moved by transitions, its places,
the submissions with their statuses, approving, rejecting and asking for a return, bonuses in two steps
(create, then pay) and webhook subscriptions whose deliveries `verify_webhook` checks.

The token comes only from the environment (`PROLIFIC_API_TOKEN`); it travels in the `Authorization`
header and nowhere else: not in an attribute, `repr()`, a log record or an error line (a platform
answer that echoed it is scrubbed). Every failure reaches the caller as a `PlatformError` whose text is
one line for the researcher, with the platform's own message when it gave one.

Retries (tenacity): a 429 waits the `Retry-After` the platform asks for, and a network failure or a
502/503/504 backs off exponentially, but only for calls that are safe to send twice: reads, setting the
places (it sets a value), transitions (the platform documents submission transitions as idempotent; a
study transition refused because the study already has the status it leads to counts as done) and bulk
approval. Creating a study or a bonus is
retried on 429 only (the platform refused it, so nothing was made). `pay_bonus` is never re-sent: a
second pay call pays the participants again.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import random
import time
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any, Callable, Mapping, Optional, Sequence

import httpx
import tenacity

log = logging.getLogger("arena.crowd.prolific")

PROLIFIC_TOKEN_ENV = "PROLIFIC_API_TOKEN"
DEFAULT_BASE_URL = "https://api.prolific.com/api/v1/"

STUDY_STATUSES = ("UNPUBLISHED", "SCHEDULED", "PUBLISHING", "ACTIVE", "PAUSED", "AWAITING REVIEW",
                  "COMPLETED")
STUDY_ACTIONS = ("PUBLISH", "PAUSE", "START", "STOP")
_STUDY_ACTION_LEADS_TO = {"PUBLISH": ("PUBLISHING", "SCHEDULED", "ACTIVE"), "PAUSE": ("PAUSED",),
                          "START": ("ACTIVE",), "STOP": ("AWAITING REVIEW", "COMPLETED")}
SUBMISSION_STATUSES = ("RESERVED", "ACTIVE", "AWAITING REVIEW", "APPROVED", "RETURNED", "REJECTED",
                       "TIMED-OUT", "SCREENED OUT")
REJECTION_CATEGORIES = ("TOO_QUICKLY", "TOO_SLOWLY", "FAILED_INSTRUCTIONS", "INCOMP_LONGITUDINAL",
                        "FAILED_CHECK", "LOW_EFFORT", "MALINGERING", "NO_CODE", "BAD_CODE", "NO_DATA",
                        "UNSUPP_DEVICE", "OTHER")
MIN_REJECTION_MESSAGE = 100  # characters, the platform's minimum for a rejection's message
WEBHOOK_EVENT_TYPES = ("study.status.change", "submission.status.change")
SIGNATURE_HEADER = "X-Prolific-Request-Signature"
TIMESTAMP_HEADER = "X-Prolific-Request-Timestamp"
WEBHOOK_MAX_AGE_S = 300.0  # a delivery signed longer ago than this is refused (a replay)

_PAGE_SIZE = 100
_MAX_PAGES = 10_000  # a guard against a server whose pages never end
_RETRIED_STATUSES = (502, 503, 504)
_ERROR_LINE_CHARS = 300


class PlatformError(RuntimeError):
    """A call to the platform that did not do what was asked; str() is one line, without the token."""

    def __init__(self, message: str, status: Optional[int] = None):
        super().__init__(" ".join(str(message).split()))
        self.status = status


class PlatformNotConfigured(PlatformError):
    """No token in the environment: the arena works without the platform's API (the sheets)."""


class _Retryable(PlatformError):
    """A failed attempt the retry loop may repeat (429, a network failure, a gateway error)."""

    def __init__(self, message: str, status: Optional[int] = None, retry_after: Optional[float] = None,
                 network: bool = False):
        super().__init__(message, status)
        self.retry_after = retry_after
        self.network = network


@dataclass(frozen=True)
class StudyDraft:
    name: str
    internal_name: str
    description: str
    external_study_url: str  # with {{%PROLIFIC_PID%}}, {{%STUDY_ID%}}, {{%SESSION_ID%}}
    completion_codes: list[dict]
    total_available_places: int
    estimated_completion_time: int  # minutes
    reward: int  # the workspace currency's smallest unit (pence, cents)
    device_compatibility: Sequence[str] = ("desktop",)

    def as_body(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "internal_name": self.internal_name,
            "description": self.description,
            "external_study_url": self.external_study_url,
            "prolific_id_option": "url_parameters",  # the link carries the ids, no question asked
            "completion_codes": [dict(code) for code in self.completion_codes],
            "total_available_places": int(self.total_available_places),
            "estimated_completion_time": int(self.estimated_completion_time),
            "reward": int(self.reward),
            "device_compatibility": list(self.device_compatibility),
        }


@dataclass(frozen=True)
class PlatformStudy:
    id: str
    status: str
    total_available_places: int
    places_taken: int
    name: str
    internal_name: str

    @classmethod
    def from_json(cls, data: Any) -> "PlatformStudy":
        record = _record(data, "a study")
        return cls(
            id=_text(record, "id", "a study"),
            status=str(record.get("status") or ""),
            total_available_places=int(record.get("total_available_places") or 0),
            places_taken=int(record.get("places_taken") or 0),
            name=str(record.get("name") or ""),
            internal_name=str(record.get("internal_name") or ""),
        )


@dataclass(frozen=True)
class PlatformSubmission:
    id: str
    participant_id: str
    status: str
    started_at: Optional[str]
    completed_at: Optional[str]
    study_code: Optional[str]

    @classmethod
    def from_json(cls, data: Any) -> "PlatformSubmission":
        record = _record(data, "a submission")
        # Older answers name the participant `participant`; the documented field is `participant_id`.
        participant = record.get("participant_id") or record.get("participant") or ""
        return cls(
            id=_text(record, "id", "a submission"),
            participant_id=str(participant),
            status=str(record.get("status") or ""),
            started_at=record.get("started_at"),
            completed_at=record.get("completed_at"),
            study_code=record.get("study_code"),
        )


@dataclass(frozen=True)
class BonusDraft:
    id: str
    amount: int  # the smallest currency unit, as the platform reports them
    fees: int
    total_amount: int

    @classmethod
    def from_json(cls, data: Any) -> "BonusDraft":
        record = _record(data, "a bonus")
        return cls(
            id=_text(record, "id", "a bonus"),
            amount=_whole(record.get("amount")),
            fees=_whole(record.get("fees")),
            total_amount=_whole(record.get("total_amount")),
        )


def _record(data: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(data, Mapping):
        raise PlatformError(f"Prolific answered with something other than {what}")
    return data


def _text(record: Mapping[str, Any], key: str, what: str) -> str:
    value = record.get(key)
    if not value:
        raise PlatformError(f"Prolific answered {what} without its {key}")
    return str(value)


def _whole(value: Any) -> int:
    try:
        return int(Decimal(str(value or 0)))
    except (InvalidOperation, ValueError):
        raise PlatformError(f"Prolific answered an amount that is not a number: {str(value)[:40]}") from None


def bonus_csv(lines: Sequence[tuple[str, Decimal]]) -> str:
    """The `csv_bonuses` text: one `<participant_id>,<amount>` line each, amounts in major units with two
    decimals. Raises PlatformError on an empty list, a bad id or an amount that is not positive."""
    if not lines:
        raise PlatformError("a bonus needs at least one line")
    rows = []
    for participant_id, amount in lines:
        pid = str(participant_id).strip()
        if not pid or any(ch in pid for ch in ",\r\n\t "):
            raise PlatformError(f"a bonus line has a bad participant id: {pid[:40]!r}")
        try:
            value = Decimal(str(amount)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
        except InvalidOperation:
            raise PlatformError(f"the bonus for {pid} is not an amount: {str(amount)[:20]}") from None
        if not value.is_finite() or value <= 0:
            raise PlatformError(f"the bonus for {pid} must be more than 0, not {value}")
        rows.append(f"{pid},{value}\n")
    return "".join(rows)


class _Backoff:
    """tenacity's wait: the server's Retry-After when it sent one, else exponential backoff; capped."""

    def __init__(self, base_s: float = 0.5, max_s: float = 30.0):
        self.base_s = base_s
        self.max_s = max_s

    def __call__(self, state: tenacity.RetryCallState) -> float:
        failure = state.outcome.exception() if state.outcome is not None else None
        retry_after = getattr(failure, "retry_after", None)
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_s)
        delay = min(self.base_s * 2 ** (state.attempt_number - 1), self.max_s)
        return delay * random.uniform(0.75, 1.25)


def _retry_after(response: httpx.Response) -> Optional[float]:
    """Seconds from a Retry-After header (a number; a date is read as 'soon')."""
    value = response.headers.get("Retry-After")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        return 1.0


def _flatten(detail: Any) -> str:
    """The platform's `detail` (text, a list, or field -> messages) as one short text."""
    if isinstance(detail, Mapping):
        return "; ".join(f"{key}: {_flatten(value)}" for key, value in detail.items())
    if isinstance(detail, (list, tuple)):
        return "; ".join(_flatten(item) for item in detail)
    return str(detail)


def _platform_message(response: httpx.Response) -> str:
    """The platform's own words from an error answer (`{"error": {"title", "detail", ...}}`), else the
    start of the body (its `additional_information` is a link to the error's page, left out)."""
    try:
        body = response.json()
    except ValueError:
        return response.text[:_ERROR_LINE_CHARS] or response.reason_phrase
    error = body.get("error", body) if isinstance(body, Mapping) else body
    if isinstance(error, Mapping):
        parts = [_flatten(error[key]) for key in ("title", "detail") if error.get(key)]
        if parts:
            return ": ".join(parts)
    return _flatten(error) or response.reason_phrase


class ProlificClient:
    """Calls to the platform; one instance per researcher action is fine (it holds a connection pool)."""

    def __init__(self, token: str, base_url: str = DEFAULT_BASE_URL, *, timeout_s: float = 20.0,
                 max_retries: int = 4, transport: Optional[httpx.BaseTransport] = None,
                 backoff_base_s: float = 0.5, max_wait_s: float = 30.0):
        if not token or not token.strip():
            raise PlatformNotConfigured(f"no Prolific API token: set {PROLIFIC_TOKEN_ENV}")
        self.base_url = base_url if base_url.endswith("/") else base_url + "/"
        self.max_retries = max(0, int(max_retries))
        self._backoff = _Backoff(backoff_base_s, max_wait_s)
        self._scrub: Callable[[str], str] = lambda text: text.replace(token, "<token>")
        self._http = httpx.Client(
            base_url=self.base_url, timeout=timeout_s, transport=transport,
            headers={"Authorization": f"Token {token.strip()}", "Accept": "application/json"},
        )

    def __repr__(self) -> str:
        return f"ProlificClient({self.base_url!r})"

    @classmethod
    def from_environment(cls, environment: Optional[Mapping[str, str]] = None, *, settings: Any = None,
                         **options: Any) -> "ProlificClient":
        """The token from PROLIFIC_API_TOKEN and the base URL from the settings (ARENA_PROLIFIC_URL):
        those of `settings` (the app's own `Settings`, read from the environment at start) when given,
        else read now. Raises PlatformNotConfigured when the token is not set."""
        from arena.runtime.config import Settings

        if settings is None:
            settings = Settings.from_env(environment)
        token = settings.prolific_token.get_secret_value() if settings.prolific_token else ""
        if not token.strip():
            raise PlatformNotConfigured(f"no Prolific API token: set {PROLIFIC_TOKEN_ENV} in the environment")
        return cls(token, settings.prolific_url, **options)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> "ProlificClient":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- studies -----------------------------------------------------------------------------------------
    def create_study(self, draft: StudyDraft) -> PlatformStudy:
        """POST studies/: the study as an unpublished draft (publish it with `transition_study`)."""
        data = self._call("POST", "studies/", "create the study", json=draft.as_body(), resend=False)
        return PlatformStudy.from_json(data)

    def get_study(self, study_id: str) -> PlatformStudy:
        return PlatformStudy.from_json(self._call("GET", f"studies/{_id(study_id)}/", "read the study"))

    def set_places(self, study_id: str, places: int) -> PlatformStudy:
        if int(places) < 1:
            raise PlatformError(f"a study needs at least one place, not {places}")
        data = self._call("PATCH", f"studies/{_id(study_id)}/", "change the places",
                          json={"total_available_places": int(places)})
        return PlatformStudy.from_json(data)

    def transition_study(self, study_id: str, action: str) -> PlatformStudy:
        """POST studies/{id}/transition/ with PUBLISH, PAUSE, START (resume) or STOP."""
        action = str(action).upper()
        if action not in STUDY_ACTIONS:
            raise PlatformError(f"unknown study action {action!r}: use one of {', '.join(STUDY_ACTIONS)}")
        try:
            data = self._call("POST", f"studies/{_id(study_id)}/transition/", f"{action.lower()} the study",
                              json={"action": action})
        except PlatformError as refused:
            # A transition whose answer was lost and was sent again is refused the second time (the study
            # has moved already): the study in the status the action leads to is that success, not a failure.
            if refused.status != 400:
                raise
            study = self.get_study(study_id)
            if study.status in _STUDY_ACTION_LEADS_TO[action]:
                return study
            raise
        return PlatformStudy.from_json(data)

    # -- submissions --------------------------------------------------------------------------------------
    def list_submissions(self, study_id: str) -> list[PlatformSubmission]:
        """Every submission of the study, all pages (GET submissions/?study=...&page=...)."""
        found: list[PlatformSubmission] = []
        for page in range(1, _MAX_PAGES + 1):
            data = self._call("GET", "submissions/", "list the submissions",
                              params={"study": _id(study_id), "page": page, "page_size": _PAGE_SIZE})
            results = data.get("results") if isinstance(data, Mapping) else None
            if not isinstance(results, list):
                raise PlatformError("Prolific answered the submissions without a list of results")
            found.extend(PlatformSubmission.from_json(item) for item in results)
            if not results or not _has_next(data, len(results)):
                break
        return found

    def get_submission(self, submission_id: str) -> PlatformSubmission:
        data = self._call("GET", f"submissions/{_id(submission_id)}/", "read the submission")
        return PlatformSubmission.from_json(data)

    def approve(self, submission_id: str) -> PlatformSubmission:
        data = self._call("POST", f"submissions/{_id(submission_id)}/transition/", "approve the submission",
                          json={"action": "APPROVE"})
        return PlatformSubmission.from_json(data)

    def reject(self, submission_id: str, message: str, category: str) -> PlatformSubmission:
        """A rejection needs a category from REJECTION_CATEGORIES and a message of at least
        MIN_REJECTION_MESSAGE characters (refused here, before anything is sent)."""
        check_rejection(message, category)
        data = self._call("POST", f"submissions/{_id(submission_id)}/transition/", "reject the submission",
                          json={"action": "REJECT", "message": message.strip(),
                                "rejection_category": category})
        return PlatformSubmission.from_json(data)

    def bulk_approve(self, study_id: str, submission_ids: list[str]) -> None:
        """POST submissions/bulk-approve/ with the submission ids (the form the platform recommends)."""
        ids = [_id(sid) for sid in submission_ids]
        if not ids:
            raise PlatformError("nothing to approve: no submission ids")
        _id(study_id)  # checked, though the submission-id form of the call does not send it
        self._call("POST", "submissions/bulk-approve/", "approve the submissions",
                   json={"submission_ids": ids})

    def request_return(self, submission_id: str, reasons: list[str]) -> PlatformSubmission:
        texts = [" ".join(str(reason).split()) for reason in reasons if str(reason).strip()]
        if not texts:
            raise PlatformError("asking for a return needs at least one reason")
        data = self._call("POST", f"submissions/{_id(submission_id)}/request-return/", "ask for a return",
                          json={"request_return_reasons": texts})
        if isinstance(data, Mapping) and "id" in data:
            return PlatformSubmission.from_json(data)
        return self.get_submission(submission_id)

    # -- bonuses ------------------------------------------------------------------------------------------
    def create_bonus(self, study_id: str, lines: list[tuple[str, Decimal]]) -> BonusDraft:
        """POST submissions/bonus-payments/: a bonus set up, not paid (see `pay_bonus`)."""
        body = {"study_id": _id(study_id), "csv_bonuses": bonus_csv(lines)}
        data = self._call("POST", "submissions/bonus-payments/", "set up the bonus", json=body, resend=False)
        return BonusDraft.from_json(data)

    def pay_bonus(self, bonus_id: str) -> None:
        """POST bulk-bonus-payments/{id}/pay/. Sent exactly once: the platform pays again on a repeat, so a
        failure here (even a 429 or a lost answer) is reported, never retried."""
        self._call("POST", f"bulk-bonus-payments/{_id(bonus_id)}/pay/", "pay the bonus", json={},
                   resend=None)

    # -- webhooks -----------------------------------------------------------------------------------------
    def create_webhook_secret(self, workspace_id: str) -> str:
        """POST hooks/secrets/: a new signing secret for the workspace's deliveries (`verify_webhook`)."""
        data = self._call("POST", "hooks/secrets/", "create a webhook secret",
                          json={"workspace_id": _id(workspace_id)}, resend=False)
        return _text(_record(data, "a secret"), "value", "a secret")

    def subscribe_webhook(self, event_type: str, target_url: str, workspace_id: str) -> str:
        """POST hooks/subscriptions/, then the confirmation the platform asks for (the subscription's
        X-Hook-Secret sent back to hooks/subscriptions/{id}/); returns the subscription's id."""
        if event_type not in WEBHOOK_EVENT_TYPES:
            raise PlatformError(f"unknown webhook event {event_type!r}: use {', '.join(WEBHOOK_EVENT_TYPES)}")
        if not str(target_url).startswith(("https://", "http://")):
            raise PlatformError("a webhook's target must be an http(s) address")
        response = self._send("POST", "hooks/subscriptions/", "subscribe to the webhook", resend=False,
                              json={"event_type": event_type, "target_url": target_url,
                                    "workspace_id": _id(workspace_id)})
        subscription = _json_or_none(response)
        if isinstance(subscription, Mapping) and isinstance(subscription.get("results"), list):
            subscription = (subscription["results"] or [None])[0]  # some answers wrap it in a list
        subscription_id = _text(_record(subscription, "a subscription"), "id", "a subscription")
        hook_secret = response.headers.get("X-Hook-Secret")
        if not hook_secret:
            raise PlatformError("Prolific answered the subscription without its X-Hook-Secret to confirm it")
        self._call("POST", f"hooks/subscriptions/{_id(subscription_id)}/", "confirm the webhook",
                   json={"secret": hook_secret})
        return subscription_id

    # -- the one way out ----------------------------------------------------------------------------------
    def _call(self, method: str, path: str, what: str, *, json: Any = None,
              params: Optional[Mapping[str, Any]] = None, resend: Optional[bool] = True) -> Any:
        """`_send`'s answer as JSON (None for an empty body)."""
        return _json_or_none(self._send(method, path, what, json=json, params=params, resend=resend))

    def _send(self, method: str, path: str, what: str, *, json: Any = None,
              params: Optional[Mapping[str, Any]] = None, resend: Optional[bool] = True) -> httpx.Response:
        """One request with the retries its kind allows. `resend`: True -- safe to send again after a
        network failure; False -- repeated only after a 429 (nothing was done); None -- never repeated."""
        def may_retry(state: tenacity.RetryCallState) -> bool:
            failure = state.outcome.exception() if state.outcome is not None else None
            if not isinstance(failure, _Retryable) or resend is None:
                return False
            return resend or failure.status == 429

        def note_retry(state: tenacity.RetryCallState) -> None:
            wait = state.next_action.sleep if state.next_action is not None else 0.0
            failure = state.outcome.exception() if state.outcome is not None else None
            log.info("Prolific: could not %s (%s); trying again in %.1f s", what, failure, wait)

        retrying = tenacity.Retrying(retry=may_retry, wait=self._backoff, reraise=True,
                                     stop=tenacity.stop_after_attempt(self.max_retries + 1),
                                     before_sleep=note_retry)
        try:
            return retrying(self._attempt, method, path, what, json, params)
        except _Retryable as exc:
            raise PlatformError(self._final_line(exc, what, resend), exc.status) from None

    def _final_line(self, failure: _Retryable, what: str, resend: Optional[bool]) -> str:
        line = str(failure)
        if resend is None:
            line += " (not sent again: check on Prolific before trying again)"
        return line

    def _attempt(self, method: str, path: str, what: str, json: Any,
                 params: Optional[Mapping[str, Any]]) -> httpx.Response:
        try:
            response = self._http.request(method, path, json=json, params=params)
        except httpx.HTTPError as exc:
            reason = self._scrub(" ".join(str(exc).split()) or type(exc).__name__)[:_ERROR_LINE_CHARS]
            raise _Retryable(f"could not reach Prolific to {what}: {reason}", network=True) from None
        log.debug("Prolific %s %s -> %d", method, path, response.status_code)
        if response.status_code < 400:
            return response
        message = self._scrub(" ".join(_platform_message(response).split()))[:_ERROR_LINE_CHARS]
        status = response.status_code
        if status == 429:
            raise _Retryable(f"Prolific is limiting requests; could not {what}: {message}", status,
                             retry_after=_retry_after(response))
        if status in _RETRIED_STATUSES:
            raise _Retryable(f"Prolific could not {what} just now ({status}): {message}", status)
        if status == 401:
            raise PlatformError(f"Prolific refused the API token ({PROLIFIC_TOKEN_ENV}): {message}", status)
        raise PlatformError(f"Prolific refused to {what} ({status}): {message}", status)


def _json_or_none(response: httpx.Response) -> Any:
    if not response.content:
        return None
    try:
        return response.json()
    except ValueError:
        return response.text


def _has_next(page: Mapping[str, Any], size: int) -> bool:
    """Whether another page follows: the `_links.next` the platform sends, else a full page."""
    links = page.get("_links")
    if isinstance(links, Mapping) and "next" in links:
        following = links.get("next")
        return bool(following.get("href") if isinstance(following, Mapping) else following)
    return size >= _PAGE_SIZE


def _id(value: str) -> str:
    """A platform id as it goes into a path: letters, digits, '-' and '_' only (no path tricks)."""
    text = str(value or "").strip()
    if not text or not all(ch.isalnum() or ch in "-_" for ch in text) or len(text) > 64:
        raise PlatformError(f"not a Prolific id: {text[:40]!r}")
    return text


def check_rejection(message: str, category: str) -> None:
    """Raises PlatformError (one line) unless the rejection is one the platform accepts."""
    if category not in REJECTION_CATEGORIES:
        raise PlatformError(f"unknown rejection category {category!r}: use one of "
                            f"{', '.join(REJECTION_CATEGORIES)}")
    length = len(str(message or "").strip())
    if length < MIN_REJECTION_MESSAGE:
        raise PlatformError(f"a rejection's message needs at least {MIN_REJECTION_MESSAGE} characters "
                            f"(this one has {length})")


def webhook_signature(secret: str, timestamp: str, body: bytes) -> str:
    """The platform's signature of a delivery: base64 of HMAC-SHA256(secret, timestamp + body)."""
    digest = hmac.new(secret.encode(), timestamp.encode() + body, hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


def verify_webhook(secret: str, timestamp: str, body: bytes, signature: str, *,
                   max_age_s: float = WEBHOOK_MAX_AGE_S, now: Optional[float] = None) -> bool:
    """Whether a delivery is the platform's: its signature matches and its timestamp (UNIX seconds,
    the X-Prolific-Request-Timestamp header) is within `max_age_s` of now."""
    if not secret or not signature:
        return False
    try:
        sent_at = float(timestamp)
    except (TypeError, ValueError):
        return False
    current = time.time() if now is None else now
    if abs(current - sent_at) > max_age_s:
        return False
    expected = webhook_signature(secret, str(timestamp), bytes(body))
    return hmac.compare_digest(expected.encode(), str(signature).strip().encode())


def webhook_event(body: bytes) -> dict[str, Any]:
    """A delivery's JSON body (call after `verify_webhook`); PlatformError when it is not an object."""
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise PlatformError("a webhook delivery whose body is not JSON") from None
    if not isinstance(data, dict):
        raise PlatformError("a webhook delivery whose body is not a JSON object")
    return data


__all__ = [
    "BonusDraft", "DEFAULT_BASE_URL", "MIN_REJECTION_MESSAGE", "PROLIFIC_TOKEN_ENV", "PlatformError",
    "PlatformNotConfigured", "PlatformStudy", "PlatformSubmission", "ProlificClient", "REJECTION_CATEGORIES",
    "STUDY_ACTIONS", "STUDY_STATUSES", "SUBMISSION_STATUSES", "StudyDraft", "WEBHOOK_EVENT_TYPES",
    "bonus_csv", "check_rejection", "verify_webhook", "webhook_event", "webhook_signature",
]
