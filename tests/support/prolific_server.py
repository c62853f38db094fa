"""A local HTTP server that behaves like Prolific's researcher API, for tests (the real one costs money).

It serves under `/api/v1/` what `arena.crowd.prolific_api.ProlificClient` calls, with the documented rules:

* every request needs `Authorization: Token <token>`, else 401 with the platform's error body
  (`{"error": {"status", "error_code", "title", "detail", "additional_information"}}`, as all errors here);
* `POST studies/` checks the required fields (400 naming the missing ones) and makes an UNPUBLISHED draft;
  `GET`/`PATCH studies/{id}/`; `POST studies/{id}/transition/`: PUBLISH (UNPUBLISHED -> ACTIVE), PAUSE
  (ACTIVE -> PAUSED), START (PAUSED -> ACTIVE), STOP (ACTIVE or PAUSED -> AWAITING REVIEW while a
  submission waits for review, else COMPLETED); any other pair is a 400;
* places: a draft's places may be set freely; a published study's may only grow (the help pages speak
  of increasing places only) and never fall below the places taken; growing a finished study makes it
  ACTIVE again, and so does a place freed on a study that filled up (unless it was stopped). Places
  taken count RESERVED, ACTIVE, AWAITING REVIEW and APPROVED submissions (a return,
  a time-out, a rejection or a screen-out frees the place), and a reservation beyond the places is refused;
* submissions: `GET submissions/?study=...&page=&page_size=` (and `studies/{id}/submissions/`) in pages
  with `_links.next` and `meta.count`; `GET submissions/{id}/`; `POST submissions/{id}/transition/`:
  APPROVE or REJECT only from AWAITING REVIEW, a repeat of the same action is ignored (documented as
  idempotent), REJECT needs `rejection_category` from the documented list and a `message` of at least 100
  characters; `POST submissions/bulk-approve/` with `submission_ids` or `study_id` + `participant_ids`;
  `POST submissions/{id}/request-return/` with `request_return_reasons`;
* bonuses: `POST submissions/bonus-payments/` parses `csv_bonuses` (`<participant or submission id>,<amount
  in major units>` lines; ids that did not take part are a 400 naming them) and answers an id with
  `amount`, `fees`, `vat` and `total_amount` in the smallest unit; `POST bulk-bonus-payments/{id}/pay/`
  answers 202 and pays -- and pays AGAIN on every repeat, as the platform warns (`pay_calls[id]` counts);
* webhooks: `POST hooks/secrets/` (one secret per workspace, a new one replaces it), `POST
  hooks/subscriptions/` answers the subscription and an `X-Hook-Secret` header that `POST
  hooks/subscriptions/{id}/` with `{"secret": ...}` confirms; confirmed subscriptions get a POST for each
  study and submission status change, signed as documented (base64 HMAC-SHA256 of timestamp + body in
  `X-Prolific-Request-Signature`, the UNIX time in `X-Prolific-Request-Timestamp`, an `X-Event-ID`);
* `set_rate_limit(n)`: more than n requests in a second answer 429 with `Retry-After`; `fail_next(status)`
  answers the next requests with an error (status 0 drops the connection; `after=True` does the work first,
  as when an answer is lost on the way back).

`hits` lists every request that arrived (those refused or failed on purpose too), `state.requests` those
the model handled. Tests drive the participants' side with `reserve`, `start_submission`, `complete`,
`return_submission`, `time_out` and `screen_out`, and read `state`.

Where the documentation left me unsure, and what this server does instead: the real platform passes
through PUBLISHING (and a brief, undocumented PROCESSING) before ACTIVE -- here the change is immediate;
bulk approval and bonus payment are asynchronous there -- here they are done before the answer;
the fee on a bonus depends on the workspace (here a third of the amount, no VAT); webhook targets must be
public https addresses there -- here any http(s) address; the exact fields of a delivery's body beyond
`event_type`, `resource_id` and `status` are not documented in full -- here `study_id` and
`participant_id` are added for submissions; the list of return reasons is free text here.
"""

from __future__ import annotations

import base64
import collections
import hashlib
import hmac
import json
import queue
import re
import secrets
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Optional
from urllib.parse import parse_qs, urlencode, urlparse

