"""A study's results for its researchers: participants, quota fill, payment sheet, leaderboard, export.

Workers flagged by a quality check (`webapp.sessions.study`) are listed with their
flags and are in the payment sheet (the researcher decides), but their
dialogues and votes are left out of the study's leaderboard and of its
export unless asked for.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Optional

import pandas as pd

from arena.corpus.bundle import ExportFilter, ExportResult, export_bundle
from arena.corpus.records import PSEUDONYM_PREFIX
from arena.crowd.study import Study, parse_study
from arena.dialogue import utc_now
from arena.store import Participant
from arena.crowd.bonuses import bonus_lines
from arena.crowd.counting import visibility
from arena.crowd.known_answers import known_answer_accuracy
from webapp.leaderboard.table import LeaderboardOptions, compute_leaderboard
from webapp.services import Services

PARTICIPANT_COLUMNS = ["pseudonym", "status", "step", "tasks done", "seconds on tasks", "flags",
                       "known-answer accuracy", "started", "completed", "version"]
APPROVE, REJECT, UNFINISHED = "approve", "reject", "unfinished"  # the arena's verdict on a worker


@dataclass(frozen=True)
class PlatformSheet:
    """How one platform names its ids and its submission statuses. `submitted`: a finished submission
    waiting for the researcher; `after`: the status the arena's verdict gives it once uploaded."""

    id_columns: tuple[str, str, str]  # the worker, the submission, the platform's study
    submitted: str
    after: dict[str, str]
    returned: str = ""  # an unfinished worker the arena asked to return (every place was taken)
    timed_out: str = ""
    active: str = ""


# Prolific names a finished submission AWAITING REVIEW until the researcher approves or rejects it; MTurk's
# assignment statuses are Submitted, Approved and Rejected (an unfinished assignment is not listed there).
SHEETS = {
    "prolific": PlatformSheet(("PROLIFIC_PID", "SESSION_ID", "STUDY_ID"), "AWAITING REVIEW",
                              {APPROVE: "APPROVED", REJECT: "REJECTED"}, returned="RETURNED",
                              timed_out="TIMED-OUT", active="ACTIVE"),
    "mturk": PlatformSheet(("workerId", "assignmentId", "hitId"), "Submitted",
                           {APPROVE: "Approved", REJECT: "Rejected"}),
}
SHEET_COLUMNS = ["status", "status_after_upload", "arena_decision", "reason", "known_answer_accuracy",
                 "completion_code", "pseudonym"]


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
                     "flags": "; ".join(p.flags), "known-answer accuracy": _accuracy_text(p),
                     "started": p.started_at, "completed": p.completed_at or "", "version": p.study_version})
    return pd.DataFrame(rows, columns=PARTICIPANT_COLUMNS)


def _accuracy_text(p: Participant) -> str:
    """The worker's share of right verdicts on known-answer tasks ("" before any)."""
    value = known_answer_accuracy(p)
    return "" if value is None else f"{value:.2f}"


def quota_table(services: Services, study: Study) -> pd.DataFrame:
    fill = services.store.cell_fill(study)
    return pd.DataFrame([{"cell": cell, "done": n["done"], "under way": n["reserved"], "quota": n["quota"]}
                         for cell, n in fill.items()], columns=["cell", "done", "under way", "quota"])


def _cell(text: str) -> str:
    # "=", "+", "-", "@" could start a formula in a spreadsheet: flags quote the worker's answers.
    return ("'" + text) if text[:1] in ("=", "+", "-", "@") else text


@dataclass(frozen=True)
class SheetRow:
    """One worker in the platform's terms: their ids, the arena's verdict and why."""

    worker: str
    session: str
    platform_study: str
    decision: str
    reason: str
    person: Participant


def _decision(p: Participant) -> tuple[str, str]:
    if p.status != "completed":
        return UNFINISHED, f"stopped at: {p.data.get('step', '')}"
    return (REJECT, "; ".join(p.flags)) if p.flags else (APPROVE, "")


