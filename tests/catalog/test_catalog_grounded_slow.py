"""Grounded ChatCRS with the real bundled model (SmolLM2-135M): whatever the model writes, the
reply names only the shown items and the facts are the catalog's."""

from __future__ import annotations

import pytest

from arena.llm import LLMClient, LocalProvider
from crs.chatcrs import ChatCRS, mode_for
from crs.grounded import fact_line
from crs.reply_check import sentence_spans, unshown_titles
from crs.reply_cli import context_dialogue

pytestmark = pytest.mark.slow

CONTEXTS = [
    ["Hi there!"],
    ["I want a scary movie for tonight"],
    ["Hello", "Hi! What do you like?", "Romantic comedies, like Notting Hill or Titanic"],
    ["Something with spaceships and aliens please"],
    ["I loved Toy Story. Anything for my kids?"],
    ["Hi", "What are you in the mood for?", "Tell me about The Matrix and recommend something like it"],
    ["Give me a movie from 1994 directed by Steven Spielberg starring Tom Cruise"],
    ["I hated Alien. What else is good?"],
]


def test_grounded_replies_with_the_bundled_model(small_redial, retriever):
    llm = LLMClient(LocalProvider())
    assert mode_for(llm) == "grounded"
    crs = ChatCRS("chatcrs_redial", small_redial, retriever, llm, mode="grounded")
    connectors = 0
    for context in CONTEXTS:
        text, items = crs.respond(context_dialogue(context, crs))
        shown = [small_redial.get(i.item_id) for i in items]
        assert text and unshown_titles(text, shown, small_redial) == [], text
        numbered = [line for line in text.splitlines() if line[:2] in ("1.", "2.", "3.")]
        for line in numbered:
            item = shown[int(line[0]) - 1]
            for a, b in sentence_spans(line[3:], [(0, len(item.label))]):
                assert line[3:][a:b].strip() in fact_line(item)
        first_line = text.splitlines()[0]
        connectors += crs.grounded.last_connector_problem is None and first_line not in (
            "Here are a few picks for you:", "These might suit you:", "You could try these:"
        )
        for invented in ("1994", "Steven Spielberg", "Tom Cruise"):
            assert invented not in text or any(invented in fact_line(i) for i in shown)
    assert connectors >= 1  # the model does get to speak when its sentence passes the check