import httpx

REJECTION_CATEGORIES = ("TOO_QUICKLY", "TOO_SLOWLY", "FAILED_INSTRUCTIONS", "INCOMP_LONGITUDINAL",
                        "FAILED_CHECK", "LOW_EFFORT", "MALINGERING", "NO_CODE", "BAD_CODE", "NO_DATA",
                        "UNSUPP_DEVICE", "OTHER")
PLACE_HOLDING = ("RESERVED", "ACTIVE", "AWAITING REVIEW", "APPROVED")
REQUIRED_STUDY_FIELDS = ("name", "description", "external_study_url", "prolific_id_option",
                         "completion_codes", "total_available_places", "estimated_completion_time", "reward")
STUDY_MOVES = {  # (action, from) -> to; STOP's target depends on the submissions
    ("PUBLISH", "UNPUBLISHED"): "ACTIVE",
    ("PAUSE", "ACTIVE"): "PAUSED",
    ("START", "PAUSED"): "ACTIVE",
    ("STOP", "ACTIVE"): "STOP",
    ("STOP", "PAUSED"): "STOP",
}
BONUS_FEE_RATE = Decimal(1) / Decimal(3)
Answer = tuple[int, Any, dict[str, str]]  # status, JSON body, headers


def _now() -> str:
    return datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")


def _new_id() -> str:
    return secrets.token_hex(12)  # 24 hex characters, the shape of the platform's ids


class ApiError(Exception):
    """An answer in the platform's error format."""

    def __init__(self, status: int, title: str, detail: Any, headers: Optional[dict[str, str]] = None):
        super().__init__(title)
        self.status, self.title, self.detail, self.headers = status, title, detail, headers or {}

    def body(self) -> dict[str, Any]:
        code = {400: 140100, 401: 140101, 403: 140103, 404: 140104, 429: 140129}.get(self.status, 140000)
        return {"error": {"status": self.status, "error_code": code, "title": self.title,
                          "detail": self.detail, "additional_information": f"/api/v1/errors/{code}",
                          "traceback": None, "interactive": False}}


def _bad(detail: Any) -> ApiError:
    return ApiError(400, "Invalid request", detail)


@dataclass
class Study:
    id: str
    fields: dict[str, Any]
    status: str = "UNPUBLISHED"
    stopped: bool = False  # STOP was asked: freed places are not offered again

    def places(self) -> int:
        return int(self.fields["total_available_places"])


@dataclass
class Submission:
    id: str
    study_id: str
    participant_id: str
    status: str = "RESERVED"
    started_at: Optional[str] = None
    completed_at: Optional[str] = None
    study_code: Optional[str] = None
    return_requested: Optional[str] = None
    rejection: Optional[dict[str, str]] = None

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "study_id": self.study_id, "participant_id": self.participant_id,
                "status": self.status, "started_at": self.started_at, "completed_at": self.completed_at,
                "study_code": self.study_code, "return_requested": self.return_requested,
                "has_siblings": False}


@dataclass
class Bonus:
    id: str
    study_id: str
    lines: list[tuple[str, int]]  # (participant id, amount in the smallest unit)
    amount: int
    fees: int


@dataclass
class State:
    studies: dict[str, Study] = field(default_factory=dict)
    submissions: dict[str, Submission] = field(default_factory=dict)  # in the order they were made
    bonuses: dict[str, Bonus] = field(default_factory=dict)
    payments: list[tuple[str, str, int]] = field(default_factory=list)  # (bonus id, participant, amount)
    secrets: dict[str, str] = field(default_factory=dict)  # workspace -> the signing secret
    subscriptions: dict[str, dict[str, Any]] = field(default_factory=dict)
    deliveries: list[dict[str, Any]] = field(default_factory=list)  # webhook POSTs made: event, answer
    requests: list[tuple[str, str, Any]] = field(default_factory=list)  # (method, path, JSON body)
    bulk_approvals: int = 0

    def study_submissions(self, study_id: str) -> list[Submission]:
        return [s for s in self.submissions.values() if s.study_id == study_id]

    def places_taken(self, study_id: str) -> int:
        return sum(1 for s in self.study_submissions(study_id) if s.status in PLACE_HOLDING)

    def study_json(self, study: Study) -> dict[str, Any]:
        return {**study.fields, "id": study.id, "status": study.status,
                "places_taken": self.places_taken(study.id)}


