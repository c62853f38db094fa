"""Titles offered without a year or list, and the cues that read the system's last turn."""

import pytest

from evaluators.acts import rules
from evaluators.acts.offers import offer_mentions
from evaluators.acts.offline import OfflineActAnnotator
from tests.acts.acts_helpers import make_dialogue


class ExactTitles:
    """A linker that knows a handful of titles, like the catalogs' exact lookup."""

    known = {"the notebook": "The Notebook (2004)", "the dark knight": "The Dark Knight (2008)"}

    def link_spans(self, text):
        return []

    def exact_title(self, phrase):
        label = self.known.get(phrase.lower().strip())
        return type("Item", (), {"label": label})() if label else None


def offered(text, linker=ExactTitles()):
    return [m.title for m in offer_mentions(text, linker)]


@pytest.mark.parametrize("text, expected", [
    ("Kind of Blue by Miles Davis is the classic starting point.", ["Kind of Blue by Miles Davis"]),
    ("Dark is a German series with a similar mystery vibe.", ["Dark"]),
    ("If you enjoyed that, Better Call Saul is a natural next watch.", ["Better Call Saul"]),
    ("Give Portishead's Dummy a listen, I think it fits.", ["Portishead's Dummy"]),
    ("what about the notebook?", ["The Notebook (2004)"]),
    ("have you seen the dark knight", ["The Dark Knight (2008)"]),
    ("You might like 'Severance', it is eerie.", ["Severance"]),
])
def test_offer_frames_find_titles(text, expected):
    assert offered(text) == expected


@pytest.mark.parametrize("text", [
    "I would recommend the following items:",
    "Have you seen any Marvel movies?",
    "You might like Christopher Nolan's films.",
    "What about comedies?",
    "How about something with Tom Cruise?",
    "Comedies are great. Who are your favorite comedians?",
    "It is a great pick.",
    "Yes, John Wick is quite violent.",
    "what about a comedy?",
    "what about the plot?",  # lower case and not a catalog title
])
def test_talk_without_an_offer_finds_nothing(text):
    assert offered(text) == []


def test_a_lower_case_title_needs_the_catalog():
    assert offered("what about the notebook?", linker=None) == []


def test_seen_question_answered_bare_decides_nothing():
    assert rules.bare_answer_to_seen_question("Have you seen Heat (1995)?", "nope")
    assert rules.bare_answer_to_seen_question("did you catch xtitlex?", "yes i have!")
    assert not rules.bare_answer_to_seen_question("Have you seen Heat (1995)?", "nah")  # dismissive
    assert not rules.bare_answer_to_seen_question("Have you seen Heat (1995)?", "yes, loved it, anything else?")
    assert not rules.bare_answer_to_seen_question("Try Heat (1995).", "yes")


def test_questions_without_a_question_mark():
    assert rules.is_question("wait, what did i ask for again lol")
    assert rules.is_question("is it long?")
    assert not rules.is_question("these don't sound like comedies")


def test_offers_more_closes_the_round():
    assert rules.offers_more("Would you like another recommendation?")
    assert rules.offers_more("great, can I help with anything else?")
    assert not rules.offers_more("Try Heat (1995).")


@pytest.fixture(scope="module")
def annotator():
    return OfflineActAnnotator()


def decision(annotator, turns):
    out = annotator.annotate(make_dialogue(turns), overwrite=True)
    acts = out.utterances[-1].dialogue_acts or []
    return sorted({a.intent for a in acts} & {"ACC", "REJ", "REC-S", "REC-E"})


def test_replies_to_an_unlinked_offer_are_decided(annotator):
    offer = ("A", "Dark is a German series with a similar mystery vibe, definitely worth a try.", None)
    assert decision(annotator, [("U", "anything like Stranger Things?", None), offer]) == ["REC-S"]
    assert decision(annotator, [("U", "anything like Stranger Things?", None), offer,
                                ("U", "i don't want to read subtitles for 3 seasons", None)]) == ["REJ"]
    assert decision(annotator, [("U", "anything like Stranger Things?", None), offer,
                                ("U", "ooh ill start it this week", None)]) == ["ACC"]


def test_after_an_offer_of_more_help_yes_is_not_an_acceptance(annotator):
    turns = [("U", "a war movie", None), ("A", "Try Black Hawk Down (2001).", None), ("U", "ok, I'll watch it", None),
             ("A", "Would you like another recommendation?", None), ("U", "no thanks", None)]
    assert decision(annotator, turns) == []


def test_platform_names_end_a_title():
    assert offered("you may want to try the series Dark on Netflix. It's a German mystery.") == ["Dark"]


