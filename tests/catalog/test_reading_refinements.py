"""The reader's third round (`arena.reading`, `crs.dialogue_policy`, `crs.franchises`): a ruled-out
sub-genre keeps its genre, goodbyes and chatter get no list, suitability questions with a pronoun
are questions, subjects survive a complaint that adds a genre, "like <title>" leaves the title's
franchise out, and refinements that add to what was asked."""

from __future__ import annotations

import pytest

from arena.reading.acts import is_chatter, is_closing, question_aspect, takes_it
from arena.reading.constraints import CATALOG_PRESENT, Constraints, update
from arena.reading.subjects import subject_forms, subjects_asked
from crs.crb_crs import _repeats
from crs.dialogue_policy import DialoguePolicy
from crs.grounded import fact_line
from crs.reply_check import enforce_shown_titles
from tests.support.conversations import read


def test_a_ruled_out_sub_genre_keeps_its_genre(redial):
    c = update(Constraints(), "I like horror but I'm tired of slashers. Something more psychological?",
               complaint=False)
    assert c.genres == {"horror"} and not c.unwanted_genres
    slashers = [i for i in redial if "slasher" in i.plot.lower()]
    assert slashers and not any(c.allows(i) for i in slashers)
    assert update(Constraints(), "a slasher for tonight", complaint=False).genres == {"horror"}


@pytest.mark.parametrize("text, closing", [
    ("haha perfect, that'll do. night!", True),
    ("Thank you, have a nice evening", True),
    ("awesome, wish me luck!", True),
    ("ok thanks, later!", True),
    ("We want a film for movie night", False),
    ("Any good movies for date night?", False),
])
def test_goodbyes(text, closing):
    assert is_closing(text) is closing


def test_an_acceptance_that_says_it_is_sorted():
    assert takes_it("lovely, that's tonight sorted") and not takes_it("is that sorted by year?")


@pytest.mark.parametrize("text, chatter", [
    ("ugh, long day at work", True),
    ("so bored tonight", True),
    ("I love dinosaurs", False),
    ("a space adventure please", False),
    ("My son is 7", False),
    ("any westerns?", False),
])
def test_chatter_asks_for_nothing(text, chatter):
    assert is_chatter(text) is chatter


def test_chatter_gets_no_list_until_something_was_shown(policy, redial):
    assert read(policy, redial, "Rainy Sunday here, just lounging on the couch").act == "chat"  # no "Sunday" film
    after_a_list = read(policy, redial, "a war film", ["Dunkirk (2017)"], "He already owns that one on DVD")
    assert after_a_list.act != "chat"


@pytest.mark.parametrize("text", [
    "Is Zootopia too scary for her?",
    "Is Spirited Away ok for that age?",
    "Do you think Zootopia would be too much for him?",
])
def test_suitability_with_a_pronoun_is_a_question(text, redial):
    assert question_aspect(text) == "suitability"
    turned_down = DialoguePolicy(redial, lambda dialogue: ["REJ"])  # the learnt model may read a turn-down
    move = read(turned_down, redial, "an animated film", ["Zootopia", "Spirited Away"], text)
    assert move.act == "question" and move.aspect == "suitability"


def test_a_question_says_who_is_watching(policy, redial):
    move = read(policy, redial, "an animated film", ["Coco (2017)"], "Is Coco suitable for my 8 year old?",
                ["Coco (2017)"], "another one?")
    assert move.constraints.for_children


def test_who_is_it_by_asks_for_the_writer():
    assert question_aspect("Who is Zoe's Tale by?") == "writer"


def test_a_complaint_that_adds_a_genre_keeps_the_subject(policy, redial):
    move = read(policy, redial, "I'd love a movie set in outer space", ["Interstellar (2014)", "Gravity (2013)"],
                "Not Interstellar, I found it slow. Something with more action?")
    assert move.constraints.subjects == {"space"} and move.constraints.genres == {"action"}
    instead = read(policy, redial, "a movie set in outer space", ["Gravity (2013)"], "A comedy instead?")
    assert not instead.constraints.subjects


def test_like_a_title_leaves_its_franchise_out(policy, redial):
    move = read(policy, redial, "Something like Star Wars for my 13 year old son")
    for label in ("The Empire Strikes Back (1980)", "Return of the Jedi (1983)", "Rogue One: A Star Wars Story (2016)"):
        assert redial.find_title(label).item_id in move.left_out, label
    assert redial.find_title("Star Trek (2009)").item_id not in move.left_out
    watched = read(policy, redial, "I just rewatched Jurassic Park. Got anything along those lines?")
    assert redial.find_title("The Lost World: Jurassic Park (1997)").item_id in watched.left_out
    assert watched.constraints.genres  # the title's genres


