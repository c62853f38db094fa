"""A conversation's first write on both backends: inserted once, whoever else writes the same id first.
(On PostgreSQL the driver reports no row count for INSERT ... ON CONFLICT DO NOTHING; the store used to
read that as "inserted", so a second first write of the same id passed as if it had stored.)"""

from __future__ import annotations

import pytest

from arena.dialogue import Dialogue, UserInfo, UserKind
from arena.store import DialogueChanged


def chat(user: str = "p-1") -> Dialogue:
    return Dialogue(crs_id="alpha", user=UserInfo(kind=UserKind.HUMAN, id=user), metadata={"source": "chat"})


def test_a_second_first_write_of_the_same_conversation_is_refused(store):
    first = chat()
    assert store.save_dialogue_checked(first, 0) == 1
    other = first.model_copy(deep=True)
    other.metadata["source"] = "elsewhere"
    with pytest.raises(DialogueChanged, match="stored meanwhile"):
        store.save_dialogue_checked(other, 0)
    assert store.get_dialogue(first.dialogue_id).metadata["source"] == "chat"
    assert store.current_dialogue(first.dialogue_id).version == 1


def test_conversations_created_once_count_only_the_new_ones(store):
    a, b = chat(), chat()
    assert store.create_dialogues_once([a, b]) == 2
    again = a.model_copy(deep=True)
    again.crs_id = "bravo"
    assert store.create_dialogues_once([again, chat()]) == 1
    assert store.get_dialogue(a.dialogue_id).crs_id == "alpha"
    assert store.current_dialogue(a.dialogue_id).version == 1
