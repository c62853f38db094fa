"""Known-answer tasks: a scripted system whose replies are clearly good or clearly off-topic (real catalog
items), or a stored dialogue replayed; the worker's accuracy on them, in their row, the participants' table,
the sheet and the exclusion rule; and their dialogues on no board and in no export."""

from __future__ import annotations

import io

import pytest

from arena.catalogs.catalog import load_catalog
from arena.corpus.bundle import ExportFilter, export_bundle
from arena.corpus.records import export_jsonl
from arena.crowd.counting import Participants
from arena.crowd.known_answers import known_answer_accuracy
from arena.crowd.study import KNOWN_ANSWER_KEY, StudyError, parse_study
from arena.dialogue import Dialogue, Role, UserInfo, Utterance
from crs.known_answer import KnownAnswerCRS
from study_support import assert_places_and_sheet_after_known_answers, pid, publish, study_yaml
from webapp.leaderboard.board_select import StoreFrames
from webapp.leaderboard.study_results import (
    export_study, study_leaderboard,
)
from webapp.sessions import study as flow
from webapp.sessions.refusal import Refusal

KNOWN = {"count": 2, "positions": [1, 3], "kinds": ["good", "off_topic"], "min_accuracy": 1.0}


def link(worker: str) -> dict:
    return {"study": "pilot", "PROLIFIC_PID": pid(worker), "SESSION_ID": pid(f"S-{worker}")}


def asked(text: str) -> Dialogue:
    return Dialogue(crs_id="x", user=UserInfo(id="u"), utterances=[Utterance(role=Role.USER, text=text)])


@pytest.mark.parametrize("request_text, genre", [("a scary horror film please", "horror"),
                                                 ("I want a funny comedy", "comedy"),
                                                 ("any good war movies?", "war")])
def test_the_scripted_systems_replies_are_clearly_good_or_clearly_off_topic(request_text, genre):
    catalog = load_catalog("redial")
    text, items = KnownAnswerCRS(catalog, "good").respond(asked(request_text))
    assert len(items) == 3 and all(genre in catalog.get(i.item_id).genres for i in items)
    assert all(i.title in text for i in items)
    text, items = KnownAnswerCRS(catalog, "off_topic").respond(asked(request_text))
    assert items and all(genre not in catalog.get(i.item_id).genres for i in items)
    assert genre not in text.lower()


def test_the_known_answers_block_is_checked():
    study = parse_study(study_yaml(known_answers=KNOWN))
    assert study.known_answers.count == 2 and study.all_tasks() == 4
    for block, line in (({**KNOWN, "positions": [1, 9]}, "beyond the worker's last task"),
                        ({**KNOWN, "positions": [1]}, "one distinct position"),
                        ({**KNOWN, "kinds": ["replay"]}, "replays: the replay kind needs"),
                        ({**KNOWN, "kinds": ["nonsense"]}, "known_answers.kinds")):
        with pytest.raises(StudyError, match=line):
            parse_study(study_yaml(known_answers=block))


def walk(services, worker: str, verdicts: dict[int, str]):
    """The worker's four tasks (known ones at 1 and 3), giving `verdicts` by task (satisfied otherwise)."""
    study, p = flow.enter(services, link(worker))
    flow.consent(services, study, p)
    flow.begin(services, study, p)
    kinds = []
    for number in (1, 2, 3, 4):
        study, p = flow.enter(services, link(worker))
        kinds.append(p.data["task"].get("known"))
        flow.send(services, study, p, "A", "a horror movie please")
        flow.rate(services, study, p, "A", verdicts.get(number, "satisfied"))
        flow.submit(services, study, p, None, None)
    return kinds, flow.enter(services, link(worker))[1]


def test_accuracy_is_computed_stored_shown_and_excludes_the_careless(services, tmp_path):
    publish(services, known_answers=KNOWN, quota_per_cell=5)
    kinds, careful = walk(services, "careful", {3: "frustrated"})
    assert kinds == ["good", None, "off_topic", None]  # the known-answer tasks at the positions asked
    _, careless = walk(services, "careless", {})  # satisfied with the off-topic system too
    assert known_answer_accuracy(careful) == 1.0 and not careful.flags
    assert known_answer_accuracy(careless) == 0.5
    assert careless.flags == ["known-answer accuracy 0.50 (minimum 1.00)"]
    assert flow.completed(careful) and flow.completed(careless)
    # The scripted system answered from the catalog: its items are real horror films.
    catalog = load_catalog("redial")
    known = [d for d in services.store.list_dialogues() if d.metadata.get(KNOWN_ANSWER_KEY)]
    assert len(known) == 4 and {d.metadata[KNOWN_ANSWER_KEY]["answer"] for d in known} == {"satisfied",
                                                                                           "frustrated"}
    good = [d for d in known if d.metadata[KNOWN_ANSWER_KEY]["kind"] == "good"]
    assert all("horror" in catalog.get(i.item_id).genres for d in good for i in d.utterances[-1].items)
    # Known-answer tasks take no place: the four real tasks filled four places, in the real systems' cells.
    study = dict(known_answers=KNOWN, quota_per_cell=5)
    assert_places_and_sheet_after_known_answers(services, study, careful, careless, tmp_path)


