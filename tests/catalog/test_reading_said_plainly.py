"""What people say without the cue words the reader first learnt: a subject named plainly
("loves dinosaurs"), a person by surname ("done with Stallone"), dislike idioms ("fed up with"),
moods instead of genres ("creepy"), one title taken while another is turned down, a bare
"great" after a list, and a short title with numbered sequels as a franchise."""

from __future__ import annotations

from collections import Counter

import pytest

from arena.catalogs.catalog import Catalog
from arena.reading.constraints import Constraints, update
from arena.reading.scope import negated_phrases
from arena.reading.subjects import plain_subjects, word_counts
from crs.dialogue_policy import DialoguePolicy
from tests.support.conversations import read


@pytest.fixture(scope="module")
def counts(redial: Catalog) -> Counter:
    return word_counts(redial.items)


@pytest.mark.parametrize("message, idiom_object", [
    ("Honestly I'm fed up with Tom Cruise", "tom cruise"),
    ("we're done with musicals for a while", "musicals"),
    ("I've had my fill of superheroes this year", "superheroes"),
    ("I'm so over vampires", "vampires"),
    ("enough of the sequels please", "sequels"),
])
def test_dislike_idioms_rule_out_what_they_name(message, idiom_object):
    assert any(idiom_object in phrase for phrase in negated_phrases(message))


def test_everyday_uses_of_over_and_enough_rule_nothing_out():
    assert negated_phrases("the movie is over the top, I loved it") == []
    assert negated_phrases("that's good enough for me") == []


def test_a_plural_noun_the_plots_use_is_a_subject_said_plainly(counts, redial):
    found = [s for s, _ in plain_subjects("my little brother loves pirates, anything for him?", counts,
                                          len(redial.items))]
    assert found == ["pirates"]


def test_people_of_the_users_life_verbs_and_conversation_words_are_no_subjects(counts, redial):
    for message in ("My grandparents are visiting, any ideas?", "she loves westerns", "any suggestions for tonight?",
                    "my friends want something fun"):
        assert plain_subjects(message, counts, len(redial.items)) == [], message


def test_a_subject_said_plainly_is_asked_of_the_plots(policy, redial):
    move = read(policy, redial, "Our son is crazy for dinosaurs lately, what could he watch?")
    assert move.constraints.subjects == {"dinosaurs"}
    assert move.constraints.for_children


def test_the_time_after_a_cue_is_no_subject(policy, redial):
    move = read(policy, redial, "she is really into sharks right now")
    assert move.constraints.subjects == {"sharks"}


def test_a_surname_alone_names_the_one_person_it_stands_for(policy, redial):
    move = read(policy, redial, "Any Spielberg films from the 90s?")
    assert move.constraints.people == {"Steven Spielberg"} and move.constraints.years == (1990, 1999)
    move = read(policy, redial, "An action film, but I'm fed up with Stallone")
    assert move.constraints.unwanted_people == {"Sylvester Stallone"} and move.constraints.genres == {"action"}


@pytest.mark.parametrize("message", ["Best Harry Potter movies", "I love Harry Potter, anything similar?"])
def test_a_surname_after_someone_elses_first_name_is_no_person_of_the_catalog(opendialkg, message):
    # OpenDialKG credits Monica Potter and Debbie Harry: "Harry Potter" is neither of them (it named Monica
    # Potter, and every list was of her films)
    move = read(DialoguePolicy(opendialkg), opendialkg, message)
    assert not move.constraints.people and not move.constraints.unwanted_people


def test_a_surname_after_the_persons_own_first_name_or_alone_still_names_them(policy, redial):
    assert read(policy, redial, "Anything by Steven Spielberg?").constraints.people == {"Steven Spielberg"}
    assert read(policy, redial, "more Spielberg please").constraints.people == {"Steven Spielberg"}


def test_a_surname_that_is_an_everyday_word_needs_the_first_name(policy, redial):
    move = read(policy, redial, "A thriller set in a cage or a prison")
    assert not move.constraints.people and not move.constraints.unwanted_people


