"""The dialogue policy's reading of a conversation: acts, the item asked about, constraints over turns."""

from __future__ import annotations

import pytest

from arena.catalogs.catalog import Catalog
from crs.crb_crs import RecommenderTurn, claims_problem
from crs.dialogue_policy import DialoguePolicy
from crs.grounded import fact_line
from crs.item_answers import answer, tied_to_message
from crs.reply_check import enforce_shown_titles
from arena.reading.acts import RuleActReader
from tests.support.conversations import conversation


def item(catalog: Catalog, label: str):
    found = catalog.find_title(label)
    assert found is not None, label
    return found


SHOWN = ["Jumanji (1995)", "The Shining (1980)", "Zootopia"]


@pytest.mark.parametrize("text", ["thanks, bye", "Thank you!", "ok thank you so much, that's all",
                                  "That's all I needed, goodbye", "great thanks"])
def test_a_closing_is_read_as_the_end(policy, redial, text):
    assert policy.read(conversation(redial, "a family film", SHOWN, text)).act == "end"


@pytest.mark.parametrize("text", ["thanks! any more like that?", "thanks, and something funnier?"])
def test_thanks_with_a_request_is_no_closing(policy, redial, text):
    assert policy.read(conversation(redial, "a family film", SHOWN, text)).act != "end"


@pytest.mark.parametrize("text, aspect, label", [
    ("What is Jumanji about?", "plot", "Jumanji (1995)"),
    ("who directed the second one?", "director", "The Shining (1980)"),
    ("Who's in it?", "stars", "Jumanji (1995)"),
    ("When did Zootopia come out?", "year", "Zootopia"),
    ("Is Jumanji too scary for a 10 year old?", "suitability", "Jumanji (1995)"),
])
def test_a_question_about_a_shown_item(policy, redial, text, aspect, label):
    move = policy.read(conversation(redial, "a family film", SHOWN, text))
    assert (move.act, move.aspect, [i.label for i in move.about]) == ("question", aspect, [label])


def test_a_request_phrased_as_a_question_is_no_item_question(policy, redial):
    assert policy.read(conversation(redial, "Any good science fiction with aliens?")).act == "request"
    assert policy.read(conversation(redial, "Movies about dogs?")).act == "request"


def test_which_is_best_for_kids_compares_the_shown_items(policy, redial):
    shown = ["The Shining (1980)", "Seven (1995)", "Zootopia"]
    move = policy.read(conversation(redial, "something", shown, "Which one is best for kids?"))
    assert move.aspect == "compare_children" and len(move.about) == 3
    text, named = answer(move.aspect, move.about)
    assert [i.label for i in named] == ["Zootopia"] and "Zootopia" in text


def test_a_turn_down_leaves_out_the_item_and_its_sequels(policy, redial):
    move = policy.read(conversation(redial, "a Batman movie", ["Batman (1989)"], "you gave me Batman, not again"))
    assert move.act == "reject"
    left_out = {redial.get(i).title for i in move.left_out}
    assert {"Batman", "Batman Returns", "Batman Forever"} <= left_out
    assert "Superman" not in left_out


def test_a_complaint_rules_out_what_it_criticises_and_keeps_the_request(policy, redial):
    d = conversation(redial, "a scary ghost movie", ["The Shining (1980)"], "Horror AGAIN? I want something like Frozen")
    move = policy.read(d)
    assert move.act == "reject" and "horror" in move.constraints.unwanted_genres
    ranking_user_texts = [u.text for u in policy.ranking_dialogue(d, move).user_turns()]
    assert ranking_user_texts[-1] == "I want something like Frozen"


def test_a_wish_before_anything_was_shown_is_no_rejection(policy, redial):
    move = policy.read(conversation(redial, "Movie night with my kids, they are 6 and 9, nothing too scary"))
    assert move.act == "request" and move.constraints.for_children and "horror" in move.constraints.unwanted_genres


def test_constraints_persist_until_changed(policy, redial):
    turns = ["I love romantic comedies", ["Wedding Crashers (2005)"], "Something from the 90s please, no horror",
             ["Pretty Woman (1990)"], "more please"]
    move = policy.read(conversation(redial, *turns))
    assert move.constraints.years == (1990, 1999) and move.constraints.unwanted_genres == {"horror"}
    move = policy.read(conversation(redial, *turns, ["Notting Hill (1999)"], "actually a horror film from after 2005"))
    assert move.constraints.years == (2006, 2100) and not move.constraints.unwanted_genres


def test_newer_means_newer_than_what_was_shown(policy, redial):
    move = policy.read(conversation(redial, "film noir", ["The Maltese Falcon (1941)"], "something newer"))
    assert move.constraints.years == (1942, 2100)


@pytest.mark.parametrize("text, child", [("my 7 year old loves animals", True), ("for my kids", True),
                                         ("my 15 year old son likes action", False), ("a comedy", False)])
def test_children_in_the_audience(policy, redial, text, child):
    assert policy.read(conversation(redial, text)).constraints.for_children is child


