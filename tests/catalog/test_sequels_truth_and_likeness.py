"""Readings met on real seekers' turns, tested in wording written for these tests: a title held up as a
model keeps its own sequels out (they share a title word and the leads); other ways to say "a true story";
a season's greeting is no subject; a genre said alone in a complaint is still wanted, and a title said not
to be of a genre asks for that genre; "have you seen X" without its question mark is a question; "is it
like X?" sets the item referred to beside X; praise of what was given is no complaint."""

from __future__ import annotations

import pytest

from arena.catalogs.catalog import Catalog
from arena.reading.acts import REJECTION, is_closing, likens_referred, with_question_marks
from arena.reading.constraints import Constraints, subjects_phrase, update
from arena.reading.subjects import subjects_asked
from crs.franchises import Franchises
from tests.catalog.test_chatcrs_policy import talk
from tests.catalog.test_ranker_reads_what_is_left import chatcrs  # noqa: F401


def _item(catalog: Catalog, name: str):
    return next(i for i in catalog if i.name == name)


@pytest.mark.parametrize(("liked", "sequel"), [
    ("Finding Nemo (2003)", "Finding Dory (2016)"),
    ("Monsters, Inc. (2001)", "Monsters University (2013)"),
])
def test_a_sequel_with_a_new_head_is_the_same_series(redial, liked, sequel):
    series = {i.name for i in Franchises(redial).franchise(_item(redial, liked))}
    assert sequel in series


def test_a_shared_title_word_without_shared_leads_is_no_series(redial):
    series = {i.name for i in Franchises(redial).franchise(_item(redial, "Up (2009)"))}
    assert series == {"Up (2009)"}
    series = {i.name for i in Franchises(redial).franchise(_item(redial, "Inception (2010)"))}
    assert series == {"Inception (2010)"}


def test_like_a_title_shows_none_of_its_sequels(chatcrs):
    _, _, shown = talk(chatcrs, "my kids adore Finding Nemo (2003), anything along those lines?")
    assert shown and not any("Finding" in i.title for i in shown), [i.label for i in shown]


@pytest.mark.parametrize("text", [
    "a thriller based on truth",
    "crime films based on real events please",
    "something about stuff that actually happened",
    "war movies based off of real life",
])
def test_other_ways_to_say_a_true_story(text):
    assert "true story" in [s for s, _ in subjects_asked(text)]


def test_a_true_story_heading_reads_as_english():
    assert subjects_phrase({"true story"}) == "from true stories"
    assert subjects_phrase({"zombies", "true story"}) == "about zombies and from true stories"


@pytest.mark.parametrize("text", ["Merry Christmas! I want a good thriller", "happy holidays, any dramas?"])
def test_a_season_greeting_asks_for_no_subject(text):
    read = update(Constraints(), text, complaint=False)
    assert not read.subjects and read.genres


def test_a_genre_said_alone_in_a_complaint_is_wanted():
    read = update(Constraints(genres=frozenset({"animation"})), "Animation. Not that one, nor anything like it",
                  complaint=True)
    assert "animation" in read.genres and "animation" not in read.unwanted_genres


@pytest.mark.parametrize("text", ["Step Brothers isn't really a comedy", "That last one was not a horror at all"])
def test_a_title_said_not_of_a_genre_asks_for_the_genre(text):
    read = update(Constraints(), text, complaint=True)
    genre = "comedy" if "comedy" in text else "horror"
    assert genre in read.genres and genre not in read.unwanted_genres


def test_something_that_is_not_of_a_genre_still_rules_it_out():
    read = update(Constraints(), "I'd like a film that is not a comedy", complaint=False)
    assert "comedy" in read.unwanted_genres


@pytest.mark.parametrize(("text", "marked"), [
    ("loved it! have you watched Heat (1995)", "loved it! have you watched Heat (1995)?"),
    ("Have you ever seen Jaws. It scared me", "Have you ever seen Jaws? It scared me"),
    ("I have seen Jaws", "I have seen Jaws"),
])
def test_have_you_seen_is_a_question_without_its_mark(text, marked):
    assert with_question_marks(text) == marked


def test_have_you_seen_gets_an_answer_not_a_list(chatcrs):
    _, text, _ = talk(chatcrs, "some comedies please", "great list. have you seen Superbad (2007)")
    assert "Superbad" in text and "\n1." not in text


@pytest.mark.parametrize("text", ["Would you say it's similar to Heat?", "is the second one anything like Heat?",
                                  "Do you think that is sort of like Heat?"])
def test_likening_questions_are_read(text):
    assert likens_referred(text) is not None


def test_is_it_like_a_title_compares_the_two(chatcrs):
    _, text, shown = talk(chatcrs, "some Pixar films please", "is the first one anything like Shrek (2001)?")
    assert "Shrek" in text and "\n1." not in text
    assert text.startswith(("In some ways:", "Not much:")), text