def test_echoed_titles_in_any_case():
    from evaluators.acts.offers import echoed_mentions
    from arena.title_mentions import Mention

    offers = [Mention("District 9 (2009)", 0, 17), Mention("Up", 20, 22)]
    assert [m.title for m in echoed_mentions("ok district 9 then", offers)] == ["District 9 (2009)"]
    assert [m.title for m in echoed_mentions("we'll do Up, thanks", offers)] == ["Up"]
    assert echoed_mentions("what's up with that", offers) == []  # short titles only as written


def test_a_concession_does_not_refuse():
    cues = rules.user_cues("ok I'll give xtitlex a try even though I hate subtitles")
    assert cues.accept_strong and not cues.reject_strong
    assert rules.user_cues("I hate subtitles").reject_strong


def test_two_titles_weigh_against_each_other(annotator):
    offer = ("A", "Here are a few options: 1. Knives Out (2019) 2. Gone Girl (2014) 3. Prisoners (2013)", None)
    assert decision(annotator, [offer, ("U", "prisoners sounds good, gone girl I already saw", None)]) == ["ACC", "REJ"]
    assert decision(annotator, [offer, ("U", "ok then knives out, thanks", None)]) == ["ACC"]


def test_people_and_genres_are_not_offered_titles():
    from arena.title_mentions import shared_linker

    linker = shared_linker()
    assert [m.title for m in offer_mentions("What about Christopher Nolan?", linker)] == []
    assert [m.title for m in offer_mentions("How about Horror?", linker)] == []
    assert [m.title for m in offer_mentions("What about Inception?", linker)] == ["Inception"]


def test_one_lower_case_word_only_as_the_object_of_a_question(annotator):
    from arena.title_mentions import shared_linker

    linker = shared_linker()
    assert [m.title for m in offer_mentions("what about jaws", linker)] == ["Jaws (1975)"]
    assert offer_mentions("what about horror?", linker) == []
    assert offer_mentions("what about jaws with friends", linker) == []
    turns = [("U", "shark movie", None), ("A", "what about jaws", None), ("U", "the classic! ok yeah lets do jaws", None)]
    assert decision(annotator, turns) == ["ACC"]


def test_an_answer_to_a_factual_question_recommends_nothing(annotator):
    assert rules.asks_about_facts("who is the director?")
    assert not rules.asks_about_facts("who else would you recommend?")
    turns = [("U", "who is the director?", None), ("A", "Denis Villeneuve directed both Dune and Arrival.", None)]
    assert decision(annotator, turns) == []
    turns = [("U", "who is the director?", None), ("A", "Denis Villeneuve. You might also like Arrival (2016).", None)]
    assert decision(annotator, turns) == ["REC-S"]


def test_a_title_may_open_with_a_pronoun_when_capitals_follow():
    assert offered("It Takes Two is a great co-op game made for exactly that.") == ["It Takes Two"]
    assert offered("It is a great game.") == []


def test_a_word_in_the_request_is_not_the_users_title(annotator):
    # "halloween" here is the occasion, so the system's Halloween (1978) is a new offer ...
    turns = [("U", "something scary for halloween", None), ("A", "What about Halloween (1978)?", None)]
    assert decision(annotator, turns) == ["REC-E"]
    # ... while "parasite" after "liked" names the film, and praising it offers nothing
    turns = [("U", "i really liked parasite", None),
             ("A", "Parasite is an incredible film! Are you looking for another thriller?", None)]
    assert decision(annotator, turns) == []


def test_neither_sounds_good_is_a_refusal(annotator):
    offer = ("A", "Edge of Tomorrow (2014) or Palm Springs (2020) would both work.", None)
    assert decision(annotator, [offer, ("U", "neither sounds good", None)]) == ["REJ"]
    assert decision(annotator, [offer, ("U", "love actually yes, the others no", None)]) == ["ACC", "REJ"]


def test_the_start_of_a_longer_name_is_not_a_title(annotator):
    from evaluators.acts.offers import cut_short
    from arena.title_mentions import Mention

    assert cut_short("No, Ted Lasso streams on Apple TV+.", Mention("Ted (2012)", 4, 7, "catalog"))
    assert not cut_short("Ted (2012) is silly.", Mention("Ted (2012)", 0, 10, "catalog"))
    turns = [("U", "is ted lasso on netflix?", None), ("A", "No, Ted Lasso streams on Apple TV+.", None)]
    assert decision(annotator, turns) == []
    turns = [("U", "a feel good show", None), ("A", "Ted Lasso is warm, funny and very uplifting.", None),
             ("U", "ok adding ted lasso to the list", None)]
    assert decision(annotator, turns) == ["ACC"]
