"""Paying the crowd and running a study: the approve/reject sheet from platform ids kept for it alone (never
in exports or the mirror, gone when the study closes), and pause, resume and close."""

from __future__ import annotations

import csv

import pytest

from arena.corpus.bundle import ExportFilter, export_bundle
from arena.corpus.shards import STUDY_TABLES
from study_support import INSTRUCTED, pid, publish
from webapp.leaderboard.study_results import close_study, payment_sheet
from webapp.sessions import study as flow
from webapp.sessions.refusal import Refusal


def link(worker: str) -> dict:
    return {"study": "pilot", "PROLIFIC_PID": pid(worker), "STUDY_ID": pid("prolific-study"),
            "SESSION_ID": pid(f"S-{worker}")}


def one_task(services, worker: str, attention=None):
    study, p = flow.enter(services, link(worker))
    flow.send(services, study, p, "A", "a western please")
    flow.rate(services, study, p, "A", "frustrated")
    flow.submit(services, study, p, None, attention)
    return flow.enter(services, link(worker))


def begin(services, worker: str):
    study, p = flow.enter(services, link(worker))
    flow.consent(services, study, p)
    flow.begin(services, study, p)
    return flow.enter(services, link(worker))


def sheet_rows(services, folder) -> list[dict]:
    with payment_sheet(services, "pilot", folder).open(newline="") as f:
        return list(csv.DictReader(f))


def test_the_payment_sheet_takes_prolific_ids_kept_for_it_alone_and_gone_on_close(services, tmp_path):
    publish(services, attention_check=INSTRUCTED)
    for worker, answer in (("5f1good", "Often"), ("5f2careless", "Never")):
        begin(services, worker)
        one_task(services, worker)
        one_task(services, worker, attention=answer)
    begin(services, "5f3left")
    rows = {r["PROLIFIC_PID"]: r for r in sheet_rows(services, tmp_path)}
    good = rows[pid("5f1good")]
    # The platform's own statuses: a finished submission awaits review; the arena's verdict is a column.
    assert (good["status"], good["status_after_upload"], good["arena_decision"]) == (
        "AWAITING REVIEW", "APPROVED", "approve")
    assert good["SESSION_ID"] == pid("S-5f1good") and good["STUDY_ID"] == pid("prolific-study")
    assert rows[pid("5f1good")]["completion_code"] == "CODE-7731" and rows[pid("5f1good")]["reason"] == ""
    careless = rows[pid("5f2careless")]
    assert (careless["status_after_upload"], careless["arena_decision"]) == ("REJECTED", "reject")
    assert careless["reason"].startswith("attention check failed")
    left = rows[pid("5f3left")]
    assert (left["status"], left["arena_decision"], left["completion_code"]) == ("ACTIVE", "unfinished", "")
    assert "NOT COMPLETED" not in {r["status"] for r in rows.values()} | {r["status_after_upload"]
                                                                          for r in rows.values()}
    # The raw ids are nowhere else: not in the participants' rows, exports or the tables the mirror copies.
    assert "study_platform_ids" not in STUDY_TABLES
    assert pid("5f1good") not in str([p.data for p in services.store.list_participants("pilot")])
    export_bundle(services.store, tmp_path / "export", ExportFilter(), zip_name="all.zip")
    for path in (tmp_path / "export").iterdir():
        assert pid("5f1good").encode() not in path.read_bytes()
        assert pid("S-5f1good").encode() not in path.read_bytes()
    assert close_study(services, "pilot") == 3
    assert services.store.platform_ids("pilot") == {}
    assert {r["PROLIFIC_PID"] for r in sheet_rows(services, tmp_path)} == {""}
    with pytest.raises(Refusal, match="closed"):
        flow.enter(services, link("5f9new"))


