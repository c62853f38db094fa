"""Acts read from more of the ways people put them (messages written for these tests):

- a message that asks for titles and praises one ("Know any good thrillers? Heat was brilliant") is a
  request the liking steers, not a question about the praised title;
- "not too violent please" after a list wishes for the next list; "too violent" alone turns the list down;
- a goodbye as the last words, "we're all done", "have a great rest of your day", "looking forward to
  watching it", "we'll rewatch it", "I'll be giving them a go" close the conversation;
- a compliment to the system is small talk."""

from __future__ import annotations

import pytest

from arena.reading.acts import is_closing, is_small_talk
from crs.dialogue_policy import DialoguePolicy
from tests.support.conversations import conversation

SHOWN = ["Heat (1995)", "Jumanji (1995)", "The Shining (1980)"]


@pytest.fixture(scope="module")
def policy(redial) -> DialoguePolicy:
    return DialoguePolicy(redial)


def read(policy, redial, text):
    return policy.read(conversation(redial, "a film for tonight", SHOWN, text))


@pytest.mark.parametrize("text", [
    "Know any good thrillers? Heat (1995) was brilliant.",
    "Could you find me a comedy for tonight? I did watch Jumanji (1995), loved it",
    "Jumanji (1995) is great!! Others? I'm into adventure films",
    "I'm looking for some dramas, can you help? I adored Heat (1995) and its cast",
])
def test_asking_for_titles_while_praising_one_is_a_request(policy, redial, text):
    move = read(policy, redial, text)
    assert move.act == "request", (text, move.act, move.aspect)


@pytest.mark.parametrize("text, aspect", [
    ("What is Heat (1995) about?", "plot"),
    ("Who is in Jumanji (1995)? I'm looking for something with Robin Williams", "stars"),
])
def test_a_question_about_a_named_title_stays_a_question(policy, redial, text, aspect):
    move = read(policy, redial, text)
    assert (move.act, move.aspect) == ("question", aspect), (text, move.act, move.aspect)


@pytest.mark.parametrize("text", ["not too violent please", "nothing too scary this time, please",
                                  "something that isn't too dark"])
def test_a_negated_too_wishes_for_the_next_list(policy, redial, text):
    move = read(policy, redial, text)
    assert move.act == "request" and not move.state.turned_down, (text, move.act)


def test_too_violent_alone_turns_the_list_down(policy, redial):
    assert read(policy, redial, "those are too violent").act == "reject"


@pytest.mark.parametrize("text", [
    "Is the third one scary? Anyway, thanks a lot. Bye!",
    "Great list, I think we're all done here!",
    "Have a great rest of your day, looking forward to watching Heat",
    "We saw those years ago. Thanks for the tips. We'll rewatch them soon.",
    "Thanks so much. I'll be giving them a go!",
])
def test_more_sign_offs_are_closings(text):
    assert is_closing(text), text


@pytest.mark.parametrize("text", ["Is it long? Also any comedies?", "Thanks, and what about horror?",
                                  "bye the way, any westerns?"])
def test_a_question_that_asks_on_is_no_closing(text):
    assert not is_closing(text), text


@pytest.mark.parametrize("text", ["You're good at this!", "wow you are really helpful", "Nice job!"])
def test_a_compliment_is_small_talk(text):
    assert is_small_talk(text)