def test_a_ruled_out_world_war_keeps_the_war_genre():
    c = update(Constraints(), "A war film, just not another WW2 one", complaint=False)
    assert c.genres == {"war"} and "war" not in c.unwanted_genres and "nazi" in c.unwanted_words


def test_a_mood_asks_for_its_genres_less_those_ruled_out():
    c = update(Constraints(), "Something spooky for tonight, but no horror please", complaint=False)
    assert c.genres == {"thriller", "mystery"} and c.any_genre and c.unwanted_genres == {"horror"}


def test_a_negated_mood_rules_out_its_genre_and_keeps_the_genre_named():
    c = update(Constraints(), "a clever sci-fi film without car chases or shootouts", complaint=False)
    assert c.genres == {"sci fi"} and c.unwanted_genres == {"action"}


@pytest.mark.parametrize("text", [
    "Not a fan of Rocky (1976) but I'll definitely watch Raging Bull (1980)",
    "Did not like Rocky (1976) but will check out Raging Bull (1980)",  # the take's subject left out
])
def test_one_title_taken_and_another_turned_down(policy, redial, text):
    move = read(policy, redial, "Recommend me a boxing movie", ["Rocky (1976)", "Raging Bull (1980)"], text)
    assert move.act == "accept" and [i.title for i in move.about] == ["Raging Bull"]
    assert redial.find_title("Rocky (1976)").item_id in move.left_out
    assert redial.find_title("Raging Bull (1980)").item_id not in move.left_out


def test_a_bare_approval_after_a_list_takes_it(policy, redial):
    move = read(policy, redial, "a good comedy please", ["Step Brothers (2008)", "Superbad (2007)"], "Perfect!")
    assert move.act == "accept"


def test_watching_the_shown_one_to_death_leaves_its_numbered_sequels_out(policy, redial):
    move = read(policy, redial, "a movie about a shark", ["Jaws (1975)"], "we've watched that one a lot, another?")
    assert move.act == "seen"
    assert redial.find_title("Jaws 2 (1978)").item_id in move.left_out


def test_a_love_story_ruled_out_is_romance_not_every_story():
    c = update(Constraints(), "a drama please, but without a love story", complaint=False)
    assert c.unwanted_genres == {"romance"} and c.genres == {"drama"} and "story" not in c.unwanted_words


def test_not_wanting_anything_with_a_thing_rules_its_word_out():
    c = update(Constraints(), "I don't want anything with clowns", complaint=False)
    assert "clown" in c.unwanted_words


def test_praise_that_asks_for_more_turns_nothing_down(policy, redial):
    move = read(policy, redial, "a tense thriller", ["The Silence of the Lambs (1991)"], "Nice choice! Anything else like it?")
    assert move.act == "request" and not move.left_out


def test_done_with_someone_is_no_goodbye():
    from arena.reading.acts import is_closing
    assert not is_closing("I'm done with Nicolas Cage, any thriller without him?")
    assert is_closing("I'm done, thanks") and is_closing("That's just what we needed, thank you")


def test_a_question_names_the_shown_namesake_of_its_year(policy, redial):
    move = read(policy, redial, "ghost comedies", ["Ghostbusters (1984)", "Ghostbusters (2016)"],
                "who directed Ghostbusters (1984)?")
    assert move.act == "question" and [i.year for i in move.about] == [1984]


def test_a_childrens_film_ruled_out_rules_out_family_titles():
    c = update(Constraints(genres=frozenset({"comedy"})), "nothing aimed at kids, it's for me and my wife",
               complaint=False)
    assert {"family", "animation"} <= c.unwanted_genres and c.genres == {"comedy"} and not c.for_children


def test_an_animated_film_not_for_kids_keeps_animation():
    c = update(Constraints(), "I'd like an animated film, for grown-ups not for kids", complaint=False)
    assert c.genres == {"animation"} and "animation" not in c.unwanted_genres and not c.for_children
