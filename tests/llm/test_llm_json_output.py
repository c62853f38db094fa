"""The one reader of JSON objects in model answers."""

from arena.llm.json_output import json_object, json_objects


def test_plain_fenced_and_surrounded_objects():
    assert json_object('{"intents": ["REC"]}') == {"intents": ["REC"]}
    assert json_object('Sure!\n```json\n{"a": 1}\n```\nHope that helps.') == {"a": 1}
    assert json_object('My answer: {"a": {"b": 2}} -- done') == {"a": {"b": 2}}


def test_the_quirks_models_write():
    assert json_object("{“score”: 70}") == {"score": 70}  # typographic quotes
    assert json_object("{'score': 70, 'ok': True}") == {"score": 70, "ok": True}  # a Python literal
    assert json_object('{"statement": "line one\nline two"}') == {"statement": "line one\nline two"}


def test_several_objects_in_text_order_and_nothing_guessed():
    assert json_objects('{"a": 1} then {"b": 2}') == [{"a": 1}, {"b": 2}]
    assert json_object("no object here") is None
    assert json_object('{"broken": ') is None
    assert json_object("") is None and json_object(None) is None
    assert json_object("[1, 2]") is None