def test_known_answer_dialogues_are_on_no_board_and_in_no_export(services, tmp_path):
    publish(services, known_answers=KNOWN, quota_per_cell=5)
    walk(services, "careful", {3: "frustrated"})
    dialogues = services.store.list_dialogues()
    known = {d.dialogue_id for d in dialogues if d.metadata.get(KNOWN_ANSWER_KEY)}
    real = {d.dialogue_id for d in dialogues} - known
    assert len(known) == 2 and len(real) == 2
    # The one selection rule, for objects and for the boards' columns, for every crowd and for all of them.
    for crowd in (None, "pilot", "open"):
        kept = {d.dialogue_id for d in Participants(crowd=crowd).select(dialogues, [])[0]}
        assert not kept & known
        frames = StoreFrames.of(services.store.board_rows())
        mask, _ = frames.masks(crowd=crowd)
        assert not set(frames.d["dialogue_id"][mask]) & known
    assert real <= {d.dialogue_id for d in Participants(crowd="pilot").select(dialogues, [])[0]}
    board = study_leaderboard(services, "pilot")
    assert int(board["conversations"].sum()) == 2 and not set(board.index) & {"known_answer_good",
                                                                              "known_answer_off_topic"}
    for result in (export_bundle(services.store, tmp_path / "all", ExportFilter()),
                   export_study(services, "pilot", tmp_path / "own")):
        assert result.counts["dialogues"] == 2
        for path in result.files.values():
            data = path.read_bytes()
            assert all(d.encode() not in data for d in known) and b"known_answer_good" not in data
    out = io.StringIO()  # the corpus file the command line writes
    assert export_jsonl(services.store, out) == 2 and "known_answer_" not in out.getvalue()


def test_a_stored_dialogue_is_replayed_for_the_worker_to_judge(services):
    publish(services, tasks_per_participant=1, quota_per_cell=5)
    study, p = flow.enter(services, link("first"))
    flow.consent(services, study, p)
    flow.begin(services, study, p)
    study, p = flow.enter(services, link("first"))
    flow.send(services, study, p, "A", "a horror movie please")
    flow.rate(services, study, p, "A", "frustrated")
    flow.submit(services, study, p, None, None)
    (stored,) = services.store.list_dialogues()
    replays = {"count": 1, "positions": [1], "kinds": ["replay"], "min_accuracy": 1.0,
               "replays": [{"dialogue_id": stored.dialogue_id, "answer": "frustrated"}]}
    publish(services, tasks_per_participant=1, quota_per_cell=5, known_answers=replays)
    study, p = flow.enter(services, link("second"))
    flow.consent(services, study, p)
    flow.begin(services, study, p)
    study, p = flow.enter(services, link("second"))
    (d,) = flow.task_dialogues(services, p).values()
    assert p.data["task"]["known"] == "replay" and d.dialogue_id != stored.dialogue_id
    assert [u.text for u in d.utterances] == [u.text for u in stored.utterances] and d.feedback is None
    with pytest.raises(Refusal, match="one to read, not to continue"):
        flow.send(services, study, p, "A", "more please")
    flow.rate(services, study, p, "A", "satisfied")  # wrong: the stored user was frustrated
    flow.submit(services, study, p, None, None)
    _, p = flow.enter(services, link("second"))
    assert known_answer_accuracy(p) == 0.0 and p.flags == ["known-answer accuracy 0.00 (minimum 1.00)"]
    assert p.data["step"] == "task"  # on to the study's own task


def test_a_paused_study_hands_out_no_known_answer_task_either(services):
    publish(services, known_answers=KNOWN, quota_per_cell=5)
    study, p = flow.enter(services, link("w"))
    flow.consent(services, study, p)
    flow.begin(services, study, p)
    for number in (1, 2):
        study, p = flow.enter(services, link("w"))
        flow.send(services, study, p, "A", "a horror movie please")
        flow.rate(services, study, p, "A", "satisfied")
        if number == 2:
            services.store.set_study_state("pilot", "paused")
        flow.submit(services, study, p, None, None)
    study, p = flow.enter(services, link("w"))
    assert p.data["step"] == "full"  # the next task, a known-answer one, waits like any other
    services.store.set_study_state("pilot", "open")
    flow.retry_full(services, study, p)
    assert flow.enter(services, link("w"))[1].data["task"]["known"] == "off_topic"
