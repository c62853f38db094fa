"""The conversation's state: read once per message, stored with each system turn, resumed from,
exported; references resolved against it; the act planned before the words."""

from __future__ import annotations

import pytest

from arena.catalogs.catalog import load_catalog
from arena.corpus.dialoguekit import from_record, to_dialoguekit
from arena.dialogue import Dialogue
from arena.conversation.dialogue_state import DialogueState
from crs.dialogue_policy import DialoguePolicy
from crs.item_answers import answer, list_opening
from arena.reading.constraints import Constraints
from tests.support.conversations import conversation


@pytest.fixture(scope="module")
def redial():
    return load_catalog("redial")


@pytest.fixture(scope="module")
def policy(redial):
    return DialoguePolicy(redial)


def _stored(policy, catalog, *turns) -> Dialogue:
    """A conversation whose system turns carry the state the policy stored with them."""
    d = Dialogue(crs_id="test")
    for n, turn in enumerate(turns):
        if n % 2 == 0:
            d.add_user(turn)
            continue
        move = policy.read(d)
        shown = [catalog.find_title(label) for label in turn]
        d.add_agent("Here.", items=[i.to_recommended() for i in shown],
                    state=policy.state_after(move, shown, d))
    return d


def test_a_stored_state_is_resumed_and_reads_only_the_new_message(policy, redial):
    turns = ("action movies with Arnold Schwarzenegger", ["The Terminator (1984)", "Predator (1987)"],
             "something more recent")
    stored = _stored(policy, redial, *turns)
    folded = conversation(redial, *turns)
    assert policy.resume(stored)[1] == 2 and policy.resume(folded)[1] == 0
    a, b = policy.read(stored).state, policy.read(folded).state
    assert a.constraints == b.constraints
    slots = {(c.slot, c.value, c.polarity) for c in a.constraints}
    assert ("person", "Arnold Schwarzenegger", "want") in slots and ("genre", "action", "want") in slots
    assert any(c.slot == "era" for c in a.constraints)
    assert [s.position for s in a.shown] == [1, 2]


def test_a_state_that_is_not_the_turns_own_is_not_resumed(policy, redial):
    stored = _stored(policy, redial, "a comedy", ["Airplane! (1980)"], "any others?")
    stored.utterances[1].items = []  # the turn no longer shows what its state says it showed
    assert policy.resume(stored)[1] == 0


def test_the_state_round_trips_through_json_and_the_export(policy, redial):
    d = _stored(policy, redial, "a comedy from the 90s", ["Dumb and Dumber (1994)", "Clueless (1995)"], "thanks")
    again = Dialogue.from_json(d.to_json())
    assert again.utterances[1].state == d.utterances[1].state
    assert isinstance(again.utterances[1].state, DialogueState)
    record = to_dialoguekit(d)
    assert record["conversation"][1]["state"]["constraints"]
    assert from_record(record).utterances[1].state == d.utterances[1].state


def test_start_over_clears_and_a_refinement_replaces(policy, redial):
    move = policy.read(conversation(redial, "horror from the 80s", ["The Shining (1980)"],
                                    "start over, a romantic comedy please"))
    assert move.constraints.genres == {"comedy", "romance"} and move.constraints.years is None


def test_unknown_words_never_become_topics(policy, redial):
    for text in ("I'm feeling nostalgic, give me a classic black and white movie.",
                 "What about one where he plays a darker role?"):
        move = policy.read(conversation(redial, text))
        assert not move.constraints.subjects, text
    move = policy.read(conversation(redial, "a classic black and white movie"))
    assert move.constraints.years is not None and move.constraints.years[1] <= 1965
    assert "nostalgic" in policy.read(conversation(redial, "something nostalgic please")).state.wanted("mood")


def test_pre_decade_is_before_it(policy, redial):
    assert policy.read(conversation(redial, "pre-90s sci-fi please")).constraints.years == (1800, 1989)


def test_ordinals_and_the_first_two_resolve_against_the_shown_list(policy, redial):
    shown = ["Alien (1979)", "Aliens (1986)", "The Terminator (1984)"]
    move = policy.read(conversation(redial, "sci-fi", shown, "tell me about the first two"))
    assert move.act == "question" and [i.label for i in move.about] == shown[:2]
    move = policy.read(conversation(redial, "sci-fi", shown, "who directed the third one?"))
    assert [i.label for i in move.about] == ["The Terminator (1984)"]


