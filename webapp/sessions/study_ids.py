"""The platform ids a study link carries, checked before they take anything.

A paid place must go to a real worker: a made-up id in a hand-typed link would
take a place, finish and be approved in the payment sheet. So a study takes,
by default, only Prolific's own ids: Prolific names participants, studies and
submissions (the link's SESSION_ID) by 24 hexadecimal characters, and fills
them into the link it opens for each worker. A study whose file says
`worker_ids: any` takes any printable id of up to `MAX_ID_CHARS` (another
platform's); the researchers' preview needs no worker id at all.

A value the platform did not fill in (the link pasted from the Studies tab and
opened as it is: `{{%PROLIFIC_PID%}}`, or another tool's `${workerId}`) is
refused under every setting, with one line saying to open the study from the
platform: taken as an id, it would make one worker that everyone opening the
same link shares.

A study with `platform: mturk` reads Amazon Mechanical Turk's parameters
instead: `workerId`, `assignmentId` (the submission, which binds the worker as
Prolific's SESSION_ID does), `hitId` and `turkSubmitTo` (where the finished
task is posted, MTurk's own host only). MTurk opens the page with
`assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE` while a worker only previews the
HIT: that visit takes no place and stores nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping
from urllib.parse import urlencode

from arena.crowd.study import Study
from webapp.sessions.refusal import refuse

WORKER_ID_PARAMS = ("PROLIFIC_PID", "worker_id")  # the first one present names the worker
SESSION_PARAM, PLATFORM_STUDY_PARAM = "SESSION_ID", "STUDY_ID"
MAX_ID_CHARS = 128
PROLIFIC_ID = re.compile(r"[0-9a-f]{24}")
# How a link's value looks when nothing filled it in: Prolific's {{%NAME%}}, and the ${name}, [%name%] and
# %name% of other recruiting and survey tools. None of these characters is in any platform's real ids.
PLACEHOLDER = re.compile(r"[{}%]|^\$|^\[.*\]$")

NO_WORKER_ID = "This study link has no worker id; please open it from the platform that sent you here."
NOT_VALID = ("The {name} in this link is not valid; please open the study from the platform that sent you "
             "here.")
NOT_PROLIFIC = ("The {name} in this link is not a Prolific id (24 digits and lower-case letters a-f); please "
                "open the study from Prolific.")
PLACEHOLDER_LINE = ("The {name} in this link is the platform's placeholder, not a worker's id: the "
                    "link works only when opened from the platform, which fills in each worker's own ids "
                    "(researchers: try the study with the preview link of the Studies tab).")


# MTurk's ids are upper-case letters and digits: a worker's starts with "A" (13 to 14 characters today), an
# assignment's and a HIT's are 30 characters; the bounds below leave room for longer ones.
MTURK_WORKER_ID = re.compile(r"A[A-Z0-9]{5,63}")
MTURK_TASK_ID = re.compile(r"[A-Z0-9]{10,64}")
MTURK_PREVIEW = "ASSIGNMENT_ID_NOT_AVAILABLE"
# Where MTurk may ask the finished task to be posted: its live site and its sandbox, nowhere else.
MTURK_HOSTS = ("https://www.mturk.com", "https://workersandbox.mturk.com")
MTURK_SUBMIT_PATH = "/mturk/externalSubmit"

NOT_MTURK = ("The {name} in this link is not one MTurk gives (upper-case letters and digits); please open "
             "the task from Amazon Mechanical Turk.")
NOT_MTURK_HOST = ("The turkSubmitTo in this link is not Amazon Mechanical Turk's; please open the task from "
                  "MTurk.")
MTURK_PREVIEWING = ("You are previewing this task on MTurk: accept the HIT to begin (no place is taken until "
                    "you do).")


@dataclass(frozen=True)
class LinkIds:
    """A link's checked ids: the worker's, their platform session's (Prolific's SESSION_ID, MTurk's
    assignmentId) and the platform study's (Prolific's STUDY_ID, MTurk's hitId); "" if none. `submit_to`:
    MTurk's host the finished task is posted to."""

    worker: str
    session: str
    platform_study: str
    submit_to: str = ""


