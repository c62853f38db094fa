"""DialogueKit's own reader loads every export, slots are written in its shape, and what
DialogueKit writes (utterance feedback, utterance metadata, annotations) survives an import
and an export."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from dialoguekit_support import require_dialoguekit  # noqa: E402

from arena.corpus.bundle import export_bundle  # noqa: E402
from arena.corpus.dialoguekit import DIALOGUEKIT_UTTERANCES, from_record, to_dialoguekit  # noqa: E402
from arena.corpus.loading import load_dialogues  # noqa: E402
from arena.corpus.records import export_json, import_dialogues  # noqa: E402
from arena.dialogue import Dialogue, DialogueAct, Feedback, RecommendedItem, UserInfo, UserKind  # noqa: E402
from arena.store import Store  # noqa: E402


@pytest.fixture(autouse=True)
def _dialoguekit():
    require_dialoguekit()


def _arena_dialogue(dialogue_id: str = "d-1") -> Dialogue:
    d = Dialogue(dialogue_id=dialogue_id, crs_id="kbrd_redial", user=UserInfo(kind=UserKind.HUMAN, id="person-123456"))
    d.add_user("I want something like Alien", dialogue_acts=[
        DialogueAct(intent="REQ", slot_values=[["TITLE", "Alien"]])])  # as the LLM annotator writes it
    d.add_agent("Try Aliens (1986).", [RecommendedItem(item_id="m1", title="Aliens (1986)")],
                dialogue_acts=[DialogueAct(intent="REC-S", slot_values=[["TITLE", "Aliens (1986)", 4, 17]])],
                acts_annotator="llm-acts/prompt2")
    d.add_user("ok, I'll watch it", dialogue_acts=[DialogueAct(intent="ACC")])
    d.feedback = Feedback(sentiment="satisfied")
    d.ended_at, d.end_reason = d.created_at, "user_ended"
    return d


def test_every_export_loads_with_dialoguekits_reader(tmp_path):
    from dialoguekit.utils.dialogue_reader import json_to_dialogues

    with Store(tmp_path / "arena.sqlite3") as store:
        store.save_dialogues([_arena_dialogue("d-1"), _arena_dialogue("d-2")])
        single = tmp_path / "corpus.json"
        assert export_json(store, single) == 2
        folder = export_bundle(store, tmp_path / "bundle")
    for path in (single, folder.files["dialogues_json"]):
        loaded = json_to_dialogues(str(path))
        assert [d.conversation_id for d in loaded] == ["d-1", "d-2"], path
        first = loaded[0]
        assert first.agent_id == "kbrd_redial" and len(first.utterances) == 3
        assert [u.text for u in first.utterances][1] == "Try Aliens (1986)."
        assert first.utterances[1].utterance_id == _utterance_ids(path)[1]
        # A two-element TITLE slot is written with null start and end: DialogueKit reads it.
        request = first.utterances[0].dialogue_acts[0]
        assert request.intent.label == "REQ"
        assert [(a.slot, a.value, a.start, a.end) for a in request.annotations] == [("TITLE", "Alien", None, None)]
        recommend = first.utterances[1].dialogue_acts[0].annotations[0]
        assert (recommend.slot, recommend.value, recommend.start, recommend.end) == ("TITLE", "Aliens (1986)", 4, 17)
        assert first.metadata["sentiment"] == "satisfied"
    # The JSON Lines file holds the same records as the list.
    lines = [json.loads(line) for line in folder.files["dialogues"].read_text().splitlines()]
    assert lines == json.loads(folder.files["dialogues_json"].read_text())


def _utterance_ids(path: Path) -> list[str]:
    return [u["utterance ID"] for u in json.loads(path.read_text())[0]["conversation"]]


def test_the_arenas_own_round_trip_still_holds():
    d = _arena_dialogue()
    assert from_record(to_dialoguekit(d)) == d


def _dialoguekit_written(path: Path) -> None:
    """A dialogue written by DialogueKit itself, with feedback, metadata and annotations."""
    from dialoguekit.core.annotated_utterance import AnnotatedUtterance
    from dialoguekit.core.annotation import Annotation
    from dialoguekit.core.dialogue import Dialogue as DKDialogue
    from dialoguekit.core.dialogue_act import DialogueAct as DKAct
    from dialoguekit.core.feedback import BinaryFeedback, UtteranceFeedback
    from dialoguekit.core.intent import Intent
    from dialoguekit.core.slot_value_annotation import SlotValueAnnotation
    from dialoguekit.participant import DialogueParticipant

    dialogue = DKDialogue("barcor_redial", "simulated-user-7", "dk-1")
    dialogue._metadata = {"simulator": "abus"}
    dialogue.add_utterance(AnnotatedUtterance(
        "I like horror films", DialogueParticipant.USER, utterance_id="dk-1-0",
        dialogue_acts=[DKAct(Intent("DISCLOSE"), [SlotValueAnnotation("GENRE", "horror", 7, 13)])],
        annotations=[Annotation("sentiment", "positive")], metadata={"turn": 0, "source": "usersimcrs"}))
    dialogue.add_utterance(AnnotatedUtterance(
        "How about The Shining (1980)?", DialogueParticipant.AGENT, utterance_id="dk-1-1",
        dialogue_acts=[DKAct(Intent("REC-S"), [SlotValueAnnotation("TITLE", "The Shining (1980)")])]))
    dialogue.add_utterance_feedback(UtteranceFeedback("dk-1-1", BinaryFeedback.POSITIVE), "dk-1-1")
    path.write_text(json.dumps([dialogue.to_dict()]), encoding="utf-8")


def test_what_dialoguekit_writes_survives_import_and_export(tmp_path):
    from dialoguekit.utils.dialogue_reader import json_to_dialogues

    written = tmp_path / "dialoguekit.json"
    _dialoguekit_written(written)
    [imported] = load_dialogues(written)
    assert imported.dialogue_id == "dk-1" and imported.crs_id == "barcor_redial"
    assert imported.user.id == "simulated-user-7"
    assert imported.utterances[0].dialogue_acts[0].slot_values == [["GENRE", "horror", 7, 13]]
    assert imported.utterances[1].dialogue_acts[0].slot_values == [["TITLE", "The Shining (1980)"]]
    kept = imported.metadata[DIALOGUEKIT_UTTERANCES]
    assert kept["dk-1-0"]["annotations"] == [["sentiment", "positive"]]
    assert kept["dk-1-0"]["source"] == "usersimcrs" and kept["dk-1-0"]["turn"] == 0
    assert kept["dk-1-1"]["utterance_feedback"] == 1

    with Store(tmp_path / "arena.sqlite3") as store:
        import_dialogues(store, [imported])
        out = tmp_path / "export.json"
        export_json(store, out)
    [again] = json_to_dialogues(str(out))
    assert again.conversation_id == "dk-1" and again.agent_id == "barcor_redial"
    first, second = again.utterances
    assert [(a.key, a.value) for a in first.annotations] == [("sentiment", "positive")]
    assert first.metadata["source"] == "usersimcrs" and first.metadata["turn"] == 0
    assert again.get_utterance_feedback("dk-1-1").feedback.value == 1
    assert [(a.slot, a.value) for a in second.dialogue_acts[0].annotations] == [("TITLE", "The Shining (1980)")]
    assert again.metadata["dialogue_metadata"] == {"simulator": "abus"}
    # And back in once more: nothing was lost on the way round.
    [twice] = load_dialogues(out)
    assert twice.metadata[DIALOGUEKIT_UTTERANCES]["dk-1-0"]["annotations"] == [["sentiment", "positive"]]
    assert twice.metadata[DIALOGUEKIT_UTTERANCES]["dk-1-1"]["utterance_feedback"] == 1