def test_corrections_and_shrugs_ask_for_nothing(policy, redial):
    d = conversation(redial, "an old space adventure", ["Flash Gordon (1980)"], "Flash Gordon is 1980")
    move = policy.read(d)
    assert move.act == "correction" and move.constraints.years is None
    assert policy.ranking_dialogue(d, move).user_turns()[-1].text == ""
    assert policy.read(conversation(redial, "action", ["Taken (2008)"], "whatever")).act == "shrug"


def test_titles_do_not_count_as_eras(policy, redial):
    assert policy.read(conversation(redial, "something like Blade Runner 2049")).constraints.years is None


def test_the_rule_reader_gives_iard_intents(redial):
    d = conversation(redial, "a family film", SHOWN, "I've seen Jumanji, didn't like it")
    assert set(RuleActReader()(d)) == {"SEE", "REJ"}


def test_a_failing_reader_falls_back_to_the_rules(redial):
    def broken(dialogue):
        raise RuntimeError("model not loaded")

    move = DialoguePolicy(redial, broken).read(conversation(redial, "a family film", SHOWN, "What is Jumanji about?"))
    assert move.act == "question"


def test_answers_come_from_the_catalog_or_say_it_lacks_them(redial):
    jumanji, shining = item(redial, "Jumanji (1995)"), item(redial, "The Shining (1980)")
    assert "Joe Johnston" in answer("director", [jumanji])[0]
    assert jumanji.plot[:30] in answer("plot", [jumanji])[0]
    assert "not pick" in answer("suitability", [shining])[0] and "horror" in answer("suitability", [shining])[0]
    bare = next(i for i in redial if not i.plot and "plot" not in i.withheld)  # withheld: answered apart
    said = answer("plot", [bare])[0]  # no plot: it says so, and what is known instead
    assert "don't have a plot summary" in said and str(bare.year) in said


@pytest.mark.parametrize("sentence, fits", [
    ("I'm sorry for your loss.", False),
    ("I can't help you with that.", False),
    ("Animated films with animals are a lovely choice.", True),
    ("What a great evening plan.", False),
])
def test_the_models_sentence_must_answer_the_message(sentence, fits):
    assert (tied_to_message(sentence, "I like animated movies with animals") is None) is fits


def test_the_title_check_keeps_a_shown_items_facts(redial):
    film = item(redial, "La La Land (2016)")  # stars Emma Stone; "Emma" is also a catalog title
    text = "Here:\n1. " + fact_line(film)
    assert enforce_shown_titles(text, [film], redial, "fallback") == text


def test_retrieved_claims_must_fit_the_filled_items_genres(redial):
    killer = RecommenderTurn("", "<movie_0> is about a serial killer", 1)
    little = RecommenderTurn("", "<movie_0> is also good for little ones", 1)
    assert claims_problem(killer, [item(redial, "10 Things I Hate About You (1999)")]) is not None
    assert claims_problem(killer, [item(redial, "Seven (1995)")]) is None
    assert claims_problem(little, [item(redial, "Jigsaw (2017)")]) is not None
    assert claims_problem(little, [item(redial, "Zootopia")]) is None


def test_a_retrieved_tie_between_titles_is_no_claim_to_fill(redial):
    remake = RecommenderTurn("", "<movie_0> is a good one. It's the movie <movie_1> is a remake of", 2)
    plain = RecommenderTurn("", "<movie_0> is a good one. <movie_1> too", 2)
    pair = [item(redial, "Gone with the Wind (1939)"), item(redial, "27 Dresses (2008)")]
    assert claims_problem(remake, pair) is not None and claims_problem(plain, pair) is None


def test_a_retrieved_newness_role_or_sport_must_fit_the_filled_item(redial):
    new = RecommenderTurn("", "have you seen the new <movie_0> ?", 1)
    role = RecommenderTurn("", "How about <movie_0> ? She played a minor role but still did a good job", 1)
    sport = RecommenderTurn("", "<movie_0> is a football one", 1)
    assert claims_problem(new, [item(redial, "Saving Private Ryan (1998)")]) is not None
    assert claims_problem(new, [item(redial, "Coco (2017)")]) is None
    assert claims_problem(role, [item(redial, "Zootopia")]) is not None
    assert claims_problem(sport, [item(redial, "Brave (2012)")]) is not None


def test_opendialkg_items_say_what_they_are(opendialkg):
    book, film = opendialkg.find_title("A Game of Thrones"), opendialkg.find_title("Slumdog Millionaire")
    assert (book.kind, film.kind) == ("book", "film")
    assert "book" in fact_line(book) and "film" in fact_line(film)


@pytest.mark.parametrize("sentence, fits", [
    ("Hello, nice to meet you.", True),
    ("I'm sorry for your loss.", False),
])
def test_a_greeting_has_no_word_to_share_so_only_misfires_are_refused(sentence, fits):
    assert (tied_to_message(sentence, "Hi there!") is None) is fits