@dataclass
class _Failure:
    status: int
    after: bool
    path: Optional[str]
    retry_after: Optional[float]


class ProlificServer:
    def __init__(self, token: str = "test-token", host: str = "127.0.0.1", port: int = 0):
        self.token = token
        self.state = State()
        self.lock = threading.RLock()
        self.pay_calls: collections.Counter[str] = collections.Counter()
        self.hits: list[tuple[str, str]] = []  # every request that arrived, refused or failed ones too
        self._failures: list[_Failure] = []
        self._rate_limit: Optional[float] = None
        self._rate_retry_after = 1.0
        self._recent: collections.deque[float] = collections.deque()
        self._outbox: queue.Queue[Optional[tuple[str, str, dict[str, Any]]]] = queue.Queue()
        handler = type("Handler", (_Handler,), {"server_model": self})
        self.httpd = ThreadingHTTPServer((host, port), handler)
        self.httpd.daemon_threads = True
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._sender = threading.Thread(target=self._deliver_loop, daemon=True)

    @property
    def url(self) -> str:
        """The API's base address, as ARENA_PROLIFIC_URL takes it."""
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}/api/v1/"

    def start(self) -> "ProlificServer":
        self._thread.start()
        self._sender.start()
        return self

    def stop(self) -> None:
        self._outbox.put(None)
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> "ProlificServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # -- what tests arrange --------------------------------------------------------------------------------
    def set_rate_limit(self, n_per_s: Optional[float], retry_after_s: float = 1.0) -> None:
        """More than `n_per_s` requests within a second answer 429 with `Retry-After` (None: no limit)."""
        with self.lock:
            self._rate_limit, self._rate_retry_after = n_per_s, retry_after_s
            self._recent.clear()

    def fail_next(self, status: int, n: int = 1, *, after: bool = False, path: Optional[str] = None,
                  retry_after: Optional[float] = None) -> None:
        """The next `n` requests (whose path contains `path`, when given) answer `status` with an error
        body; status 0 closes the connection without an answer. `after`: do the work first."""
        with self.lock:
            self._failures.extend(_Failure(status, after, path, retry_after) for _ in range(n))

    # -- the participants' side --------------------------------------------------------------------------
    def reserve(self, study_id: str, participant_id: Optional[str] = None) -> str:
        """A participant takes a place on an ACTIVE study; the new submission's id."""
        with self.lock:
            study = self.state.studies[study_id]
            if study.status != "ACTIVE":
                raise ValueError(f"the study is {study.status}, not ACTIVE")
            if self.state.places_taken(study_id) >= study.places():
                raise ValueError("no place left")
            submission = Submission(_new_id(), study_id, participant_id or _new_id())
            self.state.submissions[submission.id] = submission
            self._submission_changed(submission)
            self._settle_study(study)
            return submission.id

    def start_submission(self, submission_id: str) -> None:
        self._move(submission_id, ("RESERVED",), "ACTIVE", started=True)

    def complete(self, submission_id: str, code: str) -> None:
        """The participant finishes with a completion code: AWAITING REVIEW (or APPROVED when the code's
        action says AUTOMATICALLY_APPROVE)."""
        with self.lock:
            submission = self.state.submissions[submission_id]
            study = self.state.studies[submission.study_id]
            actions = next(([a.get("action") for a in c.get("actions", [])]
                            for c in study.fields["completion_codes"] if c.get("code") == code), [])
            target = "APPROVED" if "AUTOMATICALLY_APPROVE" in actions else "AWAITING REVIEW"
            self._move(submission_id, ("ACTIVE",), target, code=code)

    def return_submission(self, submission_id: str) -> None:
        self._move(submission_id, ("RESERVED", "ACTIVE", "AWAITING REVIEW"), "RETURNED")

    def time_out(self, submission_id: str) -> None:
        self._move(submission_id, ("RESERVED", "ACTIVE"), "TIMED-OUT")

    def screen_out(self, submission_id: str) -> None:
        self._move(submission_id, ("ACTIVE",), "SCREENED OUT")

    def _move(self, submission_id: str, sources: tuple[str, ...], target: str, started: bool = False,
              code: Optional[str] = None) -> None:
        with self.lock:
            submission = self.state.submissions[submission_id]
            if submission.status not in sources:
                raise ValueError(f"a {submission.status} submission cannot become {target}")
            submission.status = target
            if started:
                submission.started_at = _now()
            if code is not None:
                submission.study_code, submission.completed_at = code, _now()
            self._submission_changed(submission)
            self._settle_study(self.state.studies[submission.study_id])

    def _settle_study(self, study: Study) -> None:
        """A full study with no one at work waits for review; one with nothing left to review is done; a
        place freed (a rejection, a return) on a study that filled up, not stopped, is offered again."""
        subs = self.state.study_submissions(study.id)
        working = any(s.status in ("RESERVED", "ACTIVE") for s in subs)
        waiting = any(s.status == "AWAITING REVIEW" for s in subs)
        full = self.state.places_taken(study.id) >= study.places()
        target = study.status
        if study.status in ("AWAITING REVIEW", "COMPLETED") and not full and not study.stopped:
            target = "ACTIVE"
        elif study.status == "ACTIVE" and full and not working:
            target = "AWAITING REVIEW" if waiting else "COMPLETED"
        elif study.status == "AWAITING REVIEW" and not waiting:
            target = "COMPLETED"
        self._set_study_status(study, target)

    def _set_study_status(self, study: Study, status: str) -> None:
        if status != study.status:
            study.status = status
            self._emit("study.status.change", {"resource_id": study.id, "status": status})

    def _submission_changed(self, submission: Submission) -> None:
        self._emit("submission.status.change", {"resource_id": submission.id, "status": submission.status,
                                                "study_id": submission.study_id,
                                                "participant_id": submission.participant_id})

    # -- webhooks ------------------------------------------------------------------------------------------
    def _emit(self, event_type: str, payload: dict[str, Any]) -> None:
        for sub in self.state.subscriptions.values():
            if sub["event_type"] == event_type and sub["is_enabled"]:
                secret = self.state.secrets.get(sub["workspace_id"], "")
                self._outbox.put((sub["target_url"], secret, {"event_type": event_type, **payload}))

    def _deliver_loop(self) -> None:
        while (item := self._outbox.get()) is not None:
            target, secret, event = item
            body = json.dumps(event).encode()
            stamp = str(int(time.time()))
            signature = base64.b64encode(hmac.new(secret.encode(), stamp.encode() + body,
                                                  hashlib.sha256).digest()).decode()
            headers = {"Content-Type": "application/json", "X-Prolific-Request-Signature": signature,
                       "X-Prolific-Request-Timestamp": stamp, "X-Event-ID": _new_id()}
            try:
                answer: Any = httpx.post(target, content=body, headers=headers, timeout=5.0).status_code
            except httpx.HTTPError as exc:
                answer = type(exc).__name__
            with self.lock:
                self.state.deliveries.append({"event": event, "answer": answer})
            self._outbox.task_done()

    def wait_deliveries(self, timeout_s: float = 5.0) -> None:
        """Returns once every webhook queued so far has been sent (or after `timeout_s`)."""
        deadline = time.monotonic() + timeout_s
        while self._outbox.unfinished_tasks and time.monotonic() < deadline:
            time.sleep(0.01)

    # -- the API --------------------------------------------------------------------------------------------
    def handle(self, method: str, path: str, query: dict[str, list[str]], body: Any,
               auth: str) -> Answer:
        """One request: (status, JSON body, headers). Raises ApiError for an error answer."""
        with self.lock:
            self.state.requests.append((method, path, body))
            if auth != f"Token {self.token}":
                raise ApiError(401, "Unauthorized", "Invalid token.")
            self._check_rate()
            for verb, pattern, name in ROUTES:
                match = pattern.match(path)
                if verb == method and match:
                    return getattr(self, "_" + name)(*match.groups(), query=query, body=body)
            raise ApiError(404, "Not found", f"no route {method} {path}")

    def take_failure(self, path: str) -> Optional[_Failure]:
        with self.lock:
            for index, failure in enumerate(self._failures):
                if failure.path is None or failure.path in path:
                    return self._failures.pop(index)
        return None

    def _check_rate(self) -> None:
        if self._rate_limit is None:
            return
        now = time.monotonic()
        while self._recent and now - self._recent[0] >= 1.0:
            self._recent.popleft()
        if len(self._recent) >= self._rate_limit:
            wait = self._rate_retry_after
            raise ApiError(429, "Too many requests", "Request was throttled.",
                           {"Retry-After": f"{wait:g}"})
        self._recent.append(now)

    def _study(self, study_id: str) -> Study:
        study = self.state.studies.get(study_id)
        if study is None:
            raise ApiError(404, "Not found", "Study not found.")
        return study

    def _submission(self, submission_id: str) -> Submission:
        submission = self.state.submissions.get(submission_id)
        if submission is None:
            raise ApiError(404, "Not found", "Submission not found.")
        return submission

    def _create_study(self, *, query: Any, body: Any) -> Answer:
        data = body if isinstance(body, dict) else {}
        missing = {name: ["This field is required."] for name in REQUIRED_STUDY_FIELDS if data.get(name) in
                   (None, "", [])}
        if missing:
            raise _bad(missing)
        problems = _study_problems(data)
        if problems:
            raise _bad(problems)
        fields = {**data, "internal_name": data.get("internal_name") or data["name"], "date_created": _now()}
        study = Study(_new_id(), fields)
        self.state.studies[study.id] = study
        return 201, self.state.study_json(study), {}

    def _get_study(self, study_id: str, *, query: Any, body: Any) -> Answer:
        return 200, self.state.study_json(self._study(study_id)), {}

    def _patch_study(self, study_id: str, *, query: Any, body: Any) -> Answer:
        study = self._study(study_id)
        data = body if isinstance(body, dict) else {}
        if "total_available_places" in data:
            self._change_places(study, data["total_available_places"])
        if study.status == "UNPUBLISHED":
            study.fields.update({k: v for k, v in data.items() if k in REQUIRED_STUDY_FIELDS or
                                 k in ("internal_name", "device_compatibility")})
        elif "internal_name" in data:
            study.fields["internal_name"] = data["internal_name"]
        return 200, self.state.study_json(study), {}

    def _change_places(self, study: Study, value: Any) -> None:
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise _bad({"total_available_places": ["Ensure this value is a whole number of at least 1."]})
        taken = self.state.places_taken(study.id)
        if study.status != "UNPUBLISHED" and value < study.places():
            raise _bad({"total_available_places": ["The number of places can only be increased."]})
        if value < taken:
            raise _bad({"total_available_places": [f"{taken} places are already taken."]})
        grew = value > study.places()
        study.fields["total_available_places"] = value
        if grew and study.status in ("AWAITING REVIEW", "COMPLETED"):
            study.stopped = False  # more places reopen even a stopped study
            self._set_study_status(study, "ACTIVE")

    def _transition_study(self, study_id: str, *, query: Any, body: Any) -> Answer:
        study = self._study(study_id)
        action = (body or {}).get("action") if isinstance(body, dict) else None
        target = STUDY_MOVES.get((str(action), study.status))
        if target is None:
            raise _bad(f"Cannot {action} a study whose status is {study.status}.")
        if target == "STOP":
            study.stopped = True
            waiting = any(s.status == "AWAITING REVIEW" for s in self.state.study_submissions(study.id))
            target = "AWAITING REVIEW" if waiting else "COMPLETED"
        if action == "PUBLISH":
            study.fields["published_at"] = _now()
        self._set_study_status(study, target)
        return 200, self.state.study_json(study), {}

    def _list_submissions(self, study_id: Optional[str] = None, *, query: dict[str, list[str]],
                          body: Any) -> Answer:
        study_id = study_id or (query.get("study") or [""])[0]
        if study_id:
            self._study(study_id)
        rows = [s for s in self.state.submissions.values() if not study_id or s.study_id == study_id]
        try:
            page = max(int((query.get("page") or ["1"])[0]), 1)
            size = min(max(int((query.get("page_size") or ["20"])[0]), 1), 200)
        except ValueError:
            raise _bad({"page": ["A page and a page size are whole numbers."]}) from None
        chunk = rows[(page - 1) * size: page * size]
        more = page * size < len(rows)
        following = f"{self.url}submissions/?" + urlencode({"study": study_id, "page": page + 1,
                                                             "page_size": size})
        return 200, {"results": [s.as_json() for s in chunk], "meta": {"count": len(rows)},
                     "_links": {"next": {"href": following if more else None}}}, {}

    def _get_submission(self, submission_id: str, *, query: Any, body: Any) -> Answer:
        return 200, self._submission(submission_id).as_json(), {}

    def _transition_submission(self, submission_id: str, *, query: Any,
                               body: Any) -> Answer:
        submission = self._submission(submission_id)
        data = body if isinstance(body, dict) else {}
        action = data.get("action")
        target = {"APPROVE": "APPROVED", "REJECT": "REJECTED"}.get(str(action))
        if target is None:
            raise _bad({"action": [f"{action!r} is not a valid action."]})
        if submission.status == target:  # documented as idempotent: a repeat is ignored
            return 200, submission.as_json(), {}
        if submission.status != "AWAITING REVIEW":
            raise _bad(f"Cannot {str(action).lower()} a submission whose status is {submission.status}.")
        if target == "REJECTED":
            _check_rejection(data)
            submission.rejection = {"message": data["message"], "category": data["rejection_category"]}
        submission.status = target
        self._submission_changed(submission)
        self._settle_study(self.state.studies[submission.study_id])
        return 200, submission.as_json(), {}

    def _bulk_approve(self, *, query: Any, body: Any) -> Answer:
        data = body if isinstance(body, dict) else {}
        if data.get("submission_ids"):
            chosen = [self.state.submissions.get(str(i)) for i in data["submission_ids"]]
            unknown = [str(i) for i, s in zip(data["submission_ids"], chosen) if s is None]
        elif data.get("study_id") and data.get("participant_ids"):
            study = self._study(str(data["study_id"]))
            subs = {s.participant_id: s for s in self.state.study_submissions(study.id)}
            chosen = [subs.get(str(p)) for p in data["participant_ids"]]
            unknown = [str(p) for p, s in zip(data["participant_ids"], chosen) if s is None]
        else:
            raise _bad("Give submission_ids, or study_id and participant_ids.")
        if unknown:
            raise _bad({"submission_ids": [f"Unknown: {', '.join(unknown)}"]})
        for submission in chosen:
            if submission is not None and submission.status == "AWAITING REVIEW":
                submission.status = "APPROVED"
                self._submission_changed(submission)
                self._settle_study(self.state.studies[submission.study_id])
        self.state.bulk_approvals += 1
        return 200, "The request to bulk approve has been made successfully.", {}

    def _request_return(self, submission_id: str, *, query: Any, body: Any) -> Answer:
        submission = self._submission(submission_id)
        reasons = (body or {}).get("request_return_reasons") if isinstance(body, dict) else None
        if not isinstance(reasons, list) or not reasons or not all(isinstance(r, str) and r for r in reasons):
            raise _bad({"request_return_reasons": ["Give at least one reason."]})
        if submission.status not in ("ACTIVE", "AWAITING REVIEW"):
            raise _bad(f"Cannot ask for the return of a submission whose status is {submission.status}.")
        submission.return_requested = _now()
        return 200, submission.as_json(), {}

    def _create_bonus(self, *, query: Any, body: Any) -> Answer:
        data = body if isinstance(body, dict) else {}
        study = self._study(str(data.get("study_id") or ""))
        lines = _bonus_lines(str(data.get("csv_bonuses") or ""))
        subs = self.state.study_submissions(study.id)
        by_id = {s.id: s.participant_id for s in subs} | {s.participant_id: s.participant_id for s in subs}
        unknown = [ident for ident, _ in lines if ident not in by_id]
        if unknown:
            raise _bad({"csv_bonuses": [f"These ids did not take part in the study: {', '.join(unknown)}"]})
        paid = [(by_id[ident], amount) for ident, amount in lines]
        amount = sum(cents for _, cents in paid)
        fees = int((Decimal(amount) * BONUS_FEE_RATE).quantize(Decimal(1), rounding=ROUND_HALF_UP))
        bonus = Bonus(_new_id(), study.id, paid, amount, fees)
        self.state.bonuses[bonus.id] = bonus
        return 201, {"id": bonus.id, "study": study.id, "amount": amount, "fees": fees, "vat": 0,
                     "total_amount": amount + fees, "csv_bonuses": data["csv_bonuses"]}, {}

    def _pay_bonus(self, bonus_id: str, *, query: Any, body: Any) -> Answer:
        bonus = self.state.bonuses.get(bonus_id)
        if bonus is None:
            raise ApiError(404, "Not found", "Bonus payment not found.")
        self.pay_calls[bonus_id] += 1  # not idempotent: every call pays the lines again
        self.state.payments.extend((bonus_id, pid, cents) for pid, cents in bonus.lines)
        return 202, "Successfully received bonus payments request.", {}

    def _create_secret(self, *, query: Any, body: Any) -> Answer:
        workspace = str((body or {}).get("workspace_id") or "") if isinstance(body, dict) else ""
        if not workspace:
            raise _bad({"workspace_id": ["This field is required."]})
        self.state.secrets[workspace] = base64.b64encode(secrets.token_bytes(32)).decode()
        return 201, {"id": _new_id(), "value": self.state.secrets[workspace], "workspace_id": workspace}, {}

    def _subscribe(self, *, query: Any, body: Any) -> Answer:
        data = body if isinstance(body, dict) else {}
        missing = {k: ["This field is required."] for k in ("event_type", "target_url", "workspace_id")
                   if not data.get(k)}
        if missing:
            raise _bad(missing)
        if data["event_type"] not in ("study.status.change", "submission.status.change"):
            raise _bad({"event_type": [f"{data['event_type']!r} is not an event type."]})
        if data["workspace_id"] not in self.state.secrets:
            raise _bad("Create a secret for the workspace before subscribing.")
        sub = {"id": _new_id(), "event_type": data["event_type"], "target_url": data["target_url"],
               "workspace_id": data["workspace_id"], "is_enabled": False, "hook_secret": _new_id()}
        self.state.subscriptions[sub["id"]] = sub
        public = {k: v for k, v in sub.items() if k != "hook_secret"}
        return 201, public, {"X-Hook-Secret": sub["hook_secret"]}

    def _confirm(self, subscription_id: str, *, query: Any, body: Any) -> Answer:
        sub = self.state.subscriptions.get(subscription_id)
        if sub is None:
            raise ApiError(404, "Not found", "Subscription not found.")
        given = (body or {}).get("secret") if isinstance(body, dict) else None
        if not given or not hmac.compare_digest(str(given), sub["hook_secret"]):
            raise _bad({"secret": ["The secret does not match this subscription."]})
        sub["is_enabled"] = True
        return 200, {k: v for k, v in sub.items() if k != "hook_secret"}, {}


