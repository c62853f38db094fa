"""CRB-CRS leaves out human turns whose filler answers or continues what this conversation never said."""

from __future__ import annotations

import pytest

from arena.llm import FakeProvider, LLMClient
from crs.crb_context import TurnContext, context_problem
from crs.crb_crs import CRBCRS, RecommenderTurn, crb_crs_specs
from crs.registry import CRSRegistry
from crs.reply_cli import context_dialogue

REQUEST = TurnContext(last_user="I'm after a tense horror film for tonight.", agent_turns=1)


def test_a_claim_of_having_seen_it_needs_a_question_about_it():
    turn = "<movie_0> was good Yes I have seen that movie many times"
    assert context_problem(turn, REQUEST) is not None
    asked = TurnContext(last_user="Have you seen anything scary lately?", agent_turns=1)
    assert context_problem(turn, asked) is None
    recently = TurnContext(last_user="Hi, seen any good movies recently?")
    assert context_problem("I recently saw <movie_0>. It was really cute.", recently) is None


def test_a_yes_or_no_answers_only_a_question():
    assert "yes/no" in context_problem("Yeah, <movie_0> is a great pick.", REQUEST)
    assert context_problem("Yeah, <movie_0> is a great pick.",
                           TurnContext(last_user="Is there a good slasher from the eighties?")) is None
    assert context_problem("There is no other film like <movie_0>.", REQUEST) is None


def test_a_greeting_only_opens_a_conversation():
    turn = "Hello! You might enjoy <movie_0>."
    assert context_problem(turn, TurnContext(last_user="I want a comedy", agent_turns=0)) is None
    later = TurnContext(last_user="Something with more action", agent_turns=2)
    assert "greets" in context_problem(turn, later)


def test_thanks_agreement_and_sorrow_need_what_they_answer():
    assert context_problem("You're welcome! Try <movie_0>.", REQUEST) is not None
    thanked = TurnContext(last_user="thanks, any other?")
    assert context_problem("You're welcome! Try <movie_0>.", thanked) is None
    assert context_problem("Me too! Try <movie_0>.", REQUEST) is not None
    liked = TurnContext(last_user="I love gritty crime stories")
    assert context_problem("Me too! Try <movie_0>.", liked) is None
    assert context_problem("Sorry about that, maybe <movie_0>?", REQUEST) is not None


def test_also_and_another_follow_a_title_already_talked_about():
    assert context_problem("Another good one is <movie_0>.", REQUEST) is not None
    after = TurnContext(last_user="Something else?", agent_turns=1, recommended_before=True)
    assert context_problem("Another good one is <movie_0>.", after) is None


@pytest.fixture(scope="module")
def crb(small_redial, retriever) -> CRBCRS:
    spec = crb_crs_specs(lambda: LLMClient(FakeProvider([])), retriever.cache_dir,
                         catalog_loader=lambda name: small_redial)[0]
    return CRSRegistry([spec]).get("crb_crs_redial")


def test_retrieval_skips_a_turn_whose_filler_does_not_fit(crb: CRBCRS, small_redial):
    items = list(small_redial.items[:1])
    bad = RecommenderTurn("horror film tense", "<movie_0> was good Yes I have seen that movie many times", 1)
    good = RecommenderTurn("horror film tense scary", "You should watch <movie_0>, it is tense.", 1)
    only_bad = CRBCRS("test", small_redial, [bad], crb.candidates, policy=crb.policy)
    context = only_bad.context_of(context_dialogue(["I'm after a tense horror film"], only_bad))
    assert only_bad.retrieve("tense horror film", 1, set(), items, None) == bad
    assert only_bad.retrieve("tense horror film", 1, set(), items, context) is None
    both = CRBCRS("test", small_redial, [bad, good], crb.candidates, policy=crb.policy)
    assert both.retrieve("tense horror film", 1, set(), items, context) == good


def test_a_turn_cut_off_mid_sentence_or_reopening_the_conversation_is_not_used():
    assert context_problem("<movie_0> was a great movie but", REQUEST) == "stops in the middle of a sentence"
    assert "opens" in context_problem("What can I help you find today? <movie_0> maybe", REQUEST)
    assert "seen" in context_problem("Never seen <movie_0> but I heard great things", REQUEST)


def test_a_pronoun_for_a_person_needs_someone_named_and_a_shout_is_not_used():
    assert "person" in context_problem("<movie_0> is one of his latest movies.", REQUEST)
    named = TurnContext(last_user="Anything with Tom Hanks?", agent_turns=1, user_named_person=True)
    assert context_problem("<movie_0> is one of his best.", named) is None
    assert context_problem("WHAT MOVIE GENRES ARE YOU INTO <movie_0>", REQUEST) == "is written in capitals"