def test_like_a_title_leaves_out_titles_opening_with_its_rare_head_word(policy, redial):
    # "Jurassic World" shares no stem with "Jurassic Park", but "Jurassic" opens only that series
    move = read(policy, redial, "I'm looking for an action filled movie similar to Jurassic Park (1993)")
    assert redial.find_title("Jurassic World (2015)").item_id in move.left_out
    # an everyday head word names no series: "Wind River" keeps other titles opening with "Wind"
    wind = read(policy, redial, "I really enjoyed Wind River (2017), any more like it?")
    assert not [i for i in wind.left_out if (item := redial.get(i)) and item.title.startswith("Wind ")
                and item.title != "Wind River"]


def test_not_a_batman_one_reaches_plots_naming_bruce_wayne(policy, redial):
    move = read(policy, redial, "Recommend me a superhero movie, but not a Batman one")
    assert redial.find_title("Justice League (2017)").item_id in move.left_out


def test_the_last_years_count_back_from_the_catalogs():
    assert update(Constraints(), "Anything from the last ten years or so?", complaint=False).years == (
        CATALOG_PRESENT - 10, 2100)
    assert update(Constraints(), "something from the past decade", complaint=False).years[0] == CATALOG_PRESENT - 10


def test_a_bit_more_adds_a_genre_and_instead_replaces_it():
    comedy = update(Constraints(), "Funny, for a first date", complaint=False)
    assert update(comedy, "hmm, maybe something a bit more romantic?", complaint=False).genres == {"comedy", "romance"}
    assert update(comedy, "any with some action thrown in?", complaint=False).genres == {"comedy", "action"}
    assert update(comedy, "a romance instead?", complaint=False).genres == {"romance"}
    assert update(comedy, "a horror film", complaint=False).genres == {"horror"}


def test_subjects_after_into_and_the_wars_by_number():
    assert subjects_asked("My 6 year old is really into superheroes. Something animated?") == [("superheroes", 29)]
    assert "superhero" in subject_forms("superheroes")
    assert [s for s, _ in subjects_asked("he's really into WW2 films")] == ["second world war"]
    assert [s for s, _ in subjects_asked("a book about World War II?")] == ["second world war"]
    assert "world war" not in subject_forms("second world war")  # "World War I" is another war
    assert update(Constraints(), "he's really into WW2 films", complaint=False).genres == {"war"}


def test_a_different_author_rules_out_the_one_asked_for(opendialkg):
    policy = DialoguePolicy(opendialkg)
    move = read(policy, opendialkg, "I'm after an Agatha Christie novel", ["The Murder on the Links"],
                "Something in the same vein by a different author?")
    c = move.constraints
    assert not c.people and "Agatha Christie" in c.unwanted_people and c.genres  # like the book shown


def test_crb_crs_skips_a_turn_that_says_a_sentence_twice():
    assert _repeats("Hmm okay. What about @0 ? Hmm okay. What about @0 ?")
    assert not _repeats("Have you seen @0? It is great.")


def test_a_list_keeps_its_numbers_when_a_plot_ends_with_a_title_of_a_sequel(redial):
    # Captain America: Civil War's plot ends with "Iron Man."; with "2." on the next line that once
    # read as "Iron Man 2", a title not shown, and the plot and the number were dropped.
    shown = [redial.find_title("Captain America: Civil War (2016)"), redial.find_title("The Avengers (2012)")]
    text = "Here:\n" + "\n".join(f"{n}. {fact_line(i)}" for n, i in enumerate(shown, 1))
    kept = enforce_shown_titles(text, shown, redial)
    assert "\n2. The Avengers (2012)" in kept and "Iron Man." in kept


def test_a_possessive_name_is_a_person_asked_for(policy, redial):
    move = read(policy, redial, "What are Martin Scorsese's best films?")
    assert move.constraints.people == {"Martin Scorsese"}


def test_which_year_asks_for_the_year():
    assert question_aspect("Which year is Icarus from?") == "year"


def test_people_are_shown_without_graph_qualifiers(opendialkg):
    happy_feet = next(i for i in opendialkg if any("(Director)" in n for n in i.people.get("director", ())))
    assert "(Director)" not in fact_line(happy_feet)


def test_a_subject_written_as_two_words_is_read_whole():
    # "super hero ones" had been read as "hero" (Big Hero 6, war heroes)
    asked = subjects_asked("Do you have any space movies? Also I like super hero ones too.")
    assert [s for s, _ in asked] == ["space", "superhero"]
    assert [s for s, _ in subjects_asked("I want a movie about super heroes")] == ["superheroes"]
    assert [s for s, _ in subjects_asked("a war hero movie")] == ["hero"]  # no one word "warhero"


def test_subject_words_say_the_subject_itself(redial):
    # a vigilante is no superhero, and "sent back to high school" is no time travel
    assert "vigilante" not in subject_forms("superhero")
    c = Constraints(subjects=frozenset({"time travel"}))
    assert not c.allows(redial.find_title("21 Jump Street (2012)"))
    assert c.allows(redial.find_title("Back to the Future (1985)"))
    superhero = Constraints(subjects=frozenset({"superhero"}))
    assert not superhero.allows(redial.find_title("The Boondock Saints (1999)"))