def _value(params: Mapping[str, Any], name: str) -> str:
    return str(params.get(name) or "").strip()


def _checked(study: Study, name: str, value: str) -> str:
    if PLACEHOLDER.search(value):
        raise refuse(PLACEHOLDER_LINE.format(name=name))
    if len(value) > MAX_ID_CHARS or not value.isprintable():
        raise refuse(NOT_VALID.format(name=name))
    # Prolific writes its ids in lower case only: an upper-case copy is refused rather than taken for a second
    # worker (the pseudonym is of the id as written).
    if study.worker_ids == "prolific" and not PROLIFIC_ID.fullmatch(value):
        raise refuse(NOT_PROLIFIC.format(name=name))
    return value


def _mturk_id(name: str, value: str, form: re.Pattern[str]) -> str:
    if PLACEHOLDER.search(value):
        raise refuse(PLACEHOLDER_LINE.format(name=name))
    if not form.fullmatch(value):
        raise refuse(NOT_MTURK.format(name=name))
    return value


def mturk_ids(params: Mapping[str, Any]) -> LinkIds:
    """The checked ids of an MTurk link; refuses (one line) MTurk's preview, a missing or malformed id, and a
    submit address that is not MTurk's."""
    if _value(params, "assignmentId") == MTURK_PREVIEW:
        raise refuse(MTURK_PREVIEWING)
    if not _value(params, "workerId"):
        raise refuse(NO_WORKER_ID)
    worker = _mturk_id("workerId", _value(params, "workerId"), MTURK_WORKER_ID)
    assignment, hit = (_mturk_id(k, _value(params, k), MTURK_TASK_ID) for k in ("assignmentId", "hitId"))
    submit_to = _value(params, "turkSubmitTo").rstrip("/")
    if submit_to not in MTURK_HOSTS:
        raise refuse(NOT_MTURK_HOST)
    return LinkIds(worker=worker, session=assignment, platform_study=hit, submit_to=submit_to)


def mturk_submit_url(submit_to: str, assignment: str, **fields: str) -> str:
    """The address of MTurk's external-submit form for a finished assignment, its fields in the query (the
    study page posts them as the form's fields); "" when the host is not MTurk's."""
    if submit_to.rstrip("/") not in MTURK_HOSTS or not MTURK_TASK_ID.fullmatch(assignment):
        return ""
    return f"{submit_to.rstrip('/')}{MTURK_SUBMIT_PATH}?{urlencode({'assignmentId': assignment, **fields})}"


def link_ids(study: Study, params: Mapping[str, Any]) -> LinkIds:
    """The ids of a worker's link to `study`, checked against the study's `worker_ids`; refuses (one line)
    a link without a worker id, with a placeholder the platform did not fill in, or with an id of the wrong
    form (the session and platform study ids are checked when the link has them). An MTurk study reads
    MTurk's parameters (`mturk_ids`)."""
    if study.platform == "mturk":
        return mturk_ids(params)
    name = next((k for k in WORKER_ID_PARAMS if _value(params, k)), None)
    # A placeholder anywhere in the link is the researcher's pasted link, whichever id is filled in.
    for other in (*WORKER_ID_PARAMS, SESSION_PARAM, PLATFORM_STUDY_PARAM):
        if PLACEHOLDER.search(_value(params, other)):
            raise refuse(PLACEHOLDER_LINE.format(name=other))
    if name is None:
        raise refuse(NO_WORKER_ID)
    worker = _checked(study, name, _value(params, name))
    session, platform_study = (_checked(study, k, _value(params, k)) if _value(params, k) else ""
                               for k in (SESSION_PARAM, PLATFORM_STUDY_PARAM))
    return LinkIds(worker=worker, session=session, platform_study=platform_study)
