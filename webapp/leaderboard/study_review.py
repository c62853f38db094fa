"""A study's submissions on the recruiting platform joined to the arena's workers, and its bonus preview.

The platform lists submissions by its participant id; the arena knows its workers by pseudonym, with
their platform ids in the researcher-only table the payment sheet reads (`Store.platform_ids`). The join
is made here, on the page's request, and nothing of it is stored. The review and payment calls
themselves are `arena.crowd.platform_review`'s.
"""

from __future__ import annotations

from collections import Counter
from decimal import Decimal
from typing import Iterable, Optional

import pandas as pd

from arena.crowd.bonuses import bonus_lines, total, with_platform_ids
from arena.crowd.platform_review import DONE_WORDS, unpaid_lines
from arena.crowd.prolific_api import MIN_REJECTION_MESSAGE, PlatformSubmission
from webapp.leaderboard.study_results import newest_study, participants_table
from webapp.services import Services

# The participants table's columns that describe a worker's work (whatever other checks add, such as an
# accuracy, comes along); its own status and times are the arena's, shown beside the platform's.
_NOT_JOINED = ("status", "step", "started", "completed", "version")
SUBMISSION_HEAD = ["submission", "Prolific id", "Prolific status"]
BONUS_COLUMNS = ["Prolific id", "pseudonym", "amount"]


def platform_study_id(services: Services, study_id: str, typed: Optional[str] = "") -> str:
    """The study's id on the platform: the one typed (when given), else the stored link of a study created
    from the Studies page, else the one the workers' links carried most often; "" when none is known.
    (`typed` is None when the field was never drawn, as at a page's load.)"""
    if (typed or "").strip():
        return (typed or "").strip()
    link = services.store.platform_link(study_id)
    if link is not None:
        return link.platform_study_id
    seen = Counter(str((p.data.get("platform") or {}).get("STUDY_ID") or "")
                   for p in services.store.list_participants(study_id))
    seen.pop("", None)
    return seen.most_common(1)[0][0] if seen else ""


def _verdict(row: pd.Series) -> str:
    if row.get("flags"):
        return "reject"
    return "approve" if row.get("arena status") == "completed" else "unfinished"


def submissions_view(services: Services, study_id: str,
                     submissions: Iterable[PlatformSubmission]) -> pd.DataFrame:
    """One row per platform submission: its id, participant and status, the arena worker's columns of the
    participants table (blank for a participant the arena never saw), the arena's verdict (approve,
    reject: a check flagged them, unfinished) and what was already sent from here."""
    people = participants_table(services, study_id)
    ids = services.store.platform_ids(study_id)
    worker_of = {pseudonym: worker for pseudonym, (worker, _) in ids.items()}
    people.insert(0, "Prolific id", people["pseudonym"].map(worker_of).fillna(""))
    people = people.rename(columns={"status": "arena status"}).drop(
        columns=[c for c in _NOT_JOINED if c != "status" and c in people.columns])
    sent: dict[str, list[str]] = {}
    for (submission_id, action), claim in services.store.platform_transitions(study_id).items():
        if claim.state == "done":
            sent.setdefault(submission_id, []).append(DONE_WORDS.get(action, action.lower()))
    rows = pd.DataFrame([{"submission": s.id, "Prolific id": s.participant_id, "Prolific status": s.status}
                         for s in submissions], columns=SUBMISSION_HEAD)
    joined = rows.merge(people[people["Prolific id"] != ""], on="Prolific id", how="left")
    joined["arena verdict"] = [_verdict(r) if isinstance(r.get("pseudonym"), str) else "not in the arena"
                               for _, r in joined.iterrows()]
    joined["sent from here"] = joined["submission"].map(lambda s: ", ".join(sent.get(s, [])))
    # A participant the arena never saw has no worker columns: blank, not NaN (the columns become text).
    return joined.drop(columns=["arena status"]).astype(object).fillna("")


def rejection_message(flags: Iterable[str]) -> str:
    """A rejection message from the reasons the checks gave (the platform wants at least 100 characters):
    what was found, and what the participant may do about it."""
    found = "; ".join(dict.fromkeys(f.strip() for f in flags if f and f.strip()))
    if not found:
        return ""
    text = (f"Thank you for taking part. We cannot approve this submission because our quality checks "
            f"found: {found}. If you think this is a mistake, please message us through Prolific.")
    return text if len(text) >= MIN_REJECTION_MESSAGE else text + " We read every message we receive."


def bonus_preview(services: Services, study_id: str) -> tuple[pd.DataFrame, list[tuple[str, Decimal]], str]:
    """The bonus lines still to pay under the study file's rule (workers in a payment already left out),
    as a table (Prolific id, pseudonym, amount), the lines, and one line with the count and total."""
    _, study, _ = newest_study(services, study_id)
    if study.bonus is None:
        return pd.DataFrame(columns=BONUS_COLUMNS), [], "The study file has no `bonus:` rule: nothing to pay."
    ids = services.store.platform_ids(study_id)
    pairs = with_platform_ids(services.store.list_participants(study_id), ids)
    pseudonym_of = {worker: p.pseudonym for worker, p in pairs}
    owed = bonus_lines(study, pairs)
    lines = unpaid_lines(services.store, study_id, owed)
    table = pd.DataFrame([{"Prolific id": w, "pseudonym": pseudonym_of.get(w, ""), "amount": f"{a:.2f}"}
                          for w, a in lines], columns=BONUS_COLUMNS)
    left_out = len(owed) - len(lines)
    line = (f"{len(lines)} worker(s), total {total(lines):.2f} (before the platform's fees)"
            + (f"; {left_out} already in a payment, left out." if left_out else "."))
    return table, lines, line


def selected_flags(view: Optional[pd.DataFrame], submission_ids: Iterable[str]) -> list[str]:
    """The flags of the chosen submissions' workers, as the view shows them."""
    if view is None or view.empty or "flags" not in view.columns:
        return []
    chosen = view[view["submission"].isin(list(submission_ids))]
    return [flag for text in chosen["flags"] for flag in str(text).split("; ") if flag]