def _study_problems(data: dict[str, Any]) -> dict[str, list[str]]:
    problems: dict[str, list[str]] = {}
    for name in ("total_available_places", "estimated_completion_time"):
        value = data[name]
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            problems[name] = ["Ensure this value is a whole number of at least 1."]
    if not isinstance(data["reward"], int) or isinstance(data["reward"], bool) or data["reward"] < 0:
        problems["reward"] = ["The reward is a whole number of pence or cents."]
    codes = data["completion_codes"]
    if not isinstance(codes, list) or not all(isinstance(c, dict) and c.get("code") and c.get("code_type")
                                              for c in codes):
        problems["completion_codes"] = ["Each completion code needs a code and a code_type."]
    if data["prolific_id_option"] not in ("question", "url_parameters", "not_required"):
        problems["prolific_id_option"] = ["Not a valid choice."]
    return problems


def _check_rejection(data: dict[str, Any]) -> None:
    if data.get("rejection_category") not in REJECTION_CATEGORIES:
        raise _bad({"rejection_category": ["Choose a rejection category from the list."]})
    if len(str(data.get("message") or "")) < 100:
        raise _bad({"message": ["The rejection message must be at least 100 characters long."]})


def _bonus_lines(text: str) -> list[tuple[str, int]]:
    lines = []
    for number, row in enumerate((r for r in text.splitlines() if r.strip()), start=1):
        parts = [p.strip() for p in row.split(",")]
        try:
            amount = Decimal(parts[1]) if len(parts) == 2 else None
        except InvalidOperation:
            amount = None
        if amount is None or not parts[0] or not amount.is_finite() or amount <= 0:
            raise _bad({"csv_bonuses": [f"Line {number} is not '<id>,<amount>' with an amount above 0."]})
        lines.append((parts[0], int((amount * 100).quantize(Decimal(1), rounding=ROUND_HALF_UP))))
    if not lines:
        raise _bad({"csv_bonuses": ["Give at least one '<id>,<amount>' line."]})
    return lines


