from datetime import datetime, timezone

import pytest
from pydantic import ValidationError

from arena.dialogue import (
    SCHEMA_VERSION,
    Dialogue,
    DialogueAct,
    Feedback,
    RecommendedItem,
    Score,
    UserInfo,
    UserKind,
    Vote,
)


def make_rich_dialogue() -> Dialogue:
    d = Dialogue(
        crs_id="chatcrs_redial",
        user=UserInfo(kind=UserKind.SIMULATOR, id="sim-1", simulator="llm_us", details={"seed": 3}),
        metadata={"targets": ["100030"], "note": "ünïcode ✓"},
    )
    d.add_user("I want a comedy", dialogue_acts=[DialogueAct(intent="PRO", slot_values=[["GENRE", "comedy"]])])
    d.add_agent(
        "Try these",
        items=[RecommendedItem(item_id="100030", title="Friends with Benefits (2011)")],
        dialogue_acts=[DialogueAct(intent="REC-S", slot_values=[["TITLE", "Friends with Benefits (2011)", 0, 5]])],
    )
    d.add_agent("oops", error="timeout")
    d.feedback = Feedback(sentiment="satisfied", comment="nice")
    d.set_score("rdl", Score(value=0.5, scorer="rdl", version="1", details={"accepted": 1}))
    d.set_score("core.overall", Score(value=None, scorer="core", version="1", model="fake:fake", error="unparseable"))
    d.end("feedback")
    return d


def test_json_round_trip_is_exact():
    d = make_rich_dialogue()
    again = Dialogue.from_json(d.to_json())
    assert again == d
    assert again.schema_version == SCHEMA_VERSION
    assert again.scores["core.overall"].value is None  # unscored stays unscored, never 0


def test_derived_views():
    d = make_rich_dialogue()
    assert d.num_turns == 1
    assert d.is_simulated
    assert [i.item_id for i in d.recommended_items()] == ["100030"]
    assert d.errors() == ["timeout"]
    assert d.score_values() == {"core.overall": None, "rdl": 0.5}


def test_unknown_fields_and_bad_sentiment_are_rejected():
    with pytest.raises(ValidationError):
        Feedback(sentiment="meh")
    with pytest.raises(ValidationError):
        Dialogue.model_validate({"crs_id": "x", "surprise": 1})


def test_vote_winner():
    v = Vote(battle_id="b", dialogue_a="1", dialogue_b="2", crs_a="kbrd_redial", crs_b="chatcrs_redial", choice="B")
    assert v.winner == "chatcrs_redial"
    assert Vote(**{**v.model_dump(), "choice": "tie"}).winner is None


def test_end_keeps_first_end_time():
    d = Dialogue(crs_id="x")
    d.end("a")
    first = d.ended_at
    d.end("b")
    assert d.ended_at == first and d.end_reason == "b"
    assert isinstance(first, datetime) and first.tzinfo == timezone.utc