def test_a_choice_in_a_closing_is_taken_and_gets_no_list(policy, redial):
    shown = ["Alien (1979)", "Aliens (1986)"]
    move = policy.read(conversation(redial, "sci-fi", shown, "I'll go with the second one, thanks!"))
    assert move.act == "accept" and [i.label for i in move.about] == ["Aliens (1986)"]


def test_praise_that_asks_on_is_a_request(policy, redial):
    move = policy.read(conversation(
        redial, "a horror movie", ["A Nightmare on Elm Street (1984)", "The Shining (1980)"],
        "A Nightmare on Elm Street sounds cool but I don't like slasher movies, something supernatural please."))
    assert move.act in ("request", "reject")  # a list under the new wish, not "enjoy it"


def test_it_refers_to_the_item_in_focus_after_an_answer(policy, redial):
    d = _stored(policy, redial, "a horror movie", ["The Shining (1980)", "Alien (1979)"],
                "who directed the first one?", [], "is it scary?")
    move = policy.read(d)
    assert move.act == "question" and [i.label for i in move.about] == ["The Shining (1980)"]


def test_a_message_for_something_else_is_asked_back_not_guessed(policy, redial):
    move = policy.read(conversation(redial, "Can you write me a poem?"))
    assert move.act == "clarify" and move.state.understood.endswith("?")
    assert policy.read(conversation(redial, "recommend me a movie")).act == "request"


def test_answers_say_it_plainly_from_the_right_field(redial):
    shining, toy = redial.find_title("The Shining (1980)"), redial.find_title("Toy Story (1995)")
    scary = answer("genres", [shining], "is it scary?")[0]
    assert scary.startswith("Yes") and "catalog" not in scary
    assert answer("genres", [toy], "is it scary?")[0].startswith("Not really")
    assert answer("year", [toy])[0].startswith("Toy Story came out in 1995.")
    assert "8-year-old" in answer("suitability", [toy], "ok for my 8 year old?")[0]
    doc = answer("genres", [toy], "Is Toy Story a documentary?")[0]
    assert doc.startswith("No") and "animation" in doc


def test_headings_are_short_and_say_leaving_out_only_when_something_was_turned_down():
    c = Constraints(genres=frozenset({"comedy", "family", "fantasy"}), for_children=True, years=(1990, 1999),
                    unwanted_genres=frozenset({"animation", "horror"}))
    opening = list_opening("request", c, 0)
    assert len(opening.split()) <= 10, opening
    assert "leave those out" not in list_opening("reject", c, 0, turned_down=False)
    assert "leave those out" in list_opening("reject", c, 0, turned_down=3)
    assert "leave that one out" in list_opening("reject", c, 0, turned_down=1)  # "seen the first one"


def _llm_policy(redial, answers):
    from arena.llm import FakeProvider, LLMClient
    from crs.state_reader import LLMStateReader

    policy = DialoguePolicy(redial)
    policy.state_reader = LLMStateReader(LLMClient(FakeProvider(list(answers))), redial)
    return policy


def test_the_llm_reader_gives_the_state_when_its_answer_checks_out(redial):
    good = ('{"act": "request", "constraints": [{"slot": "genre", "value": "comedy", "polarity": "want"}, '
            '{"slot": "era", "value": "1990-1999", "polarity": "want"}]}')
    policy = _llm_policy(redial, [good])
    move = policy.read(conversation(redial, "something to laugh at from back when I was a kid in the nineties"))
    assert move.constraints.genres == {"comedy"} and move.constraints.years == (1990, 1999)
    assert move.state.reader.startswith("llm:")