def test_how_it_is_needs_a_how_are_you():
    turn = "Good morning, I'm good thanks. Try <movie_0>"
    assert "unasked" in context_problem(turn, TurnContext(last_user="Hi"))
    assert context_problem(turn, TurnContext(last_user="Hi, how are you?")) is None


def test_misspelt_spliced_or_run_together_turns_are_not_used():
    assert "misspelt" in context_problem("<movie_0> u might lkke that movie", REQUEST)
    assert context_problem("You might like <movie_0>, it is suspenseful and gory.", REQUEST) is None
    assert "mid-turn" in context_problem("You can also go for <movie_0> Okay. It sounds great too", REQUEST)
    assert context_problem("Okay, how about <movie_0>?", REQUEST) is None
    assert "together" in context_problem("did you like <movie_0> <movie_1> is good", REQUEST)


def test_a_newer_one_must_be_newer_than_the_titles_named():
    named = TurnContext(last_user="I loved Dead Poets Society (1989)", user_named_title=True,
                        named_years=(1989,))
    assert "ages" in context_problem("A good newer one is <movie_0>.", named, years=[1993 - 10])
    assert context_problem("A good newer one is <movie_0>.", named, years=[2001]) is None


def test_a_turn_ending_on_an_article_is_unfinished_and_she_needs_someone_named():
    assert context_problem("Can I help you find more? sounds like you need a .", REQUEST).startswith("stops")
    assert "person" in context_problem("How about <movie_0>? She did a great job in it!", REQUEST)


def test_a_turn_saying_the_same_words_twice_is_not_used():
    turn = "Ok, have you seen <movie_0>? you might also like <movie_1> you might also like <movie_1>"
    assert context_problem(turn, REQUEST) == "says the same words twice"
    assert context_problem("Have you seen <movie_0>? Or have you seen <movie_1>?", REQUEST) is None
    assert context_problem("Hey I am fine and you", TurnContext(last_user="hey, how you doin")) is None


def test_favourites_family_and_panning_need_what_they_answer():
    greeted = TurnContext(last_user="Hi, how are you tonight?")
    assert "favourite" in context_problem("Mine is <movie_0>", greeted)
    asked = TurnContext(last_user="what are your personal favorite movies")
    assert context_problem("Mine is <movie_0>", asked) is None
    assert context_problem("Those are great! My favorite is <movie_0>.", REQUEST) is None
    assert "family" in context_problem("How old are your children? <movie_0> is great", REQUEST)
    kids = TurnContext(last_user="Any comedies I can watch with my kids?")
    assert context_problem("How old are your children? <movie_0> is great", kids) is None
    assert "pans" in context_problem("I am not a fan of <movie_0>", REQUEST)


@pytest.mark.parametrize("turn", [
    "well! i would suggest <movie_0> to you.",  # a pronoun in lower case
    "Oh.. <movie_0>",  # trailing off
    "<movie_0> haha",  # laughing at nothing
    "<movie_0> who fit the bill",  # a film called "who"
    "<movie_0> would this fit you ?",  # a question run on after the title
    "I loved <movie_0> did you like it too?",
    "Ok, so what about <movie_0> hat movie is pretty great",  # a second sentence with no stop
    "<movie_0> really good also <movie_1> is good",
    "<movie_0> is a fav and <movie_1>",  # the second title hangs off a sentence about the first
    "Of course! I enjoyed <movie_0> a lot or <movie_1>",
    "It was great. So was <movie_0> and <movie_1>.",  # "it" is a film the other person named
    "Good have you seen <movie_0> or <movie_1>",
    "Have yo seen <movie_0>?",
    "I have heard the the new <movie_0> is really good.",  # a doubled word
])
def test_pieces_that_do_not_join_are_left_out(turn):
    assert context_problem(turn, REQUEST) is not None


@pytest.mark.parametrize("turn", [
    "Have you seen <movie_0> or <movie_1>?",
    "Do you like <movie_0> and <movie_1>",
    "Oh, okay, well how about <movie_0>",
    "Some of my favorite movies are <movie_0> , <movie_1> , and <movie_2> . These are all great movies.",
    "Have you seen <movie_0> ? It is great.",
    "<movie_0> is a pretty good one",
])
def test_turns_that_read_as_one_piece_are_kept(turn):
    assert context_problem(turn, REQUEST) is None


def test_a_closing_or_an_opening_remark_does_not_fit_the_middle_of_a_conversation():
    assert "closes" in context_problem("My last recommendation for the day is <movie_0>", REQUEST)
    assert context_problem("You've come to the right place! Have you seen <movie_0> yet?", REQUEST)
    assert context_problem("You've come to the right place! Have you seen <movie_0> yet?",
                           TurnContext(last_user="Hi! Any good horror?", agent_turns=0)) is None


def test_a_pick_is_not_panned():
    assert context_problem("<movie_0> is another, though not the greatest", REQUEST) is not None
