"""A message's act decides the reply: a closing or a choice gets no list, a question about a shown or
named item is answered about that item, and a turned-down item does not come back. The messages are
written for these tests in many wordings; the same rule must hold in ChatCRS (ReDial and OpenDialKG)
and CRB-CRS."""

from __future__ import annotations

import pytest

from arena.llm import FakeProvider, LLMClient
from crs.chatcrs import ChatCRS
from crs.crb_crs import crb_crs_specs
from crs.dialogue_policy import DialoguePolicy
from crs.registry import CRSRegistry
from tests.catalog.test_chatcrs_policy import talk
from tests.support.conversations import conversation

# {1}, {2}, {3}: the titles shown, in order (short forms as a person types them).
CLOSINGS = [
    ("Thanks, I'll watch {3} tonight.", 3), ("perfect, we'll go with the second one", 2),
    ("{1} it is! cheers", 1), ("I think I'll check out {2}. Have a good one.", 2),
    ("awesome, that's exactly what I needed", None), ("Thank you so much for the help!", None),
    ("Great, appreciate it. Bye now", None), ("You too! Thanks!", None), ("Thanks for your suggestion too", None),
    ("have a lovely evening", None), ("ok, thats a great start....i appreciate the help have a great day goodbye", None),
    ("{3} sounds perfect, thanks a lot", 3), ("I'll give {1} a try, thank you", 1),
    ("Much appreciated, I'm off to watch it", None), ("Alright, the first one it is.", 1),
    ("I'm going to watch {2} this weekend, thanks for the tip", 2), ("cool, that works for me. thanks!", None),
    ("That's perfect, thank you kindly", None), ("Nice, I'll add those to my list. Cheers!", None),
    ("we will check it out! thanks bye", None), ("Thanks, you've been really helpful", None),
    ("Great suggestions, thank you. Goodbye!", None), ("ok I will watch the third one. thank you", 3),
    ("Sounds like a plan, thanks", None), ("I love it, thank you", None),
]
NEAR_MISSES = [
    "thanks, any more like that?", "Thanks! Could you suggest something scarier?",
    "I'll watch {3}, but do you have anything for adults too?", "great, what else do you have?",
    "thanks, what is the second one about?", "Thank you. Who is in {1}?",
    "Sounds good, but I've seen {1}. Something else?", "perfect, now one more for my wife please",
    "thanks, and a comedy from the 80s?", "cool, can you also recommend a horror movie?",
    "I'll check it out. Any similar ones?", "thanks! is {2} too scary for kids?",
    "Thanks but I have seen all of those", "that's great but I'd prefer something newer",
    "thank you, maybe something with Tom Hanks?", "good pick. anything else in that vein?",
    "Thanks, but not really my thing. Any thrillers?", "appreciate it! got any sci-fi too?",
    "bye the way, do you know any good westerns?", "thanks. when did the first one come out?",
    "ok thanks, and what about a musical?", "thanks, my son loves dinosaurs",
    "Thanks, but the kids are only 5", "thank you! I'd prefer something from the 90s though",
    "cheers, and maybe a documentary next", "What about a comedy?", "is there anything newer?",
]
# (message, the position of the item it asks about)
QUESTIONS = [
    ("what is it about?", 1), ("who is in the second one?", 2), ("tell me more about {3}", 3),
    ("Tell me more about {2}", 2), ("what's the last one about?", 3), ("is the first one scary?", 1),
    ("who directed that one?", 1), ("and the third? who stars in it?", 3), ("What year did the second come out?", 2),
    ("Can you tell me about {1}?", 1), ("what's {3} about?", 3), ("who's the director of the third one", 3),
    ("Tell me a bit about the second film", 2), ("Is {3} suitable for a 6 year old?", 3),
    ("who plays in the last one?", 3), ("more info on the second one please", 2), ("What's the story of {1}?", 1),
    ("how long ago was the first one made?", 1), ("who wrote the third one?", 3),
    ("I don't know that one, what is the second about?", 2), ("How was the second one?", 2),
    ("what do you think of {3}?", 3), ("No, does it have a happy ending? I don't care for tear jerkers", 1),
    ("I don't think I've seen that one. Who else stars in it?", 1), ("What is the movie about?", 1),
    ("Is the last one any good?", 3),
]
SHOWN = {"redial": (["Jumanji (1995)", "The Shining (1980)", "Zootopia"], ["Jumanji", "The Shining", "Zootopia"]),
         "opendialkg": (["The Matrix (1999)", "Titanic (1997)", "Shrek (2001)"], ["The Matrix", "Titanic", "Shrek"])}


def _fill(text: str, names: list[str]) -> str:
    return text.format("", *names)


@pytest.fixture(scope="module", params=["redial", "opendialkg"])
def setting(request, redial, opendialkg):
    catalog = {"redial": redial, "opendialkg": opendialkg}[request.param]
    labels, names = SHOWN[request.param]
    return DialoguePolicy(catalog), catalog, labels, names


def _read(setting, text: str):
    policy, catalog, labels, names = setting
    return policy.read(conversation(catalog, "a film for tonight", labels, _fill(text, names)))


