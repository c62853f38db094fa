"""Known-answer tasks: where they fall among a worker's tasks, and how often the worker judged them right.

A study's `known_answers` block (`arena.crowd.study.KnownAnswers`) mixes tasks
whose right verdict is known among the real ones. Each known-answer dialogue
carries `KNOWN_ANSWER_KEY` in its metadata, which gives it a crowd of its own
(`crowd_of_dialogue`): no board, meta-evaluation of a crowd or export counts it
(`arena.crowd.counting`). The worker's verdicts on them are kept in their row
(`RESULTS_KEY`), from which their accuracy is read for the sheet, the
participants' table and the study's exclusion rule.
"""

from __future__ import annotations

import random
from typing import Any, Optional

from arena.crowd.study import KNOWN_VERDICTS, Study

# Participant.data key: one {"kind", "answer", "given"} per known-answer task judged (a battle's answer and
# given: the side voted for).
RESULTS_KEY = "known_answers"


def known_positions(study: Study, seed: str) -> list[int]:
    """Where the known-answer tasks come in the worker's sequence of tasks (1 = first): the study's
    positions, or places drawn for this worker (`seed`: the same worker always gets the same places)."""
    known = study.known_answers
    if known is None:
        return []
    if known.positions:
        return sorted(known.positions)
    return sorted(random.Random(f"known-answers:{seed}").sample(range(1, study.all_tasks() + 1), known.count))


def known_task(study: Study, number: int) -> dict[str, Any]:
    """The `number`-th known-answer task (0 = first) of the study: its kind, the verdict it deserves and, for
    a replay, the stored dialogue replayed. The kinds (and replays) take turns."""
    known = study.known_answers
    assert known is not None
    kind = known.kinds[number % len(known.kinds)]
    if kind != "replay":
        return {"kind": kind, "answer": KNOWN_VERDICTS[kind]}
    replay = known.replays[number % len(known.replays)]
    return {"kind": kind, "answer": replay.answer, "replay_of": replay.dialogue_id}


BATTLE_KIND = "battle"  # a battle study's known-answer task: the good system against the off-topic one


def known_battle(seed: str, number: int) -> dict[str, Any]:
    """The `number`-th known-answer battle (0 = first) of the worker `seed`: which side the good system takes
    (the other is off-topic), drawn per worker and task so that a worker cannot learn that the good one is
    always on the left; the right vote (`answer`) is that side."""
    good = random.Random(f"known-battle:{seed}:{number}").choice(("A", "B"))
    return {"kind": BATTLE_KIND, "answer": good,
            "systems": {good: "good", ("B" if good == "A" else "A"): "off_topic"}}


def known_answer_accuracy(p: Any) -> Optional[float]:
    """The worker's share of right verdicts on the known-answer tasks they judged; None before any."""
    results = (p.data or {}).get(RESULTS_KEY) or []
    if not results:
        return None
    return sum(r.get("given") == r.get("answer") for r in results) / len(results)


def accuracy_flag(study: Study, p: Any) -> Optional[str]:
    """The flag a worker gets once every known-answer task is judged and their accuracy is below the
    study's `min_accuracy`; None otherwise."""
    known, accuracy = study.known_answers, known_answer_accuracy(p)
    done = len((p.data or {}).get(RESULTS_KEY) or [])
    if known is None or accuracy is None or done < known.count or accuracy >= known.min_accuracy:
        return None
    return f"known-answer accuracy {accuracy:.2f} (minimum {known.min_accuracy:.2f})"
