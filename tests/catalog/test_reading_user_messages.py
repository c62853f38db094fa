"""The one reader of user messages (`arena.reading`): negation kept to what it names, people as
requests, "lighter", refinements that keep constraints, questions, small talk and acceptances."""

from __future__ import annotations

import pytest

from arena.reading.acts import is_closing, is_small_talk, question_aspect, takes_it
from arena.reading.constraints import Constraints, update
from arena.reading.intents import coherent
from arena.reading.vocabulary import genre_label, intensity_of
from crs.dialogue_policy import DialoguePolicy
from crs.item_answers import tied_to_message
from tests.support.conversations import read


def test_a_negation_reaches_only_the_sub_genre_it_names():
    c = update(Constraints(), "Maybe something funny, but not a romantic comedy", complaint=False)
    assert c.genres == {"comedy"} and c.unwanted_genres == {"romance"}


def test_not_too_gory_is_intensity_not_the_genre_asked_for():
    c = update(Constraints(), "Something scary for Halloween but not too gory", complaint=False)
    assert c.genres == {"horror"} and "horror" not in c.unwanted_genres and c.unwanted_intensity == {"gore"}


def test_a_disliked_person_is_ruled_out_and_the_genre_kept(policy, redial):
    move = read(policy, redial, "I want a comedy for tonight", ["Step Brothers (2008)"],
                "I don't like Adam Sandler. Any other comedy?")
    assert "Adam Sandler" in move.constraints.unwanted_people
    assert move.constraints.genres == {"comedy"} and "comedy" not in move.constraints.unwanted_genres


def test_a_person_named_is_a_request(policy, redial):
    move = read(policy, redial, "Something with Arnold Schwarzenegger please")
    assert move.act == "request" and move.constraints.people == {"Arnold Schwarzenegger"}


def test_a_refinement_keeps_the_person_and_adds_the_era(policy, redial):
    move = read(policy, redial, "Something with Arnold Schwarzenegger please", ["The Terminator (1984)"],
                "Another Arnold movie from the 80s?")
    assert move.constraints.people == {"Arnold Schwarzenegger"} and move.constraints.years == (1980, 1989)


def test_lighter_moves_away_from_the_heavy_genres_shown(policy, redial):
    move = read(policy, redial, "I'm in the mood for a crime thriller", ["Heat (1995)", "The Departed (2006)"],
                "Too violent for me, something tamer?")
    c = move.constraints
    assert {"crime", "thriller"} <= c.unwanted_genres and not c.genres & {"crime", "thriller"}
    assert "violence" in c.unwanted_intensity


def test_intensity_is_read_from_title_and_plot(redial):
    killers = redial.find_title("Natural Born Killers (1994)")
    assert "violence" in intensity_of(killers)


@pytest.mark.parametrize("text, aspect", [
    ("What's the story of Funny Games?", "plot"), ("Who else stars in American Sniper?", "stars"),
    ("Tell me more about the second one", "plot"), ("How well is it rated?", "rating"),
    ("Is Training Day very violent?", "genres"), ("What about war movies from the 2000s?", None),
    ("What else does he have?", None), ("Tell me a bit about Sister Act", "plot"),
    ("Hmm, is 50 First Dates more funny or more romantic?", "genres"), ("Is there anything more recent?", None),
    ("Any mystery books written before 2000?", None),
    ("she's not into romance, anything without a love story?", None),  # asks for items after a clause
    ("Ok, something with a better story?", None), ("So, what's the story of it?", "plot"),
])
def test_questions_about_an_item(text, aspect):
    assert question_aspect(text) == aspect


@pytest.mark.parametrize("text, closing, accepts", [
    # Taking a shown title and asking for nothing more closes the conversation, with or without thanks.
    ("Cool, thanks. I'll watch it tonight.", True, True), ("Sounds good, I'll watch it tonight.", True, True),
    ("Thanks! Any more like it?", False, False), ("Great, any others?", False, False),
    ("Great, she'll love it, thank you!", True, True), ("Awesome, that's our movie tonight", True, True),
    ("We'll watch with the kids, so something for the whole family please", False, False),
])
def test_closings_and_acceptances(text, closing, accepts):
    assert is_closing(text) == closing and takes_it(text) == accepts


def test_small_talk_is_no_request():
    assert is_small_talk("Hey, how's it going?") and not is_small_talk("Hi there! Can you suggest an animated movie?")
    assert is_small_talk("Hi! Hope you're having a good day")


def test_an_acceptance_and_small_talk_get_no_list(policy, redial):
    assert read(policy, redial, "a heist film", ["Heat (1995)"], "Sounds good, I'll watch it tonight.").act == "accept"
    assert read(policy, redial, "Hey, how's it going?").act == "chat"


def test_kind_words_in_an_aside_do_not_count(opendialkg):
    c = update(Constraints(), "I'd rather have a film than a book. Something fantasy?", complaint=False,
               kinds_matter=True)
    assert c.kind == "film"
    c = update(Constraints(kind="book"), "Are there any films made from his books?", complaint=False,
               kinds_matter=True)
    assert c.kind == "film"


def test_genre_tags_read_as_words():
    assert genre_label("Family (Film genre) #395") == "Family"


def test_the_connector_may_not_repeat_the_message():
    assert tied_to_message("A musical, please.", "A musical, please.") is not None