_ID = r"([A-Za-z0-9_-]+)"
ROUTES = [
    ("POST", re.compile(r"^/api/v1/studies/$"), "create_study"),
    ("GET", re.compile(rf"^/api/v1/studies/{_ID}/$"), "get_study"),
    ("PATCH", re.compile(rf"^/api/v1/studies/{_ID}/$"), "patch_study"),
    ("POST", re.compile(rf"^/api/v1/studies/{_ID}/transition/$"), "transition_study"),
    ("GET", re.compile(rf"^/api/v1/studies/{_ID}/submissions/$"), "list_submissions"),
    ("GET", re.compile(r"^/api/v1/submissions/$"), "list_submissions"),
    ("POST", re.compile(r"^/api/v1/submissions/bulk-approve/$"), "bulk_approve"),
    ("POST", re.compile(r"^/api/v1/submissions/bonus-payments/$"), "create_bonus"),
    ("GET", re.compile(rf"^/api/v1/submissions/{_ID}/$"), "get_submission"),
    ("POST", re.compile(rf"^/api/v1/submissions/{_ID}/transition/$"), "transition_submission"),
    ("POST", re.compile(rf"^/api/v1/submissions/{_ID}/request-return/$"), "request_return"),
    ("POST", re.compile(rf"^/api/v1/bulk-bonus-payments/{_ID}/pay/$"), "pay_bonus"),
    ("POST", re.compile(r"^/api/v1/hooks/secrets/$"), "create_secret"),
    ("POST", re.compile(r"^/api/v1/hooks/subscriptions/$"), "subscribe"),
    ("POST", re.compile(rf"^/api/v1/hooks/subscriptions/{_ID}/$"), "confirm"),
]


