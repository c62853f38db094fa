"""A study's results for its researchers: participants, quota fill, payment sheet, leaderboard, export.

Workers flagged by a quality check (`webapp.sessions.study`) are listed with their
flags and are in the payment sheet (the researcher decides), but their
dialogues and votes are left out of the study's leaderboard and of its
export unless asked for.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any, Optional

import pandas as pd

from arena.corpus.bundle import ExportFilter, ExportResult, export_bundle
from arena.corpus.records import PSEUDONYM_PREFIX
from arena.crowd.study import Study, parse_study
from arena.store import Participant
from arena.crowd.counting import visibility
from webapp.leaderboard.table import LeaderboardOptions, compute_leaderboard
from webapp.services import Services

PARTICIPANT_COLUMNS = ["pseudonym", "status", "step", "tasks done", "seconds on tasks", "flags", "started",
                       "completed", "version"]
# Prolific's bulk approve/reject takes the participant ids with a decision; the session id tells two
# submissions of one worker apart, and the pseudonym joins the sheet to the exports.
PAYMENT_COLUMNS = ["PROLIFIC_PID", "SESSION_ID", "status", "reason", "completion_code", "pseudonym"]
APPROVE, REJECT, NO_SUBMISSION = "APPROVED", "REJECTED", "NOT COMPLETED"


def newest_study(services: Services, study_id: str) -> tuple[int, Study, str]:
    found = services.store.study_text(study_id)
    if found is None:
        raise KeyError(f"no study {study_id!r}")
    return found[0], parse_study(found[1]), found[1]


def participants_table(services: Services, study_id: str) -> pd.DataFrame:
    rows = []
    for p in services.store.list_participants(study_id):
        seconds = p.data.get("task_seconds", [])
        rows.append({"pseudonym": p.pseudonym, "status": p.status, "step": p.data.get("step", ""),
                     "tasks done": len(seconds), "seconds on tasks": round(sum(seconds), 1),
                     "flags": "; ".join(p.flags), "started": p.started_at, "completed": p.completed_at or "",
                     "version": p.study_version})
    return pd.DataFrame(rows, columns=PARTICIPANT_COLUMNS)


def quota_table(services: Services, study: Study) -> pd.DataFrame:
    fill = services.store.cell_fill(study)
    return pd.DataFrame([{"cell": cell, "done": n["done"], "under way": n["reserved"], "quota": n["quota"]}
                         for cell, n in fill.items()], columns=["cell", "done", "under way", "quota"])


def _code(study: Study, p: Participant) -> str:
    return (study.completion_code or "") if p.status == "completed" else ""


def _cell(text: str) -> str:
    # "=", "+", "-", "@" could start a formula in a spreadsheet: flags quote the worker's answers.
    return ("'" + text) if text[:1] in ("=", "+", "-", "@") else text


def payment_sheet(services: Services, study_id: str, folder: Path) -> Path:
    """A CSV for the platform's bulk approve and reject: each worker's platform ids (kept for this alone,
    gone once the study is closed), the decision the checks suggest (APPROVED: completed without a flag;
    REJECTED: completed with a failed check, the reason given; NOT COMPLETED: nothing to approve yet), the
    code they were shown and their pseudonym. The researcher reviews it before uploading."""
    _, study, _ = newest_study(services, study_id)
    ids = services.store.platform_ids(study_id)
    path = Path(folder) / f"{study_id}-payments.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(PAYMENT_COLUMNS)
        for p in services.store.list_participants(study_id):
            worker, session = ids.get(p.pseudonym, ("", ""))
            done = p.status == "completed"
            status = (REJECT if p.flags else APPROVE) if done else NO_SUBMISSION
            reason = "; ".join(p.flags) if p.flags else ("" if done else f"stopped at: {p.data.get('step', '')}")
            writer.writerow([_cell(worker), _cell(session), status, _cell(reason), _code(study, p), p.pseudonym])
    return path


def close_study(services: Services, study_id: str) -> int:
    """Close the study for good: no new worker or task, and the workers' platform ids deleted (pay
    everyone first: the payment sheet then shows pseudonyms only). Returns how many workers' ids went."""
    services.store.set_study_state(study_id, "closed")
    return services.store.forget_platform_ids(study_id)


def lookup_workers(services: Services, study_id: str, worker_ids: str) -> pd.DataFrame:
    """The platform's worker ids (one per line or separated by commas, as the researcher pastes them from
    the platform's submissions list) against the study's rows: the ids are turned into pseudonyms here
    and never stored, so paying the right people needs no raw id in the database."""
    from webapp.sessions.study import worker_pseudonym

    people = {p.pseudonym: p for p in services.store.list_participants(study_id)}
    rows = []
    for worker in dict.fromkeys(w.strip() for w in worker_ids.replace(",", "\n").splitlines() if w.strip()):
        p = people.get(worker_pseudonym(services, study_id, worker))
        rows.append({"worker id": worker, "pseudonym": p.pseudonym if p else "",
                     "completed": "yes" if p is not None and p.status == "completed" else "no",
                     "flags": "; ".join(p.flags) if p else "never started"})
    return pd.DataFrame(rows, columns=["worker id", "pseudonym", "completed", "flags"])


def flagged_users(services: Services, study_id: str) -> set[str]:
    """Stored user ids (`pseudonym:<...>`) of the study's flagged workers."""
    return {PSEUDONYM_PREFIX + p.pseudonym for p in services.store.list_participants(study_id) if p.flags}


def study_leaderboard(services: Services, study_id: str) -> pd.DataFrame:
    """The study's own leaderboard: its crowd only, flagged workers left out, with the public board's
    minimum battles before a rating shows and its intervals."""
    store = services.store
    seen = visibility(store, store.list_votes())
    dialogues = seen.counted_labels(seen.dialogues(store.list_dialogues(user_kind="human")))
    votes = seen.votes(store.list_votes(user_kind="human"))
    return compute_leaderboard(dialogues, votes, user_kind="human", crowd=study_id,
                               left_out_users=flagged_users(services, study_id),
                               options=LeaderboardOptions.from_settings(services.settings))


def export_study(services: Services, study_id: str, folder: Path, *, include_flagged: bool = False,
                 zip_name: Optional[str] = None) -> ExportResult:
    """The study's data alone, with its study files (every version the data ran under, and the newest) and
    the versions in the card."""
    version, study, text = newest_study(services, study_id)
    if study.completion_code:  # the workers' proof of completion stays out of files that may be shared
        text = text.replace(study.completion_code, "LEFT-OUT")
    flt = ExportFilter(crowd=study_id,
                       left_out_users=frozenset() if include_flagged else frozenset(flagged_users(services, study_id)))
    salt = services.settings.pseudonym_salt
    return export_bundle(services.store, folder, flt, salt=salt.get_secret_value() if salt else None,
                         zip_name=zip_name, extras={f"study-{study_id}-v{version}.yaml": text})


def summary(services: Services, study_id: str) -> dict[str, Any]:
    people = services.store.list_participants(study_id)
    return {"participants": len(people), "completed": sum(p.status == "completed" for p in people),
            "flagged": sum(bool(p.flags) for p in people)}