@pytest.mark.parametrize("bad", [
    "not json at all",
    '{"act": "request", "constraints": [{"slot": "subject", "value": "white", "polarity": "want"}]}',
    '{"act": "request", "constraints": [{"slot": "person", "value": "Nobody Atall", "polarity": "want"}]}',
    '{"act": "question", "aspect": "director", "refers_to": [7]}',
    '{"act": "dance"}',
])
def test_a_bad_llm_answer_falls_back_to_the_offline_reader(redial, bad):
    policy = _llm_policy(redial, [bad])
    move = policy.read(conversation(redial, "a comedy from the 90s"))
    assert move.constraints.genres == {"comedy"} and move.constraints.years == (1990, 1999)
    assert not move.state.reader.startswith("llm:") and policy.state_reader.refused == 1


def test_a_darker_role_rules_out_childrens_films_and_is_no_topic(policy, redial):
    move = policy.read(conversation(redial, "a movie with Tom Hanks", ["Toy Story (1995)", "Big (1988)"],
                                    "What about one where he plays a darker role?"))
    assert {"animation", "family"} <= move.constraints.unwanted_genres and not move.constraints.subjects
    assert move.constraints.people == {"Tom Hanks"}


def test_a_child_named_in_a_question_does_not_hold_for_a_new_request(policy, redial):
    turns = ("an animated film", ["Coco (2017)"], "Is Coco suitable for my 8 year old?", ["Coco (2017)"])
    assert policy.read(conversation(redial, *turns, "another one?")).constraints.for_children
    later = policy.read(conversation(redial, *turns, "now a crime thriller for me"))
    assert not later.constraints.for_children


def test_which_would_you_pick_answers_from_the_list_shown(policy, redial):
    shown = ["Alien (1979)", "Aliens (1986)"]
    move = policy.read(conversation(redial, "sci-fi", shown, "which would you pick?"))
    assert move.act == "question" and move.aspect == "pick"
    text, items = answer(move.aspect, move.about, move.text)
    assert [i.label for i in items] == ["Alien (1979)"] and text.startswith("I'd go with Alien (1979).")


@pytest.mark.parametrize("shown, text, about", [
    (["Up (2009)", "Coco (2017)"], "what is Up about?", ["Up (2009)"]),
    (["Her (2013)", "Titanic (1997)"], "who directed Her?", ["Her (2013)"]),
    (["Coco (2017)", "Frozen (2013)"], "I'm up for anything, something funny", []),
    (["Her (2013)", "Titanic (1997)"], "my wife loves her romance films, something like that", []),
])
def test_one_word_titles_count_only_when_they_refer_to_a_shown_item(policy, redial, shown, text, about):
    move = policy.read(conversation(redial, "a film", shown, text))
    assert [i.label for i in move.about] == about


def test_which_is_newer_compares_the_years_of_the_list(policy, redial):
    move = policy.read(conversation(redial, "a romance", ["Titanic (1997)", "The Notebook (2004)"],
                                    "which of those is newer?"))
    text, _ = answer(move.aspect, move.about, move.text)
    assert text.startswith("The Notebook (2004) is the newest")


def test_an_ordinal_after_an_answer_points_into_the_last_list(policy, redial):
    shown = ["Alien (1979)", "Aliens (1986)", "The Terminator (1984)"]
    d = _stored(policy, redial, "sci-fi", shown, "who directed the first one?", ["Alien (1979)"],
                "and the third one?")
    move = policy.read(d)
    assert [i.label for i in move.about] == ["The Terminator (1984)"]
    d = _stored(policy, redial, "sci-fi", shown, "who directed the first one?", ["Alien (1979)"],
                "I've seen the second one, anything else?")
    state = policy.read(d).state  # seen or turned down: either way it stays out of the next list
    assert redial.find_title("Aliens (1986)").item_id in set(state.seen) | set(state.turned_down)
    assert redial.find_title("Alien (1979)").item_id not in set(state.seen) | set(state.turned_down)


@pytest.mark.parametrize("text, genre", [("a horor movie please", "horror"), ("some good comdy", "comedy"),
                                         ("a thriler from the 90s", "thriller")])
def test_a_misspelt_genre_is_the_genre_meant(policy, redial, text, genre):
    assert policy.read(conversation(redial, text)).constraints.genres == {genre}


def test_a_real_word_near_a_genre_word_stays_itself(policy, redial):
    assert "horror" not in policy.read(conversation(redial, "Horrible day, any comedy?")).constraints.genres
