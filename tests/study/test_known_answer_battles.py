"""Known-answer tasks in a battle study: a battle of the clearly good scripted system against the clearly
off-topic one, on sides drawn per worker; the right vote is the good side. The worker's accuracy counts it
and the exclusion rule uses it; neither side's dialogue nor the vote reaches a board, an export or the
public corpus."""

from __future__ import annotations

import io

import pytest

from arena.catalogs.catalog import load_catalog
from arena.corpus.bundle import ExportFilter, export_bundle
from arena.corpus.records import export_jsonl
from arena.crowd.counting import Participants
from arena.crowd.known_answers import known_answer_accuracy, known_battle
from arena.crowd.study import KNOWN_ANSWER_KEY, StudyError, parse_study
from study_support import assert_places_and_sheet_after_known_answers, pid, publish, study_yaml
from webapp.leaderboard.board_select import StoreFrames
from webapp.leaderboard.study_results import (
    export_study, study_leaderboard,
)
from webapp.sessions import study as flow
from webapp.sessions.refusal import Refusal

KNOWN = {"count": 2, "positions": [1, 3], "min_accuracy": 1.0}
BATTLE = {"mode": "battle", "tasks_per_participant": 2, "quota_per_cell": 5, "known_answers": KNOWN}


def link(worker: str) -> dict:
    return {"study": "pilot", "PROLIFIC_PID": pid(worker), "SESSION_ID": pid(f"S-{worker}")}


def good_side(services, p) -> str:
    (side,) = [s for s, d in flow.task_dialogues(services, p).items() if d.crs_id == "known_answer_good"]
    return side


def walk(services, worker: str, wrong: set[int] = frozenset()):
    """The worker's four battles (known ones at 1 and 3): each side chatted with and rated; the vote on a
    known battle is the good side, except at the task numbers in `wrong` (the off-topic side)."""
    study, p = flow.enter(services, link(worker))
    flow.consent(services, study, p)
    flow.begin(services, study, p)
    tasks = []
    for number in (1, 2, 3, 4):
        study, p = flow.enter(services, link(worker))
        known = p.data["task"].get("known")
        for side in ("A", "B"):
            flow.send(services, study, p, side, "a horror movie please")
            flow.rate(services, study, p, side, "satisfied")
        if known:
            good = good_side(services, p)
            choice = ({"A", "B"} - {good}).pop() if number in wrong else good
        else:
            choice = "A"
        tasks.append((known, {s: d.dialogue_id for s, d in flow.task_dialogues(services, p).items()}))
        flow.submit(services, study, p, choice, None)
    return tasks, flow.enter(services, link(worker))[1]


def test_a_battle_studys_known_answer_block_is_checked():
    study = parse_study(study_yaml(**BATTLE))
    assert study.known_answers.count == 2 and study.all_tasks() == 4
    with pytest.raises(StudyError, match="known_answers: kinds: a battle study's known-answer task pairs"):
        parse_study(study_yaml(**{**BATTLE, "known_answers": {
            **KNOWN, "kinds": ["replay"], "replays": [{"dialogue_id": "d1", "answer": "satisfied"}]}}))


def test_the_good_system_takes_either_side_and_the_right_vote_is_its_side():
    drawn = [known_battle(f"worker-{n}", 0) for n in range(40)]
    assert {spec["answer"] for spec in drawn} == {"A", "B"}
    other = {"A": "B", "B": "A"}
    assert all(spec["systems"] == {spec["answer"]: "good", other[spec["answer"]]: "off_topic"}
               for spec in drawn)
    assert known_battle("worker-1", 0) == known_battle("worker-1", 0)  # the same worker, the same sides


def test_a_known_answer_battle_is_judged_on_its_vote_and_excludes_the_careless(services, tmp_path):
    publish(services, **BATTLE)
    tasks, careful = walk(services, "careful")
    _, careless = walk(services, "careless", wrong={3})  # voted for the off-topic side once
    assert [known for known, _ in tasks] == ["battle", None, "battle", None]
    assert known_answer_accuracy(careful) == 1.0 and not careful.flags
    assert known_answer_accuracy(careless) == 0.5
    assert careless.flags == ["known-answer accuracy 0.50 (minimum 1.00)"]
    assert flow.completed(careful) and flow.completed(careless)
    # The good side answered with horror films, the off-topic side with none.
    catalog = load_catalog("redial")
    for known, ids in tasks:
        if known:
            for d in (services.store.get_dialogue(i) for i in ids.values()):
                spec = d.metadata[KNOWN_ANSWER_KEY]
                good = spec["system"] == "good"
                assert spec["kind"] == "battle" and (d.metadata["side"] == spec["answer"]) == good
                genres = [catalog.get(i.item_id).genres for i in d.utterances[-1].items]
                assert genres and all(("horror" in g) == good for g in genres)
    # Only the real battles cast votes; known-answer battles take no place.
    assert len(services.store.list_votes()) == 4
    assert_places_and_sheet_after_known_answers(services, BATTLE, careful, careless, tmp_path)


def test_a_known_answer_battle_asks_for_a_vote_like_any_battle(services):
    publish(services, **BATTLE)
    study, p = flow.enter(services, link("w"))
    flow.consent(services, study, p)
    flow.begin(services, study, p)
    study, p = flow.enter(services, link("w"))
    for side in ("A", "B"):
        flow.send(services, study, p, side, "a comedy please")
        flow.rate(services, study, p, side, "satisfied")
    with pytest.raises(Refusal, match="which system was better"):
        flow.submit(services, study, p, None, None)
    assert p.data["task"]["known"] == "battle"
    assert "known_answers" not in flow.enter(services, link("w"))[1].data  # nothing judged yet


def test_known_answer_battles_reach_no_board_no_export_and_not_the_public_corpus(services, tmp_path):
    publish(services, **BATTLE)
    tasks, _ = walk(services, "careful")
    known = {i for kind, ids in tasks if kind for i in ids.values()}
    real = {i for kind, ids in tasks if not kind for i in ids.values()}
    assert len(known) == 4 and len(real) == 4
    dialogues, votes = services.store.list_dialogues(), services.store.list_votes()
    assert not {x for v in votes for x in (v.dialogue_a, v.dialogue_b)} & known  # no vote was stored
    for crowd in (None, "pilot", "open"):
        kept = {d.dialogue_id for d in Participants(crowd=crowd).select(dialogues, votes)[0]}
        assert not kept & known
        frames = StoreFrames.of(services.store.board_rows())
        mask, vote_mask = frames.masks(crowd=crowd)
        assert not set(frames.d["dialogue_id"][mask]) & known
        assert not {*frames.v["dialogue_a"][vote_mask], *frames.v["dialogue_b"][vote_mask]} & known
    board = study_leaderboard(services, "pilot")
    assert not set(board.index) & {"known_answer_good", "known_answer_off_topic"}
    for result in (export_bundle(services.store, tmp_path / "all", ExportFilter()),
                   export_study(services, "pilot", tmp_path / "own")):
        assert result.counts["dialogues"] == 4 and result.counts["votes"] == 2
        for path in result.files.values():
            data = path.read_bytes()
            assert all(d.encode() not in data for d in known) and b"known_answer_good" not in data
    out = io.StringIO()
    assert export_jsonl(services.store, out) == 4
    assert all(d not in out.getvalue() for d in known) and "known_answer_" not in out.getvalue()
