"""Exports a researcher can trust: every export marks a study dialogue's crowd, study version and the worker's
standing; the study files ride along (completion code left out); the card defines what it lists."""

from __future__ import annotations

import json
import zipfile

from arena.corpus.bundle import ExportFilter, export_bundle
from arena.dialogue import Score
from arena.text_safety import escape_markdown
from study_support import INSTRUCTED, pid, publish
from webapp.leaderboard.study_results import export_study
from webapp.sessions import study as flow


def link(worker: str) -> dict:
    return {"study": "pilot", "PROLIFIC_PID": pid(worker), "SESSION_ID": pid(f"session-{worker}")}


def whole_study(services, worker: str, attention: str) -> None:
    study, p = flow.enter(services, link(worker))
    flow.consent(services, study, p)
    flow.begin(services, study, p)
    for number in (1, 2):
        study, p = flow.enter(services, link(worker))
        flow.send(services, study, p, "A", f"a heist film please ({number})")
        flow.rate(services, study, p, "A", "satisfied")
        flow.submit(services, study, p, None, attention if number == 2 else None)


def exported_dialogues(folder) -> list[dict]:
    return [json.loads(line) for line in (folder / "dialogues.jsonl").read_text().splitlines()]


def test_the_main_export_marks_each_study_dialogue_and_carries_the_study_files(services, tmp_path):
    publish(services, attention_check=INSTRUCTED)
    publish(services, attention_check=INSTRUCTED, title="Second wave")
    whole_study(services, "good", "Often")
    whole_study(services, "careless", "Never")
    done = export_bundle(services.store, tmp_path / "all", ExportFilter(), zip_name="all.zip")
    rows = exported_dialogues(tmp_path / "all")
    standing = sorted((r["metadata"]["dialogue_metadata"]["worker_status"],
                       r["metadata"]["dialogue_metadata"]["study"],
                       r["metadata"]["dialogue_metadata"]["study_version"]) for r in rows)
    assert standing == [("completed", "pilot", 2)] * 2 + [("flagged", "pilot", 2)] * 2
    flagged = [r for r in rows if r["metadata"]["dialogue_metadata"]["worker_status"] == "flagged"]
    assert all("attention check failed" in r["metadata"]["dialogue_metadata"]["worker_flags"][0] for r in flagged)
    names = zipfile.ZipFile(done.files["zip"]).namelist()
    assert "study-pilot-v2.yaml" in names
    study_file = zipfile.ZipFile(done.files["zip"]).read("study-pilot-v2.yaml").decode()
    assert "Second wave" in study_file and "CODE-7731" not in study_file and "LEFT-OUT" in study_file
    card = (tmp_path / "all" / "README.md").read_text()
    assert escape_markdown("study-pilot-v2.yaml") in card and "worker_status" in card
    # The study's own export leaves the flagged worker out, and says so.
    own = export_study(services, "pilot", tmp_path / "own")
    assert own.counts["dialogues"] == 2
    assert all(r["metadata"]["dialogue_metadata"]["worker_status"] == "completed"
               for r in exported_dialogues(tmp_path / "own"))


def test_the_card_defines_every_metric_it_lists_and_no_acts_row(services, tmp_path):
    publish(services, tasks_per_participant=1)
    study, p = flow.enter(services, link("w"))
    flow.consent(services, study, p)
    flow.begin(services, study, p)
    study, p = flow.enter(services, link("w"))
    flow.send(services, study, p, "A", "a film please")
    (d,) = services.store.list_dialogues()
    for metric, value in (("acts", 1.0), ("rdl", 0.25), ("sr", 1.0), ("srrr", 0.5)):
        services.store.save_scores(d.dialogue_id, {metric: Score(value=value, scorer=metric, version="1")})
    export_bundle(services.store, tmp_path, ExportFilter())
    card = (tmp_path / "README.md").read_text()
    table = [line for line in card.splitlines() if line.startswith("| rdl") or line.startswith("| sr")
             or line.startswith("| acts")]
    assert [line.split(" | ")[0] for line in table] == ["| rdl", "| sr", "| srrr"]
    assert all(len(line.split(" | ")[2]) > 20 for line in table)  # each row says what it measures
    assert "Dialogue acts were annotated on 1 dialogues" in card
