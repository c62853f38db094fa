"""New study workers per browser session and per address.

A study link takes any worker id, so a script could enter a study under
many made-up ids from one browser or one network, each holding quota cells
for an hour. New workers are counted like votes (`webapp.protection.vote_limits`,
in the store, atomically): at most `ARENA_MAX_STUDY_WORKERS_PER_USER` new
workers per session and `ARENA_MAX_STUDY_WORKERS_PER_IP` per address within
`ARENA_LIMIT_WINDOW`. A returning worker (a reload, another tab) is never
counted again.
"""

from __future__ import annotations

from typing import Any, Optional

from arena.store import Admitted, Cap, CapReached
from webapp.protection.vote_limits import Admission, LimitReached, origin_keys_of

STUDY_NEW_WORKERS = ("Too many new workers came from your network in the last minute; "
                     "please try again in a minute.")


def admit_new_worker(services: Any, request: Any, *, study: Any = None, address: Optional[str] = None) -> Admission:
    """Count one new study worker for the request's session and address, and for the `study`'s own limit
    per address and minute (`study.new_workers_per_minute`), or raise LimitReached counting nothing; give
    the admission back (`with admission:`) when the worker's row was not stored. `address` stands for the
    request's address where there is no request (a researcher's or a test's own call)."""
    s = services.settings
    caps = []
    place = address
    if request is not None:
        user_key, ip_key = origin_keys_of(services, request)
        caps += [Cap("study-worker:user", user_key, max(0, s.max_study_workers_per_user), s.limit_window_s),
                 Cap("study-worker:ip", ip_key, max(0, s.max_study_workers_per_ip), s.limit_window_s)]
        place = ip_key
    if study is not None and place:
        caps.append(Cap("study-worker:study-ip", f"{study.id}|{place}", study.new_workers_per_minute, 60.0))
    if not caps:
        return Admission(services.store, Admitted((), ()))
    try:
        return Admission(services.store, services.store.admit_capped(caps))
    except CapReached as exc:
        if exc.cap.scope == "study-worker:study-ip":
            raise LimitReached(STUDY_NEW_WORKERS) from None
        where = "from this network" if exc.cap.scope.endswith(":ip") else "from this browser"
        raise LimitReached(f"Too many new participants {where} have started studies recently; "
                           "please try again later.") from None
