"""The study file's bonus rule and the lines it gives: fixed per approved worker, or per valid task, with a
cap; flagged workers, previews and workers without a platform id earn nothing."""

from __future__ import annotations

from decimal import Decimal

import pytest

from arena.crowd.bonuses import bonus_lines, total, with_platform_ids, worker_bonus
from arena.crowd.study import StudyError, parse_study
from arena.store.studies import Participant
from study_support import study_yaml


def _worker(name: str, seconds: list[float], *, done: bool = True, flags: tuple[str, ...] = (),
            preview: bool = False) -> Participant:
    data = {"task_seconds": seconds, "flags": list(flags), **({"preview": True} if preview else {})}
    return Participant(study_id="pilot", pseudonym=name, study_version=1,
                       status="completed" if done else "active", data=data)


def test_fixed_bonus_goes_to_finished_unflagged_workers_only():
    study = parse_study(study_yaml(bonus={"fixed": 0.5}))
    rows = [("p1", _worker("a", [70, 80])), ("p2", _worker("b", [70], done=False)),
            ("p3", _worker("c", [5, 80], flags=("task 1 took 5 s (minimum 0 s)",))),
            ("p4", _worker("d", [70, 80], preview=True))]
    assert bonus_lines(study, rows) == [("p1", Decimal("0.50"))]


def test_per_valid_task_counts_tasks_over_the_minimum_time_and_respects_the_cap():
    study = parse_study(study_yaml(bonus={"per_valid_task": "0.30", "cap": "0.50"}, min_task_seconds=60))
    assert worker_bonus(study, _worker("a", [61.0])) == Decimal("0.30")
    assert worker_bonus(study, _worker("b", [61.0, 90.0])) == Decimal("0.50")  # 0.60 capped
    assert worker_bonus(study, _worker("c", [61.0], done=False)) == Decimal("0.30")  # paid for tasks done
    lines = bonus_lines(study, [("x", _worker("a", [61.0])), ("x", _worker("b", [61.0, 90.0])),
                                ("", _worker("e", [61.0]))])
    assert lines == [("x", Decimal("0.30"))] and total(lines) == Decimal("0.30")


def test_no_rule_no_lines_and_ids_paired_from_the_store_mapping():
    rows = [_worker("a", [70, 80]), _worker("b", [70, 80])]
    paired = with_platform_ids(rows, {"a": ("pid-a", "s1"), "b": ("", "")})
    assert [w for w, _ in paired] == ["pid-a"]
    assert bonus_lines(parse_study(study_yaml()), paired) == []
    fixed = parse_study(study_yaml(bonus={"fixed": "1.25"}))
    assert bonus_lines(fixed, paired) == [("pid-a", Decimal("1.25"))]


@pytest.mark.parametrize("bonus", [{}, {"fixed": 1, "per_valid_task": 1}, {"fixed": -1}, {"fixed": "0.001"},
                                   {"fixed": "lots"}, {"per_valid_task": 1, "extra": 2}])
def test_a_bad_bonus_block_is_refused_with_one_line_naming_it(bonus):
    with pytest.raises(StudyError) as err:
        parse_study(study_yaml(bonus=bonus))
    assert str(err.value).startswith("study file: bonus") and "\n" not in str(err.value)
