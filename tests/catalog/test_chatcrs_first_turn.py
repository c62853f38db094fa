"""ChatCRS recommends on the first turn whenever asked, and asks only when it has nothing to go on."""

from __future__ import annotations

import pytest

from arena.dialogue import Dialogue
from arena.llm import FakeProvider, LLMClient
from crs.chatcrs import ChatCRS
from arena.conversation.crs_interface import TOP_K_SHOWN


@pytest.fixture
def chatcrs(small_redial, retriever):
    # Grounded mode: the items shown are the recommender's (an LLM-led reply shows what the LLM names).
    return ChatCRS("chatcrs_redial", small_redial, retriever, LLMClient(FakeProvider(lambda request: "Sure!")),
                   mode="grounded")


def first_turn(text: str) -> Dialogue:
    d = Dialogue(crs_id="chatcrs_redial")
    d.add_user(text)
    return d


@pytest.mark.parametrize("text", [
    "any good heist movies with a clever twist?",
    "Can you recommend a classic mob movie?",
    "something like Titanic",
    "I'm in the mood for a big explosive action movie",
    "recommend me something",
])
def test_any_request_gets_items_on_the_first_turn(chatcrs, text):
    _, items = chatcrs.respond(first_turn(text))
    assert len(items) == TOP_K_SHOWN


@pytest.mark.parametrize("text", ["hi", "Hello there!", "how are you today?"])
def test_a_greeting_gets_a_question(chatcrs, text):
    _, items = chatcrs.respond(first_turn(text))
    assert items == []


def test_offline_ranking_keeps_named_titles(chatcrs, small_redial):
    titanic = small_redial.find_title("Titanic (1997)")
    ranked = chatcrs.recommend(first_turn("something like Titanic (1997)"), k=10)
    assert titanic.item_id in {i.item_id for i in ranked}  # rankable offline, excluded live
    _, shown = chatcrs.respond(first_turn("something like Titanic (1997)"))
    assert titanic.item_id not in {i.item_id for i in shown}
