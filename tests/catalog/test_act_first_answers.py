"""The act of a message planned before its words, and answers taken from the field asked about:
a request phrased as a question, a negation that qualifies a wish rather than turning the list
down, questions about every shown item, fields no catalog records, reasons for a list, a pick
among a named title's series, and a filter the reader's vocabulary does not cover."""

from __future__ import annotations

import pytest

from crs.dialogue_policy import DialoguePolicy
from crs.shown_filter import answer_move
from tests.support.conversations import read

SHOWN = ["Die Hard (1988)", "Toy Story (1995)", "The Matrix (1999)"]
OPENING = "a few films for the weekend"


@pytest.fixture(scope="module")
def model_policy(redial):
    """The policy reading acts with the project's learnt act model (which reads a turn-down into most
    negations, so the policy must tell a wish's negation from one aimed at the list)."""
    from evaluators.acts.intent_readers import UserActReader

    return DialoguePolicy(redial, reader=UserActReader())


def test_a_question_about_an_item_not_yet_shown_is_a_request_with_that_person(policy, redial):
    move = read(policy, redial, OPENING, SHOWN, "Perhaps a film that stars Tom Hanks?")
    assert move.act == "request"
    assert "tom hanks" in {p.lower() for p in move.constraints.people}


def test_a_question_about_the_shown_item_still_gets_its_cast(policy, redial):
    move = read(policy, redial, OPENING, SHOWN, "who stars in the third one?")
    assert (move.act, move.aspect, [i.label for i in move.about]) == ("question", "stars", ["The Matrix (1999)"])


def test_a_negation_that_qualifies_the_wish_is_no_turn_down_of_the_list(model_policy, redial):
    move = read(model_policy, redial, OPENING, SHOWN, "I'd enjoy ghost stories that aren't too bloody")
    assert move.act == "request"
    assert move.state.turned_down == []


def test_a_negation_aimed_at_the_list_still_turns_it_down(model_policy, redial):
    move = read(model_policy, redial, OPENING, SHOWN, "Hmm, those aren't what I had hoped for")
    assert move.act == "reject"


@pytest.mark.parametrize("message", ["none of those, others?", "Neither of them. Got anything else?",
                                     "none of these work for me"])
def test_the_list_turned_down_as_a_whole_is_a_turn_down_even_asked_as_a_question(model_policy, redial, message):
    """"none of those, others?" was read as a question about the three shown and answered with their plots."""
    move = read(model_policy, redial, OPENING, SHOWN, message)
    assert move.act == "reject", (message, move.act, move.aspect)


def test_a_wish_with_its_own_negation_after_a_list_is_a_request(model_policy, redial):
    move = read(model_policy, redial, OPENING, SHOWN, "Something with vampires, but no gore")
    assert move.act == "request"


def test_a_misspelt_field_word_about_every_shown_item_says_the_catalog_lacks_it(policy, redial):
    move = read(policy, redial, OPENING, SHOWN, "what are the imdb raitngs of these?")
    assert move.aspect == "rating" and [i.label for i in move.about] == SHOWN
    text, named = answer_move(move)
    assert "doesn't record ratings" in text and [i.label for i in named] == SHOWN


def test_a_question_on_awards_says_the_catalog_has_none_and_what_it_has(policy, redial):
    move = read(policy, redial, OPENING, SHOWN, "did the first one win any Oscars?")
    assert (move.aspect, [i.label for i in move.about]) == ("unrecorded", ["Die Hard (1988)"])
    text, _ = answer_move(move)
    assert "doesn't record awards" in text and "John McTiernan" in text


def test_the_shortest_of_the_shown_items_is_a_runtime_question_about_all_of_them(policy, redial):
    move = read(policy, redial, OPENING, SHOWN, "which of these runs shortest?")
    assert move.aspect == "runtime" and len(move.about) == 3
    text, _ = answer_move(move)
    assert text.startswith("I don't know that: my catalog doesn't record running times.")


def test_why_a_list_was_made_gives_the_constraints_and_each_record(policy, redial):
    move = read(policy, redial, "some comedies please", SHOWN, "how did you choose those?")
    assert (move.act, move.aspect) == ("question", "why")
    text, named = answer_move(move)
    assert "what you asked for (comedy)" in text and "Toy Story (1995) is an animation" in text and len(named) == 3


def test_the_best_of_a_named_series_is_a_pick_among_that_series(policy, redial):
    move = read(policy, redial, OPENING, ["Speed (1994)", "John Wick (2014)"], "which is the best Toy Story film?")
    assert (move.act, move.aspect) == ("question", "pick")
    text, named = answer_move(move)
    assert len(named) == 1 and named[0].title.startswith("Toy Story") and text.startswith("I'd go with")


