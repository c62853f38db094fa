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
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping

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


@dataclass(frozen=True)
class LinkIds:
    """A link's checked ids: the worker's, their platform session's and the platform study's ("" if none)."""

    worker: str
    session: str
    platform_study: str


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


def link_ids(study: Study, params: Mapping[str, Any]) -> LinkIds:
    """The ids of a worker's link to `study`, checked against the study's `worker_ids`; refuses (one line)
    a link without a worker id, with a placeholder the platform did not fill in, or with an id of the wrong
    form (the session and platform study ids are checked when the link has them)."""
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