def test_coherent_label_sets():
    assert coherent([("ACC", 2.0), ("REJ", 0.5), ("PRO", 1.0)]) == ["ACC", "PRO"]
    assert len(coherent([(i, float(n)) for n, i in enumerate(["PRO", "ANS", "ASK", "SEE", "REF"])])) == 3


def test_crb_crs_skips_a_turn_stating_what_its_items_do_not_bear_out(redial):
    from crs.crb_crs import RecommenderTurn, claims_problem

    planet = redial.find_title("Planet Earth (1974)") or next(i for i in redial if "documentary" in i.genres)
    turn = RecommenderTurn("nature", "<movie_0> is an amazing film about Nelson Mandela", 1)
    assert claims_problem(turn, [planet]) is not None
    fair = RecommenderTurn("nature", "You should see <movie_0>, I loved it", 1)
    assert claims_problem(fair, [planet]) is None


def test_a_subject_is_asked_of_the_plot_and_kept_by_a_refinement(redial):
    c = update(Constraints(), "Give me three sci-fi movies about time travel", complaint=False)
    c = update(c, "Something newer, from after 2005?", complaint=False)
    assert c.subjects == {"time travel"} and c.genres == {"sci fi"} and c.years == (2006, 2100)
    looper = redial.find_title("Looper (2012)")
    prestige = redial.find_title("The Prestige (2006)")
    assert c.allows(looper) and not c.allows(prestige)
    assert not c.without_subjects().subjects and c.without_subjects().genres == {"sci fi"}


def test_a_subject_is_no_title_word(redial):
    c = update(Constraints(), "I'm in the mood for a zombie movie", complaint=False)
    assert c.subjects == {"zombie"}
    titled_only = [i for i in redial if "zombie" in i.title.lower() and "zombie" not in i.plot.lower()
                   and not any("zombie" in g.lower() for g in i.genres)]
    assert titled_only and not any(c.allows(i) for i in titled_only)


def test_a_new_genre_instead_drops_the_subject_and_a_new_subject_replaces_it():
    c = update(Constraints(), "Any good documentaries about nature or animals?", complaint=False)
    assert c.subjects == {"nature", "animals"}
    assert not update(c, "A music documentary instead?", complaint=False).subjects
    assert update(c, "Got one about boxing instead?", complaint=False).subjects == {"boxing"}


def test_a_negated_subject_is_ruled_out_not_the_genre_asked_for(redial):
    c = update(Constraints(), "Recommend me a war movie, just not another Vietnam one", complaint=False)
    assert c.genres == {"war"} and not c.subjects and not c.unwanted_genres
    vietnam = [i for i in redial if "war" in i.genres and "vietnam" in i.plot.lower()]
    assert vietnam and not any(c.allows(i) for i in vietnam)


def test_mood_and_people_are_no_subjects():
    for text in ("Any good funny movies?", "Any more recent westerns?", "I want a comedy for tonight",
                 "A music documentary, please", "Can you recommend an inspiring sports movie?",
                 "Good morning! I'd like a science fiction movie"):
        assert not update(Constraints(), text, complaint=False).subjects, text
    c = update(Constraints(), "Any Meryl Streep movies?", complaint=False, people=[("Meryl Streep", 4)])
    assert not c.subjects and c.people == {"Meryl Streep"}


def test_two_decades_and_family_friendly():
    assert update(Constraints(), "anything older, like 70s or 80s?", complaint=False).years == (1970, 1989)
    assert update(Constraints(), "Something more family friendly?", complaint=False).for_children


def test_a_catalog_without_the_subject_does_not_ask_for_it(policy, redial):
    move = read(policy, redial, "I'd like a qwxyzzy movie")
    assert not move.constraints.subjects


def test_a_question_about_a_shown_item_is_answered_even_when_the_model_reads_a_critique(redial):
    def reads_a_critique(dialogue):  # what the learnt act model gives "Tell me more about the second one"
        return ["CRI-F"]

    critique_reader = DialoguePolicy(redial, reads_a_critique)
    shown = ["Looper (2012)", "Back to the Future (1985)", "12 Monkeys (1995)"]
    move = read(critique_reader, redial, "sci-fi about time travel", shown, "Tell me more about the second one")
    assert move.act == "question" and move.aspect == "plot" and move.about[0].title == "Back to the Future"
    move = read(critique_reader, redial, "sci-fi about time travel", shown, "Not the second one, too silly")
    assert move.act == "reject"


def test_not_a_batman_one_rules_out_plots_about_batman(policy, redial):
    move = read(policy, redial, "Recommend me a superhero movie, but not a Batman one")
    assert move.constraints.subjects == {"superhero"}
    about_batman = [i for i in redial if "batman" in i.plot.lower() and "batman" not in i.title.lower()]
    assert about_batman and not any(move.constraints.allows(i) for i in about_batman)


def test_something_like_a_title_asks_for_its_genres(policy, redial):
    move = read(policy, redial, "Something like Star Wars for my 13 year old son", [
        "Star Trek (2009)"], "Already seen Star Trek. Another one, but not too scary please")
    c = move.constraints
    assert "horror" in c.unwanted_genres and c.genres == {"action", "adventure", "fantasy"} and c.any_genre
    lambs = redial.find_title("The Silence of the Lambs (1991)")
    assert not c.allows(lambs)


def test_anything_after_a_clause_asks_for_items_not_the_plot(policy, redial):
    move = read(policy, redial, "My 14 year old wants a high school movie", ["Superbad (2007)"],
                "she's not into romance, anything without a love story?")
    assert move.act != "question" and "romance" in move.constraints.unwanted_genres
