"""ChatCRS and CRB-CRS act on the user's act: farewells, answers, turn-downs, constraints."""

from __future__ import annotations

import pytest

from arena.catalogs.catalog import Catalog
from arena.dialogue import Dialogue
from arena.llm import FakeProvider, LLMClient
from crs.chatcrs import ChatCRS
from arena.reading.constraints import child_friendly, has_genre
from crs.crb_crs import CRBCRS, crb_crs_specs
from crs.registry import CRSRegistry


@pytest.fixture(scope="module")
def chatcrs(small_redial, retriever):
    # The model condoles whatever it is told: its sentence must never reach a reply.
    llm = LLMClient(FakeProvider(lambda request: "I'm sorry for your loss."))
    return ChatCRS("chatcrs_redial", small_redial, retriever, llm, mode="grounded")


@pytest.fixture(scope="module")
def crb(small_redial: Catalog, retriever) -> CRBCRS:
    spec = crb_crs_specs(lambda: LLMClient(FakeProvider([])), retriever.cache_dir,
                         catalog_loader=lambda name: small_redial)[0]
    return CRSRegistry([spec]).get("crb_crs_redial")


def talk(system, *messages: str) -> tuple[Dialogue, str, list]:
    d = Dialogue(crs_id=system.name)
    for message in messages:
        shown = [i for u in d.agent_turns() for i in u.items]
        if "{first}" in message:
            message = message.replace("{first}", d.agent_turns()[0].items[0].title if shown else "it")
        d.add_user(message)
        text, items = system.respond(d)
        d.add_agent(text, items=items)
    last = d.agent_turns()[-1]
    return d, last.text, [system.catalog.get(i.item_id) for i in last.items]


@pytest.mark.parametrize("system_name", ["chatcrs", "crb"])
def test_a_closing_gets_a_farewell_and_no_list(request, system_name):
    system = request.getfixturevalue(system_name)
    _, text, items = talk(system, "a space adventure please", "thanks, bye!")
    assert items == [] and "bye" in text.lower()


@pytest.mark.parametrize("system_name", ["chatcrs", "crb"])
def test_a_question_is_answered_from_the_catalog_entry(request, system_name):
    system = request.getfixturevalue(system_name)
    d, text, items = talk(system, "a space adventure please", "Who directed {first}?")
    asked = system.catalog.get(d.agent_turns()[0].items[0].item_id)
    assert items == [asked]
    assert any(name in text for name in asked.people.get("director", ())) or "does not say" in text


@pytest.mark.parametrize("system_name", ["chatcrs", "crb"])
def test_a_turned_down_item_is_not_offered_again(request, system_name):
    system = request.getfixturevalue(system_name)
    d, _, items = talk(system, "a space adventure please", "I've seen {first}, didn't like it. Something else")
    first = d.agent_turns()[0].items[0].item_id
    assert items and first not in {i.item_id for i in items}


@pytest.mark.parametrize("system_name", ["chatcrs", "crb"])
def test_children_in_the_audience_keep_every_list_child_friendly(request, system_name):
    system = request.getfixturevalue(system_name)
    _, _, items = talk(system, "Movie night with my kids, they are 6 and 9", "more please")
    assert items and all(child_friendly(i) for i in items)


def test_a_ruled_out_genre_stays_out(chatcrs):
    _, _, items = talk(chatcrs, "something scary but no horror please", "any others?")
    assert items and not any(has_genre(i, "horror") for i in items)


def test_a_misfiring_model_sentence_is_left_out(chatcrs):
    _, text, items = talk(chatcrs, "a romantic movie")
    assert items and "sorry" not in text.lower()