def _now_status(sheet: PlatformSheet, study: Study, row: SheetRow) -> str:
    """The submission's status on the platform as far as the arena can tell (the API tells it for sure)."""
    if row.decision != UNFINISHED:
        return sheet.submitted
    p = row.person
    if p.data.get("step") == "full":
        return sheet.returned
    # The worker's last step (every step saves their row) longer ago than a task's place is ever held.
    last = p.updated_at or p.started_at
    idle = (utc_now() - datetime.fromisoformat(last.replace("Z", "+00:00"))).total_seconds() if last else 0.0
    return sheet.timed_out if idle > study.abandon_after_minutes * 60 else sheet.active


def sheet_rows(services: Services, study_id: str) -> tuple[Study, list[SheetRow]]:
    """Every worker of the study with their platform ids (kept for this alone, gone once the study is
    closed) and the arena's verdict: approve (completed, no failed check), reject (a failed check, which
    the reason names) or unfinished (the step they stopped at)."""
    _, study, _ = newest_study(services, study_id)
    ids = services.store.platform_ids(study_id)
    rows = []
    for p in services.store.list_participants(study_id):
        worker, session = ids.get(p.pseudonym, ("", ""))
        platform = p.data.get("platform") or {}
        decision, reason = _decision(p)
        rows.append(SheetRow(worker, session, str(platform.get("STUDY_ID") or platform.get("hitId") or ""),
                             decision, reason, p))
    return study, rows


def payment_sheet(services: Services, study_id: str, folder: Path) -> Path:
    """The full sheet: one row per worker, with the platform's own column names and statuses (`status` now,
    `status_after_upload` once the approve and reject lists are uploaded), the arena's verdict in a column
    of its own, the known-answer accuracy, the code they were shown and their pseudonym."""
    study, rows = sheet_rows(services, study_id)
    sheet = SHEETS[study.platform]
    path = Path(folder) / f"{study_id}-sheet.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow([*sheet.id_columns, *SHEET_COLUMNS])
        for row in rows:
            now = _now_status(sheet, study, row)
            code = (study.completion_code or "") if row.decision != UNFINISHED else ""
            writer.writerow([_cell(row.worker), _cell(row.session), _cell(row.platform_study), now,
                             sheet.after.get(row.decision, now), row.decision, _cell(row.reason),
                             _accuracy_text(row.person), code, row.person.pseudonym])
    return path


def _approval_id(study: Study, row: SheetRow) -> str:
    # Prolific approves a participant in a study; MTurk approves an assignment.
    return row.session if study.platform == "mturk" else row.worker


def payment_files(services: Services, study_id: str, folder: Path) -> list[Path]:
    """What the researcher uploads to the platform when reviewing without its API: the approve list (one id
    per line, as the platform's bulk approve takes them), the reject list with each reason, the bonus lines
    (`id,amount`, from the study's bonus rule) and the full sheet. Workers whose ids are gone (a closed study) are in the sheet only."""
    study, rows = sheet_rows(services, study_id)
    folder = Path(folder)
    approve = folder / f"{study_id}-approve.txt"
    approve.write_text("".join(f"{_approval_id(study, r)}\n" for r in rows
                               if r.decision == APPROVE and _approval_id(study, r)), encoding="utf-8")
    reject = folder / f"{study_id}-reject.csv"
    with reject.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["id", "reason"])
        writer.writerows([_cell(_approval_id(study, r)), _cell(r.reason)] for r in rows
                         if r.decision == REJECT and _approval_id(study, r))
    return [approve, reject, _bonus_file(study, rows, folder), payment_sheet(services, study_id, folder)]


def _bonus_file(study: Study, rows: list[SheetRow], folder: Path) -> Path:
    """`id,amount` for each worker the study's bonus rule pays (none without a rule), as Prolific's bulk
    bonus takes the lines; MTurk pays a bonus on an assignment, which a third column names."""
    pairs = [(r.worker, r.person) for r in rows if r.worker]
    assignments = {r.worker: r.session for r in rows if r.worker}
    path = folder / f"{study.id}-bonus.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        mturk = study.platform == "mturk"
        writer.writerow(["id", "amount", *(["assignmentId"] if mturk else [])])
        for worker, amount in bonus_lines(study, pairs):
            writer.writerow([_cell(worker), f"{amount:.2f}", *([assignments[worker]] if mturk else [])])
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