class _Handler(BaseHTTPRequestHandler):
    server_model: ProlificServer
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def do_PATCH(self) -> None:
        self._serve("PATCH")

    def _serve(self, method: str) -> None:
        parsed = urlparse(self.path)
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        model = self.server_model
        with model.lock:
            model.hits.append((method, parsed.path))
        failure = model.take_failure(parsed.path)
        if failure is not None and not failure.after:
            return self._fail(failure)
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            return self._answer(400, _bad("JSON parse error.").body(), {})
        try:
            status, data, headers = model.handle(method, parsed.path, parse_qs(parsed.query), body,
                                                 self.headers.get("Authorization", ""))
        except ApiError as error:
            status, data, headers = error.status, error.body(), error.headers
        if failure is not None:
            return self._fail(failure)
        self._answer(status, data, headers)

    def _fail(self, failure: _Failure) -> None:
        if failure.status == 0:  # the connection dies without an answer
            self.close_connection = True
            self.connection.shutdown(2)
            return
        headers = {} if failure.retry_after is None else {"Retry-After": f"{failure.retry_after:g}"}
        error = ApiError(failure.status, "Injected failure", f"A failure of status {failure.status}.",
                         headers)
        self._answer(failure.status, error.body(), headers)

    def _answer(self, status: int, data: Any, headers: dict[str, str]) -> None:
        payload = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(payload)
