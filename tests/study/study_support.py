"""Study files for the tests, and the app served with its study page."""

from __future__ import annotations

import hashlib
import textwrap
from typing import Any

import yaml

from arena.crowd.study import parse_study

BASE = {
    "id": "pilot",
    "title": "Movie chat pilot",
    "consent": "## Consent\nYou agree that your messages are stored.",
    "instructions": "## Instructions\nAsk for a movie, then give your verdict.",
    "mode": "chat",
    "systems": ["alpha", "beta", "gamma"],
    "tasks_per_participant": 2,
    "min_user_turns": 1,
    "quota_per_cell": 5,
    "completion_code": "CODE-7731",
}


def pid(name: str) -> str:
    """A Prolific-format id (24 hexadecimal characters, as Prolific fills into a link) standing for `name`."""
    return hashlib.sha256(name.encode()).hexdigest()[:24]


def study_yaml(**changes: Any) -> str:
    data = {**BASE, **changes}
    return yaml.safe_dump({k: v for k, v in data.items() if v is not None}, sort_keys=False)


def publish(services, **changes: Any) -> int:
    """Save a study file (as a researcher would); returns its version."""
    text = study_yaml(**changes)
    return services.store.save_study(parse_study(text), text, "ada")


INSTRUCTED = {"kind": "instructed", "after_task": 2, "question": "Choose Often to show you read this.",
              "options": ["Never", "Sometimes", "Often"], "answer": "Often"}
GOLD = {"kind": "gold", "after_task": 1, "question": "Was this user satisfied?",
        "options": ["satisfied", "frustrated"], "answer": "frustrated",
        "text": textwrap.dedent("""\
            **User:** A horror film please.
            **System:** Here is a cheerful cartoon about ponies.
            **User:** That is not what I asked for at all.""")}


RESEARCHER_PASSWORD = "correct horse battery staple"  # the researcher "ada" of `researcher_services`
# A study file's `prolific:` block for the browser tests.
PROLIFIC_TERMS = {"reward": 200, "estimated_minutes": 10, "description": "Chat with a movie recommender."}


def assert_places_and_sheet_after_known_answers(services, study: dict[str, Any], careful, careless,
                                                tmp_path) -> None:
    """After a careful worker (every known answer right) and a careless one (half right, under a minimum of
    1.0) finished: the careless worker's places were given back, and the participants table and the payment
    sheet show each one's accuracy and decision."""
    import csv

    from webapp.leaderboard.study_results import participants_table, payment_sheet

    fill = services.store.cell_fill(parse_study(study_yaml(**study)))
    assert sum(n["done"] for n in fill.values()) == 2  # the careless worker's places were given back
    table = participants_table(services, "pilot").set_index("pseudonym")
    assert table.loc[careful.pseudonym, "known-answer accuracy"] == "1.00"
    assert table.loc[careless.pseudonym, "known-answer accuracy"] == "0.50"
    with payment_sheet(services, "pilot", tmp_path).open(newline="") as f:
        rows = {r["PROLIFIC_PID"]: r for r in csv.DictReader(f)}
    assert rows[pid("careful")]["known_answer_accuracy"] == "1.00"
    assert rows[pid("careful")]["arena_decision"] == "approve"
    assert rows[pid("careless")]["arena_decision"] == "reject"
    assert rows[pid("careless")]["reason"] == "known-answer accuracy 0.50 (minimum 1.00)"
