"""The route Prolific's webhooks call: `POST /hooks/prolific`, a study's status change applied to the arena.

A delivery counts only when it is signed with the workspace's webhook secret (`PROLIFIC_WEBHOOK_SECRET`
in the server's environment; `arena.crowd.prolific_api.verify_webhook` checks the signature and that it
was signed recently). Without the secret the route answers 404, a missing or wrong signature 401, a body
that is not a JSON object 400. A `study.status.change` of a study this arena created is recorded and
applied to the arena study's running state (`webapp.sessions.platform_link.on_platform_status`); a
`submission.status.change` is kept as that submission's last known status, shown in the review section,
and a RETURNED or TIMED-OUT one frees the worker's arena places (`on_submission_status`). Other events
and other studies are acknowledged and change nothing.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from arena.runtime.config import Settings
from arena.crowd.prolific_api import (SIGNATURE_HEADER, TIMESTAMP_HEADER, PlatformError, verify_webhook,
                                      webhook_event)
from webapp.services import Services
from webapp.sessions.platform_link import on_platform_status, on_submission_status

WEBHOOK_PATH = "/hooks/prolific"
WEBHOOK_SECRET_ENV = "PROLIFIC_WEBHOOK_SECRET"
STUDY_STATUS_EVENT = "study.status.change"
SUBMISSION_STATUS_EVENT = "submission.status.change"

log = logging.getLogger(__name__)


def _answer(status: int, line: str) -> JSONResponse:
    return JSONResponse({"detail": line}, status_code=status, headers={"Cache-Control": "no-store"})


def _submission_changed(services: Services, event: dict[str, Any]) -> JSONResponse:
    fields = [event.get(k) for k in ("study_id", "resource_id", "status", "participant_id")]
    if not all(isinstance(f, str) and f for f in fields):
        return _answer(400, "a submission.status.change needs a study_id, resource_id, status and "
                            "participant_id")
    applied = on_submission_status(services, *fields)
    return _answer(200, "not one of this arena's studies" if applied is None else applied)


def add_platform_webhook(app: FastAPI, services: Services) -> None:
    """Add the webhook's route to `app` (before the mounts: the one at `/` would answer it)."""

    async def receive(request: Request) -> JSONResponse:
        # Read at each delivery, like the API token: the secret can be rotated without a restart.
        configured = Settings.from_env().prolific_webhook_secret
        secret = configured.get_secret_value() if configured is not None else ""
        if not secret:
            return _answer(404, f"webhooks are off: {WEBHOOK_SECRET_ENV} is not set")
        body = await request.body()
        if not verify_webhook(secret, request.headers.get(TIMESTAMP_HEADER, ""), body,
                              request.headers.get(SIGNATURE_HEADER, "")):
            log.info("refused a Prolific webhook delivery: missing, wrong or stale signature")
            return _answer(401, "missing, wrong or stale signature")
        try:
            event = webhook_event(body)
        except PlatformError as exc:
            return _answer(400, str(exc))
        if event.get("event_type") == SUBMISSION_STATUS_EVENT:
            return _submission_changed(services, event)
        if event.get("event_type") != STUDY_STATUS_EVENT:
            return _answer(200, "ignored")
        study, status = event.get("resource_id"), event.get("status")
        if not isinstance(study, str) or not isinstance(status, str):
            return _answer(400, "a study.status.change needs a resource_id and a status")
        applied = on_platform_status(services, study, status)
        return _answer(200, "not one of this arena's studies" if applied is None else applied or "recorded")

    app.add_api_route(WEBHOOK_PATH, receive, methods=["POST"], include_in_schema=False)