def test_pause_holds_new_workers_and_new_tasks_and_resume_goes_on(services):
    publish(services, tasks_per_participant=2)
    begin(services, "W1")
    services.store.set_study_state("pilot", "paused")
    with pytest.raises(Refusal, match="paused"):
        flow.enter(services, link("W2"))
    study, p = one_task(services, "W1")  # the task under way is finished; no next one while paused
    assert p.data["step"] == "full" and flow.full_notice(services, study, p) == (flow.PAUSED, True)
    services.store.set_study_state("pilot", "open")
    flow.retry_full(services, study, p)
    _, p = flow.enter(services, link("W1"))
    assert p.data["step"] == "task"
    flow.enter(services, link("W2"))


def test_a_verdict_may_change_until_the_task_is_submitted(services):
    publish(services, tasks_per_participant=1)
    study, p = begin(services, "W1")
    flow.send(services, study, p, "A", "a musical please")
    flow.rate(services, study, p, "A", "frustrated")
    flow.rate(services, study, p, "A", "satisfied")
    assert flow.task_dialogues(services, p)["A"].feedback.sentiment == "satisfied"
    flow.submit(services, study, p, None, None)
    (d,) = services.store.list_dialogues()
    assert d.feedback.sentiment == "satisfied"
    with pytest.raises(Refusal, match="no task under way"):
        flow.rate(services, study, flow.enter(services, link("W1"))[1], "A", "frustrated")


def test_a_study_board_applies_the_public_boards_minimum_battles(services):
    from webapp.leaderboard.study_results import study_leaderboard
    from webapp.leaderboard.table import display_table

    publish(services, mode="battle", tasks_per_participant=1)
    study, p = begin(services, "B1")
    for side in ("A", "B"):
        flow.send(services, study, p, side, "a war film please")
        flow.rate(services, study, p, side, "satisfied")
    flow.submit(services, study, p, "A", None)
    table = study_leaderboard(services, "pilot")
    assert table.attrs.get("min_votes") == services.settings.leaderboard_min_votes > 1
    shown = display_table(table)
    assert set(shown["Elo"]) == {"–"} and set(shown["Bradley-Terry"]) == {"–"}  # one battle rates no one
    assert study_leaderboard(services, "nobody").empty


def test_a_preview_walks_the_whole_study_taking_no_place_and_counting_nowhere(services, tmp_path):
    from arena.crowd.study import parse_study
    from study_support import study_yaml
    from webapp.leaderboard.study_results import export_study, study_leaderboard

    publish(services, quota_per_cell=1, tasks_per_participant=2, attention_check=INSTRUCTED)
    with pytest.raises(Refusal, match="preview link is not valid"):
        flow.enter(services, {"study": "pilot", "preview": "1"})
    walk = {"study": "pilot", "preview": flow.preview_token(services, "pilot")}
    study, p = flow.enter(services, walk, browser="researcher-browser")
    flow.consent(services, study, p)
    flow.begin(services, study, p)
    for number in (1, 2):
        study, p = flow.enter(services, walk, browser="researcher-browser")
        flow.send(services, study, p, "A", "a comedy please")
        flow.rate(services, study, p, "A", "satisfied")
        flow.submit(services, study, p, None, "Often" if number == 2 else None)
    study, p = flow.enter(services, walk, browser="researcher-browser")
    assert p.status == "completed" and flow.is_preview(p)
    quota = parse_study(study_yaml(quota_per_cell=1, tasks_per_participant=2, attention_check=INSTRUCTED))
    assert all(n["done"] == n["reserved"] == 0 for n in services.store.cell_fill(quota).values())
    assert services.store.list_participants("pilot") == [] and services.store.platform_ids("pilot") == {}
    assert study_leaderboard(services, "pilot").empty
    assert export_study(services, "pilot", tmp_path / "own").counts["dialogues"] == 0
    assert export_bundle(services.store, tmp_path / "all", ExportFilter()).counts["dialogues"] == 0
    assert len(services.store.list_dialogues()) == 2  # stored for the walk itself, exported nowhere


def test_a_study_links_platform_ids_never_reach_a_log_line():
    from arena.llm.redaction import redact_text

    line = redact_text("GET /study/?study=pilot&PROLIFIC_PID=5f9abc&STUDY_ID=st&SESSION_ID=se7&preview=k3y 200")
    assert "5f9abc" not in line and "se7" not in line and "k3y" not in line and "study=pilot" in line
