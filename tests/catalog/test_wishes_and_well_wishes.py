"""Readings met on real seekers' turns, tested in wording written for these tests: a well-wish at the end
signs off; "what should we watch next?" asks for titles, not about the title named before it; "Is <A>
similar to <B>?" compares the two; "would my son enjoy <title>?" asks whether it suits him; "in the
theatres now" asks for recent films; "sad" films are dramas; a request that speaks well of a title is no
plain request (no "tell me a title you loved")."""

from __future__ import annotations

import pytest

from arena.reading.acts import is_closing, likens_two, question_aspect
from arena.reading.constraints import Constraints, update
from tests.catalog.test_chatcrs_policy import talk
from tests.catalog.test_ranker_reads_what_is_left import chatcrs  # noqa: F401


@pytest.mark.parametrize("text", [
    "Perfect, that settles it. Hope you have a lovely evening",
    "Cheers for all of this, I hope your weekend goes well!",
    "ok great thank you. have a fab day",
])
def test_a_well_wish_at_the_end_signs_off(text):
    assert is_closing(text)


@pytest.mark.parametrize("text", [
    "I hope you have something funnier than that?",
    "hope you have a thriller for my Friday night",
])
def test_a_hope_that_asks_is_no_sign_off(text):
    assert not is_closing(text)


def test_what_to_watch_next_asks_for_titles(chatcrs):
    _, text, shown = talk(chatcrs, "We just watched The Incredibles (2004) and loved it. What should we see next?")
    assert len(shown) >= 3 and not any(i.title == "The Incredibles" for i in shown), text
    assert "title you loved" not in text


def test_two_titles_likened_in_a_question():
    assert likens_two("Is Alien (1979) anything like Aliens (1986)?", " anything like ")
    assert likens_two("would you say Heat is similar to Ronin?", " is similar to ")
    assert not likens_two("I liked Alien and also Aliens, any more?", " and also ")
    assert not likens_two("Heat is similar to Ronin.", " is similar to ")  # no question


def test_is_a_similar_to_b_answers_with_the_two(chatcrs):
    _, text, shown = talk(chatcrs, "Some sci-fi please", "Is Alien (1979) similar to Blade Runner (1982)?")
    assert [i.title for i in shown] == ["Alien", "Blade Runner"], text
    assert "Here are" not in text


@pytest.mark.parametrize(("text", "aspect"), [
    ("would my daughter enjoy Frozen (2013)?", "suitability"),
    ("Do you reckon children would cope with that?", "suitability"),
    ("what films would little kids like?", None),
])
def test_whether_a_child_would_enjoy_it(text, aspect):
    assert question_aspect(text) == aspect


@pytest.mark.parametrize("text", [
    "anything good in the cinema right now?",
    "what's showing now",
    "something currently in theaters",
])
def test_what_is_on_now_asks_for_recent_films(text):
    years = update(Constraints(), text, complaint=False).years
    assert years is not None and years[0] >= 2010 and years[1] >= 2019


def test_sad_films_are_dramas():
    assert "drama" in update(Constraints(), "got any sad films for a rainy night?", complaint=False).genres
    assert "drama" in update(Constraints(), "a real tearjerker please", complaint=False).genres


@pytest.mark.parametrize("text", [
    "That's everything. You found a couple, didn't you? Thanks for all your help!",
    "I'll look those up later. Thank you so much for the suggestions",
])
def test_thanks_for_the_help_at_the_end_signs_off(text):
    assert is_closing(text)


def test_thanks_for_the_help_after_asking_for_more_is_no_sign_off():
    assert not is_closing("Could you find me another one? Thanks for your help!")


def test_a_title_loved_in_a_goodbye_is_no_choice(chatcrs):
    _, text, shown = talk(chatcrs, "a war film please", "Ha, I adore Saving Private Ryan (1998)! Thanks for helping!")
    assert not shown and "Saving Private Ryan" not in text, text


def test_a_misspelt_surname_after_its_first_name_is_the_person(chatcrs):
    index = chatcrs.policy.surnames
    assert [p for p, _, _ in index.misspelt("anything with Sandra Bulock?")] == ["Sandra Bullock"]
    assert index.misspelt("I will share it with my wife") == []
    _, text, shown = talk(chatcrs, "any good Jennifer Anistan comedies?")
    assert shown and all("Jennifer Aniston" in i.people.get("star", ()) for i in shown), text
    assert "studio" not in text


def test_a_person_outranks_the_years_when_nothing_has_both(chatcrs):
    # No catalog film with Gene Wilder is this recent: his films, not others' recent ones.
    _, text, shown = talk(chatcrs, "what's the newest Gene Wilder movie you have?")
    assert shown and all("Gene Wilder" in sum(i.people.values(), ()) for i in shown), text


def test_a_subject_after_to_do_with_and_misspelt():
    from arena.reading.subjects import subjects_asked
    assert "dinosaurs" in [s for s, _ in subjects_asked("my son likes anything to do with dinosaurs")]
    assert subjects_asked("that has nothing to do with it") == []


def test_a_lower_case_title_after_similar_to_is_the_title(redial):
    linked = [i.label for i, _, _ in redial.link_spans("got anything similar to interstellar?")]
    assert linked == ["Interstellar (2014)"]


def test_any_suggestions_asks_for_titles():
    assert question_aspect("I loved it when it came out. Any suggestions for tonight?") is None


def test_two_words_ending_in_a_gerund_are_one_activity():
    from arena.reading.subjects import subjects_asked
    assert [s for s, _ in subjects_asked("any films about ice skating?")] == ["ice skating"]
    assert [s for s, _ in subjects_asked("something about pirates and sailing")] == ["pirates", "sailing"]


@pytest.mark.parametrize(("text", "aspect"), [
    ("what's its star rating?", "rating"),
    ("how many stars does it get from critics?", "rating"),
    ("who is the star of it?", "stars"),
])
def test_a_star_rating_is_no_question_of_the_cast(text, aspect):
    assert question_aspect(text) == aspect


def test_released_recently_asks_for_recent_films():
    years = update(Constraints(), "any thrillers that came out recently?", complaint=False).years
    assert years is not None and years[0] >= 2010


def test_any_film_at_all_starts_over(chatcrs):
    _, text, shown = talk(chatcrs, "a horror film please", "forget the genre, can you suggest any movies at all?")
    assert shown and not all("horror" in [g.lower() for g in i.genres] for i in shown), text


def test_gangster_films_are_about_organised_crime_not_any_crime(chatcrs):
    _, text, shown = talk(chatcrs, "recommend me some good gangster films")
    assert shown and "about gangsters" in text, text
    assert not any("Peter Rabbit" in i.title for i in shown)


def test_his_movies_are_those_of_the_lead_the_liked_titles_share(chatcrs):
    _, text, shown = talk(chatcrs, "I enjoyed Cast Away (2000) and Forrest Gump (1994) and The Terminal (2004)."
                                   " Could you show me more of his films?")
    assert shown and all("Tom Hanks" in i.people.get("star", ()) for i in shown), text