@pytest.mark.parametrize("text, chosen", CLOSINGS)
def test_a_closing_or_a_choice_is_read_as_one(setting, text, chosen):
    move = _read(setting, text)
    assert move.act in ("end", "accept"), (text, move.act)
    if chosen is not None:
        assert [i.label for i in move.about] == [setting[2][chosen - 1]]


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_a_message_that_asks_for_more_is_no_closing(setting, text):
    assert _read(setting, text).act not in ("end", "accept"), text


@pytest.mark.parametrize("text, position", QUESTIONS)
def test_a_question_about_a_shown_item_is_about_that_item(setting, text, position):
    move = _read(setting, text)
    assert move.act == "question" and move.about, (text, move.act)
    assert move.about[0].label == setting[2][position - 1]


def test_a_question_about_all_shown_items_is_about_them_all(setting):
    move = _read(setting, "does anyone die in those movies?")
    assert move.act == "question" and [i.label for i in move.about] == setting[2]


# -- through the three systems -------------------------------------------------------------------

@pytest.fixture(scope="module")
def systems(small_redial, retriever):
    # ChatCRS OpenDialKG reads messages with the same policy, tested above over the OpenDialKG catalog; its
    # ranker needs the whole catalog, too slow to embed in a test, so the systems run over a ReDial sample.
    llm = LLMClient(FakeProvider(lambda request: "I'm sorry for your loss."))
    crb = CRSRegistry([crb_crs_specs(lambda: LLMClient(FakeProvider([])), retriever.cache_dir,
                                     catalog_loader=lambda name: small_redial)[0]]).get("crb_crs_redial")
    return {"chatcrs_redial": ChatCRS("chatcrs_redial", small_redial, retriever, llm, mode="grounded"),
            "crb_crs_redial": crb}


SYSTEMS = ["chatcrs_redial", "crb_crs_redial"]
REQUEST = "a funny adventure film please"


@pytest.mark.parametrize("name", SYSTEMS)
@pytest.mark.parametrize("closing", ["Thanks, I'll watch the second one tonight.", "Thank you so much for the help!",
                                     "Much appreciated, I'm off to watch it", "Alright, the first one it is.",
                                     "You too! Thanks!"])
def test_no_system_answers_a_closing_with_a_list(systems, name, closing):
    d, text, items = talk(systems[name], REQUEST, closing)
    assert d.agent_turns()[0].items and items == [], (name, closing, text)


@pytest.mark.parametrize("name", SYSTEMS)
@pytest.mark.parametrize("near_miss", ["thanks, any more like that?", "great, what else do you have?"])
def test_every_system_answers_a_request_after_thanks_with_items(systems, name, near_miss):
    d, _, items = talk(systems[name], REQUEST, near_miss)
    assert items and not {i.item_id for i in items} <= {i.item_id for i in d.agent_turns()[0].items}


# CRB-CRS shows one title a turn, so its questions point at that one.
ASKED = {"chatcrs_redial": [("How was the second one?", 1), ("who is in the third one?", 2),
                            ("tell me more about {first}", 0), ("What is the movie about?", 0)],
         "crb_crs_redial": [("How was it?", 0), ("who is in that one?", 0), ("tell me more about {first}", 0),
                            ("What is the movie about?", 0)]}


@pytest.mark.parametrize("name, question, position", [(n, q, p) for n, asked in ASKED.items() for q, p in asked])
def test_every_system_answers_about_the_item_referred_to(systems, name, question, position):
    d, text, items = talk(systems[name], REQUEST, question)
    asked = d.agent_turns()[0].items[position].item_id
    assert [i.item_id for i in items] == [asked], (name, question, text)


@pytest.mark.parametrize("name, turn_down, position", [
    ("chatcrs_redial", "not the second one, I didn't like it. Something else?", 1),
    ("crb_crs_redial", "I didn't like that one. Something else?", 0)])
def test_a_turned_down_item_never_comes_back(systems, name, turn_down, position):
    d, _, _ = talk(systems[name], REQUEST, turn_down, "more like that please", "any others?", "and another")
    down = d.agent_turns()[0].items[position].item_id
    assert all(down not in {i.item_id for i in turn.items} for turn in d.agent_turns()[1:])


def test_a_polite_request_for_a_plot_is_a_question(setting):
    move = _read(setting, "Please tell me what {2} is about")
    assert move.act == "question" and move.aspect == "plot" and move.about[0].label == setting[2][1]


@pytest.mark.parametrize("message, position", [
    ("what's no. 3 about?", 2), ("who is in number two", 1), ("tell me more about #1", 0)])
def test_a_position_said_by_its_number_is_the_item_shown_there(policy, redial, message, position):
    # "What is number 2 about" was answered "I don't have 2 in my catalog"
    from tests.support.conversations import read

    shown = ["Die Hard (1988)", "Toy Story (1995)", "The Matrix (1999)"]
    move = read(policy, redial, "a few films for the weekend", shown, message)
    assert move.act == "question" and [i.label for i in move.about] == [shown[position]]