def test_praise_for_what_was_given_is_no_complaint():
    assert not REJECTION.search("you gave me some great ideas")
    assert REJECTION.search("you gave me that one already")
    assert is_closing("Heat is another favourite of mine. You gave me three good ones I will try. soon.")


def test_a_question_pointing_at_no_one_title_answers_the_first_few(chatcrs):
    _, text, shown = talk(chatcrs, "a good heist movie please", "anybody well known in these?")
    assert len(shown) >= 2 and text.count(" stars ") >= 2, text


def test_newer_with_nothing_shown_asks_for_the_last_decade_or_so():
    read = update(Constraints(), "I'm after some newer films", complaint=False)
    assert read.years is not None and read.years[0] >= 2010


def test_a_favourite_named_keeps_its_own_series_out(chatcrs):
    _, _, shown = talk(chatcrs, "a fun animated film please. My son's favourite is Toy Story (1995)")
    assert shown and not any("Toy Story" in i.title for i in shown), [i.label for i in shown]


def test_childrens_without_its_apostrophe_asks_for_children():
    assert update(Constraints(), "any good childrens films?", complaint=False).for_children


@pytest.mark.parametrize("text", ["Hey, I want to watch a fun film tonight", "I need to see something good"])
def test_wanting_to_see_a_film_is_no_choice(text):
    assert not is_closing(text)


def test_a_favourite_named_after_a_list_is_no_choice(chatcrs):
    _, text, shown = talk(chatcrs, "some thrillers please", "nice one! one of my favs is Heat (1995)")
    assert shown and "enjoy" not in text.lower()[:40]


def test_have_a_good_evening_ends_the_talk_after_a_question():
    assert is_closing("Heat (1995)? Never seen it. I'll look it up, thanks, have a great evening!")


@pytest.mark.parametrize(("text", "recent"), [("I'd like a new horror movie", True), ("any new dramas?", True),
                                              ("could you suggest a new movie", False)])
def test_new_before_a_genre_is_recent(text, recent):
    assert (update(Constraints(), text, complaint=False).years is not None) == recent


def test_details_about_the_shown_films_describe_them(chatcrs):
    _, text, _ = talk(chatcrs, "some westerns please", "could you tell me some details about those films?")
    assert "\n1." not in text and text.count(":") >= 2


def test_which_has_the_best_reviews_picks_one_and_says_no_reviews_are_kept(chatcrs):
    _, text, shown = talk(chatcrs, "some westerns please", "which of them has the best reviews?")
    assert text.startswith("I have no reviews or ratings to go by, but I'd go with") and len(shown) == 1


def test_more_in_that_genre_asks_for_titles(chatcrs):
    _, text, shown = talk(chatcrs, "I just saw Heat (1995) so I'm thinking of more in that genre. Know any?")
    assert len(shown) >= 2 and "\n1." in text


def test_a_listed_studio_in_lower_case_is_read_and_a_negated_one_is_not(chatcrs):
    _, text, _ = talk(chatcrs, "hi, any good marvel films out there?")
    assert text.startswith("Here are some picks from Marvel")
    _, text, _ = talk(chatcrs, "an animated film please, no pixar ones")
    assert "from Pixar" not in text


@pytest.mark.parametrize("text", ["Great, I just put both on my watch list. Cheers!",
                                  "Oh really? I adore Heat (1995)! Thanks for the help!"])
def test_more_sign_offs(text):
    assert is_closing(text)


def test_any_good_asks_about_the_one_shown(chatcrs):
    _, text, _ = talk(chatcrs, "some westerns please", "Not seen that first one. Any good?")
    assert text.startswith("Here is what I know") and "\n1." not in text


def test_taking_one_while_naming_a_liked_title_asks_on(chatcrs):
    _, text, shown = talk(chatcrs, "some westerns please", "I'll give it a watch. I also liked Tombstone (1993)")
    assert len(shown) >= 2 and "enjoy" not in text.lower()[:30]


@pytest.mark.parametrize(("text", "marked"), [("Is it scary", "Is it scary?"), ("how would you rate it", None),
                                              ("What a great list", "What a great list")])
def test_a_whole_message_worded_as_a_question_gets_its_mark(text, marked):
    assert with_question_marks(text) == (marked or text + "?")


def test_an_age_rating_asked_says_none_is_kept(chatcrs):
    _, text, _ = talk(chatcrs, "some westerns please", "is the first one PG")
    assert text.startswith("My catalog records no age ratings") and "\n1." not in text


def test_a_statement_opening_with_did_not_is_no_question():
    assert with_question_marks("Did not like Heat but will see Ronin") == "Did not like Heat but will see Ronin"
