"""SRRR and SR under the arena's reading and UserSimCRS's, on IARD's 259 dialogues (its own acts).

    python benchmarks/srrr_readings.py [--iard PATH]

The two readings differ in two rules (evaluators/metrics_usersimcrs.py): where rounds start (at a
Recommend, or from the start of the dialogue, the piece before the first Recommend being a round)
and what settles a round (an acceptance anywhere in it, or the user's last decision). Beside the
two readings the table shows each rule changed alone, so the share of each in the gap is visible.
Prints the Markdown table that docs/metrics.md holds (tests/acts/test_srrr_readings.py compares them).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable, Sequence

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.dialogue import Dialogue  # noqa: E402
from evaluators import metrics as M  # noqa: E402
from evaluators import metrics_usersimcrs as U  # noqa: E402
from evaluators.acts.schema import is_acceptance, is_rejection  # noqa: E402

IARD = ROOT.parent / "shared" / "data" / "iard" / "formatted_IARD_annotated_partially.json"

Spans = Callable[[Dialogue], list[tuple[int, int]]]


def _from_recommend(d: Dialogue) -> list[tuple[int, int]]:
    return [(r.start, r.end) for r in M.recommendation_rounds(d)]


def _from_start(d: Dialogue) -> list[tuple[int, int]]:
    return [(r.start, r.end) for r in U.usersimcrs_rounds(d)]


def _any_acceptance(d: Dialogue, start: int, end: int) -> bool:
    return any(is_acceptance(u) for u in d.utterances[start:end])


def _last_decision(d: Dialogue, start: int, end: int) -> bool:
    accepted = False
    for u in d.utterances[start:end]:
        if is_acceptance(u):
            accepted = True
        elif is_rejection(u):
            accepted = False
    return accepted


# (reading, metric names, where rounds start, what settles a round)
READINGS: list[tuple[str, str, Spans, Callable[[Dialogue, int, int], bool]]] = [
    ("arena (default)", "`srrr`, `sr`", _from_recommend, _any_acceptance),
    ("UserSimCRS", "`srrr_usersimcrs`, `sr_usersimcrs`", _from_start, _last_decision),
    ("rounds from the start only", "-", _from_start, _any_acceptance),
    ("last decision only", "-", _from_recommend, _last_decision),
]


def _values(d: Dialogue, spans: Spans, settles) -> tuple[float, float, int]:
    rounds = spans(d)
    won = sum(settles(d, start, end) for start, end in rounds)
    return (won / len(rounds) if rounds else 0.0), (1.0 if won else 0.0), len(rounds)


def readings_table(dialogues: Sequence[Dialogue]) -> str:
    """One row per reading: mean SRRR, mean SR, rounds, and the dialogues whose SRRR/SR differ from the
    arena's. The two named readings are computed by the metric functions themselves, the rest here."""
    n = len(dialogues)
    arena = [_values(d, _from_recommend, _any_acceptance) for d in dialogues]
    assert [a[0] for a in arena] == [M.srrr(d) for d in dialogues]
    assert [a[1] for a in arena] == [M.success(d) for d in dialogues]
    rows = ["| reading | metric names | mean SRRR | mean SR | rounds | dialogues with another SRRR "
            "| dialogues with another SR |", "|---|---|---|---|---|---|---|"]
    for name, names, spans, settles in READINGS:
        values = [_values(d, spans, settles) for d in dialogues]
        if spans is _from_start and settles is _last_decision:
            assert [v[0] for v in values] == [U.srrr_usersimcrs(d) for d in dialogues]
            assert [v[1] for v in values] == [U.success_usersimcrs(d) for d in dialogues]
        srrr_diff = sum(v[0] != a[0] for v, a in zip(values, arena))
        sr_diff = sum(v[1] != a[1] for v, a in zip(values, arena))
        rows.append(f"| {name} | {names} | {sum(v[0] for v in values) / n:.3f} | "
                    f"{sum(v[1] for v in values) / n:.3f} | {sum(v[2] for v in values)} | "
                    f"{srrr_diff} of {n} | {sr_diff} of {n} |")
    return "\n".join(rows)


def opening_count(dialogues: Sequence[Dialogue]) -> int:
    """Dialogues with utterances before their first Recommend (an extra round for UserSimCRS)."""
    return sum(any(r.opening for r in U.usersimcrs_rounds(d)) for d in dialogues)


def main(argv: list[str] | None = None) -> int:
    from arena.corpus.loading import load_dialogues

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iard", type=Path, default=IARD, help="IARD's file (DialogueKit layout, with acts)")
    args = parser.parse_args(argv)
    dialogues = load_dialogues(args.iard)
    print(readings_table(dialogues))
    print(f"\n{opening_count(dialogues)} of {len(dialogues)} dialogues say something before the first "
          "recommendation.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