def test_a_filter_in_words_no_rule_reads_answers_from_the_shown_records(policy, redial):
    move = read(policy, redial, OPENING, SHOWN, "do any of those have talking toys?")
    assert (move.act, move.aspect) == ("question", "filter_words")
    text, named = answer_move(move)
    by_plot = [i.label for i in move.about]
    assert by_plot == ["Toy Story (1995)"]
    assert named == move.about and text.startswith("Toy Story (1995) touches on toys, going by the catalog.")


def test_a_filter_in_words_no_shown_record_bears_says_so_and_shows_nothing(policy, redial):
    move = read(policy, redial, OPENING, SHOWN, "do any of those feature a skyscraper siege?")
    text, named = answer_move(move)
    assert move.aspect == "filter_words" and move.about == []
    assert "none of the ones I showed mentions skyscraper or siege" in text
    assert [i.label for i in named] == SHOWN and "Die Hard (1988): " in text  # what is known instead


def test_the_best_of_a_series_no_title_names_is_a_request(policy, redial):
    move = read(policy, redial, OPENING, SHOWN, "what is the best Italian movie?")  # not "The Italian Job"
    assert move.act == "request"


def test_a_pick_after_an_answer_picks_from_the_last_list(policy, redial):
    move = read(policy, redial, OPENING, SHOWN, "who directed the second one?", ["Toy Story (1995)"],
                "which of them would you choose?")
    assert (move.act, move.aspect) == ("question", "pick")
    assert [i.label for i in move.about] == SHOWN


def test_a_dislike_that_names_a_genre_is_a_wish_for_the_next_list(model_policy, redial):
    move = read(model_policy, redial, OPENING, SHOWN, "Honestly I can't stand westerns")
    assert move.act == "request" and "western" in move.constraints.unwanted_genres
    move = read(model_policy, redial, OPENING, SHOWN, "Honestly I can't stand those")
    assert move.act == "reject"


def test_a_question_about_a_title_the_catalog_lacks_says_so_without_a_list(policy, redial):
    move = read(policy, redial, OPENING, SHOWN, "And what is Zorblax Returns about?")
    assert (move.act, move.aspect, move.about) == ("question", "unknown_title", [])
    text, named = answer_move(move)
    assert named == [] and text.startswith("I don't have Zorblax Returns in my catalog")


def test_only_a_question_word_no_title_uses_is_put_right_as_a_field(policy):
    assert policy._spelled("what are the ratngs of those?") == "what are the ratings of those?"
    assert "rings" in policy._spelled("anything like the lord of the rings?")  # a title's word stays
    assert policy._spelled("ratngs matter little to me") == "ratngs matter little to me"  # no question


def test_a_field_question_with_nothing_to_refer_to_asks_which_title(policy, redial):
    move = read(policy, redial, "hello there", [], "and who directed it?")
    assert move.act == "clarify"
    assert move.state.understood == ("You're asking who directed it, but I'm not sure which title you mean. "
                                     "Which one should I look up?")


def test_why_these_were_recommended_is_a_question_about_the_list(policy, redial):
    move = read(policy, redial, "some comedies please", SHOWN, "so why would you recommend those to me?")
    assert (move.act, move.aspect, len(move.about)) == ("question", "why", 3)


def test_what_a_genre_is_gets_its_meaning_and_an_offer_not_a_list(policy, redial):
    move = read(policy, redial, OPENING, SHOWN, "Sorry, what is a western movie?")
    assert (move.act, move.aspect) == ("question", "define:western")
    text, named = answer_move(move)
    assert named == [] and text.startswith("A western film is one set in the American frontier")
    assert read(policy, redial, OPENING, SHOWN, "what is a good western movie?").act == "request"


def test_a_negation_typed_with_another_apostrophe_still_rules_the_genre_out(policy, redial):
    move = read(policy, redial, OPENING, SHOWN, "I don´t want westerns")
    assert "western" in move.constraints.unwanted_genres and "western" not in move.constraints.genres


def test_where_to_stream_them_is_no_filter_but_a_field_no_catalog_records(policy, redial):
    move = read(policy, redial, OPENING, SHOWN, "are any of those on Netflix?")
    assert move.aspect == "unrecorded" and len(move.about) == 3
    text, _ = answer_move(move)
    assert text.startswith("I don't know that: my catalog doesn't record where it can be watched.")


def test_asked_to_hand_over_a_true_story_is_a_request_not_a_question_on_the_shown(policy, redial):
    move = read(policy, redial, OPENING, SHOWN, "not that one, could you find me a true story instead?")
    assert move.act != "question"
    assert read(policy, redial, OPENING, SHOWN, "is the first one a true story?").aspect == "true_story"
