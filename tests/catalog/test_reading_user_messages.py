"""The one reader of user messages (`arena.reading`): negation kept to what it names, people as
requests, "lighter", refinements that keep constraints, questions, small talk and acceptances."""

from __future__ import annotations

import pytest

from arena.catalog import Catalog
from arena.dialogue import Dialogue
from arena.reading.acts import is_closing, is_small_talk, question_aspect, takes_it
from arena.reading.constraints import Constraints, update
from arena.reading.intents import coherent
from arena.reading.vocabulary import genre_label, intensity_of
from crs.dialogue_policy import DialoguePolicy
from crs.item_answers import tied_to_message


@pytest.fixture(scope="module")
def policy(redial: Catalog) -> DialoguePolicy:
    return DialoguePolicy(redial)


def read(policy: DialoguePolicy, catalog: Catalog, *turns):
    """User and system turns alternate from the user; a system turn is a list of shown labels."""
    d = Dialogue(crs_id="test")
    for n, turn in enumerate(turns):
        if n % 2 == 0:
            d.add_user(turn)
        else:
            shown = [catalog.find_title(label) for label in turn]
            assert all(shown), turn
            d.add_agent("Here: " + ", ".join(i.label for i in shown), items=[i.to_recommended() for i in shown])
    return policy.read(d)


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
    ("What else does he have?", None),
])
def test_questions_about_an_item(text, aspect):
    assert question_aspect(text) == aspect


@pytest.mark.parametrize("text, closing, accepts", [
    ("Cool, thanks. I'll watch it tonight.", True, True), ("Sounds good, I'll watch it tonight.", False, True),
    ("Thanks! Any more like it?", False, False), ("Great, any others?", False, False),
])
def test_closings_and_acceptances(text, closing, accepts):
    assert is_closing(text) == closing and takes_it(text) == accepts


def test_small_talk_is_no_request():
    assert is_small_talk("Hey, how's it going?") and not is_small_talk("Hi there! Can you suggest an animated movie?")


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
