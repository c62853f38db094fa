"""The bonus each worker of a study earns under its study file's `bonus:` rule.

The rule (`arena.crowd.study.BonusRule`) gives an amount in the workspace currency's major units:
`fixed` for every approved worker (finished every task, no flag), or `per_valid_task` for every valid
task of a worker the study keeps (no flag; a worker who stopped early is still paid for the tasks done).
A flag is the study's exclusion rule: a task faster than `min_task_seconds`, a failed attention or gold
check, or any other check that flags the worker, so a flagged worker earns nothing here and the
researcher decides by hand. `cap` bounds one worker's bonus.

The lines are (platform worker id, amount), as the platform's bonus upload takes them (`id,amount`).
A worker whose platform id is gone (the study was closed) or who is one of the researchers' own preview
walks gets no line: there is nobody to pay.
"""

from __future__ import annotations

from decimal import ROUND_DOWN, Decimal
from typing import TYPE_CHECKING, Iterable, Mapping, Optional

from arena.crowd.study import BonusRule, Study

if TYPE_CHECKING:  # the store imports the study module; a type name only, to keep imports one-way
    from arena.store.studies import Participant

CENT = Decimal("0.01")
COMPLETED = "completed"  # arena.store.studies.COMPLETED


def valid_tasks(study: Study, participant: "Participant") -> int:
    """How many of the worker's finished tasks count: those that took at least the study's minimum time."""
    seconds = participant.data.get("task_seconds", [])
    return sum(1 for s in seconds if float(s) >= study.min_task_seconds)


def kept(participant: "Participant") -> bool:
    """Does the study's exclusion rule keep the worker? (No flag, and not a researcher's preview.)"""
    return not participant.flags and not participant.data.get("preview")


def worker_bonus(study: Study, participant: "Participant") -> Decimal:
    """The worker's bonus under the study's rule (0 when the study has none or the worker earns none)."""
    rule: Optional[BonusRule] = study.bonus
    if rule is None or not kept(participant):
        return Decimal(0)
    if rule.fixed is not None:
        amount = rule.fixed if participant.status == COMPLETED else Decimal(0)
    else:
        amount = (rule.per_valid_task or Decimal(0)) * valid_tasks(study, participant)
    if rule.cap is not None:
        amount = min(amount, rule.cap)
    return amount.quantize(CENT, rounding=ROUND_DOWN)


def bonus_lines(study: Study, participants: Iterable[tuple[str, "Participant"]]) -> list[tuple[str, Decimal]]:
    """(platform worker id, amount) for every worker owed a bonus, in the order given; `participants` are
    (platform worker id, the worker's row) pairs, as `with_platform_ids` makes them. A worker id met twice
    (two rows of one person) is paid once, on its first row that earns."""
    lines: dict[str, Decimal] = {}
    for worker_id, participant in participants:
        worker_id = worker_id.strip()
        if not worker_id or worker_id in lines:
            continue
        amount = worker_bonus(study, participant)
        if amount > 0:
            lines[worker_id] = amount
    return list(lines.items())


def with_platform_ids(participants: Iterable["Participant"],
                      platform_ids: Mapping[str, tuple[str, str]]) -> list[tuple[str, "Participant"]]:
    """Pair store rows with their platform worker ids (`Store.platform_ids`: pseudonym -> (worker id,
    session id)); rows without an id are left out."""
    ids = {pseudonym: worker for pseudonym, (worker, _session) in platform_ids.items() if worker}
    return [(ids[p.pseudonym], p) for p in participants if p.pseudonym in ids]


def total(lines: Iterable[tuple[str, Decimal]]) -> Decimal:
    return sum((amount for _, amount in lines), Decimal(0))
