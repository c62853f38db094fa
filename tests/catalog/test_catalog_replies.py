"""Replies that name only what they show: the final check, the LLM-led path with a scripted
LLM, and the grounded path over many generated replies (fake provider; the real model is in
test_catalog_grounded_slow.py)."""

from __future__ import annotations

import random

import pytest
from dialogue_helpers import dialogue

from arena.catalogs.catalog import Catalog

from arena.llm import FakeProvider, LLMClient, LLMRequest, RetryPolicy
from crs.chatcrs import ChatCRS
from crs.grounded import connector_problem, fact_line
from crs.llm_led import MENTIONED_REFERENCE
from crs.reply_check import enforce_shown_titles, named_titles, sentence_spans, unshown_titles




def client(script) -> tuple[LLMClient, FakeProvider]:
    provider = FakeProvider(script)
    return LLMClient(provider, retry=RetryPolicy(base_delay_s=0.01)), provider


# -- the final check ------------------------------------------------------------------------
def test_check_drops_sentences_naming_unshown_titles_and_writes_labels(redial: Catalog):
    dark_city = redial.find_title("Dark City (1998)")
    inception = redial.find_title("Inception (2010)")
    text = (
        "Try Dark City (2001), it is moody. The Matrix (1999) is similar. "
        'Also "Blorp Quest" is fun!\nAnd **Inceptoin** is a puzzle.'
    )
    assert {t.text for t in unshown_titles(text, [dark_city, inception], redial)} == {
        "The Matrix (1999)", '"Blorp Quest"',
    }
    checked = enforce_shown_titles(text, [dark_city, inception], redial)
    assert checked == "Try Dark City (1998), it is moody.\nAnd **Inception (2010)** is a puzzle."
    assert unshown_titles(checked, [dark_city, inception], redial) == []


def test_a_title_inside_a_quoted_plot_stays_in_the_plots_own_words(redial: Catalog):
    """A shown item's plot may name another shown item in its own words ("inspired by Superman's selfless
    act"); written as a label it read "inspired by Superman (1978) selfless act"."""
    league = redial.find_title("Justice League (2017)")
    superman = redial.find_title("Superman (1978)")
    assert "Superman's" in league.plot
    text = f"Picks:\n1. Justice League (2017). {league.plot}\n2. Superman (1978)."
    assert enforce_shown_titles(text, [league, superman], redial) == text


def test_check_falls_back_when_nothing_is_left(redial: Catalog):
    assert enforce_shown_titles("Watch Titanic (1997).", [], redial, fallback="What do you like?") == (
        "What do you like?"
    )


def test_list_numbers_and_abbreviations_stay_in_their_sentence(redial: Catalog):
    text = "Picks:\n1. Mr. Deeds is silly. Fun.\n2. Another line."
    titles = named_titles(text, redial)
    pieces = [text[a:b].strip() for a, b in sentence_spans(text, [(t.start, t.end) for t in titles])]
    assert pieces == ["Picks:", "1. Mr. Deeds is silly.", "Fun.", "2. Another line."]


def test_people_and_genres_in_quotes_are_not_titles(redial: Catalog):
    assert named_titles('I love "Tom Hanks" and "horror".', redial) == []


# -- LLM-led --------------------------------------------------------------------------------
@pytest.fixture
def llm_led(small_redial: Catalog, retriever):
    def build(script) -> tuple[ChatCRS, FakeProvider]:
        llm, provider = client(script)
        return ChatCRS("chatcrs_redial", small_redial, retriever, llm, mode="llm_led"), provider

    return build


def test_llm_led_links_catalog_and_misspelt_titles_in_the_order_named(llm_led, small_redial):
    crs, _ = llm_led(["Since you want space, The Matrx (1999) is a must. Star Wars (1977) too!"])
    text, items = crs.respond(dialogue("I want a space adventure"))
    assert [i.title for i in items] == ["The Matrix (1999)", "Star Wars (1977)"]
    assert text == "Since you want space, The Matrix (1999) is a must. Star Wars (1977) too!"


def test_llm_led_regenerates_once_then_drops_unknown_and_turned_down_titles(llm_led, small_redial):
    toy_story = small_redial.find_title("Toy Story (1995)").to_recommended()
    first = (
        "Blorp Quest (2011) is a gem. You might enjoy The Matrix (1999). "
        "Titanic (1997) has great effects. Toy Story (1995) is fun."
    )
    second = "You might enjoy Star Wars (1977). Also Zorblax Returns (2015) is great. Titanic (1997) is epic."
    crs, provider = llm_led([first, second])
    d = dialogue("Hi", "Maybe Toy Story?", "I hated Titanic. Something in space please?", items_after={1: [toy_story]})
    text, items = crs.respond(d)
    assert text == "You might enjoy Star Wars (1977)."
    assert [i.title for i in items] == ["Star Wars (1977)"]
    assert len(provider.requests) == 2  # one draft, one rewrite
    note = provider.requests[1].messages[0][1]
    assert "Blorp Quest (2011)" in note and "Titanic (1997)" in note and "Toy Story (1995)" in note
    assert "The Matrix (1999)" not in note.split("cannot be offered")[1]
    assert "Turned down by the person: Titanic (1997)" in provider.requests[0].messages[0][1]


def test_llm_led_refers_to_the_persons_own_title_without_naming_it(llm_led):
    crs, _ = llm_led(["If you loved Alien (1979), you will enjoy Star Wars (1977)."])
    text, items = crs.respond(dialogue("I loved Alien (1979), what else?"))
    assert text == f"If you loved {MENTIONED_REFERENCE}, you will enjoy Star Wars (1977)."
    assert [i.title for i in items] == ["Star Wars (1977)"]


def test_llm_led_over_many_scripted_replies_never_names_an_unshown_title(llm_led, small_redial):
    rng = random.Random(7)
    known = [item.label for item in small_redial.items]
    unknown = ["Blorp Quest (2011)", '"Moonlight Harbour Mysteries"', "**The Quiet Zorblax**"]
    asks = ["I like horror", "Something like Alien please", "A funny one?", "I hated Titanic, any romance?"]

    def answer(request: LLMRequest) -> str:
        names = rng.sample(known, 3) + [rng.choice(unknown)]
        rng.shuffle(names)
        return " ".join(f"{rng.choice(['Try', 'Maybe', 'Watch'])} {n}, it is great." for n in names)

    crs, _ = llm_led(answer)
    for n in range(30):
        text, items = crs.respond(dialogue(asks[n % len(asks)]))
        shown = [small_redial.get(i.item_id) for i in items]
        assert text and unshown_titles(text, shown, small_redial) == []
        assert len(items) <= 5


# -- grounded -------------------------------------------------------------------------------
def test_connector_check(small_redial: Catalog):
    alien = small_redial.find_title("Alien (1979)")
    director = alien.people["director"][0]
    assert connector_problem("Great taste, you will love these!", [alien], small_redial) is None
    assert connector_problem(f"A classic from {director} awaits you.", [alien], small_redial) is None
    assert connector_problem("Try The Matrix, it rocks.", [alien], small_redial) == "names a title"
    assert connector_problem("A gem from the late eighties, 1987 exactly.", [alien], small_redial) == "holds a number"
    assert "not in the catalog" in connector_problem("Something Steven Spielberg would love.", [alien], small_redial)
    assert connector_problem("This one won an award.", [alien], small_redial) == "states a fact"


SENTENCES = [
    "Great choice, here is something for you!",
    "Oh, I love that kind of story.",
    "You should watch The Matrix (1999), it is amazing.",
    "This one was directed by James Cameron in 1986.",
    'My favourite is "Moonlight Harbour".',
    "Sure! Here are some movies for you. Enjoy them all, Bob.",
    "Tom Hanks is great in these.",
    "",
]


def test_grounded_replies_over_many_dialogues_name_only_shown_items(small_redial, retriever):
    rng = random.Random(3)
    llm, _ = client(lambda request: rng.choice(SENTENCES))
    crs = ChatCRS("chatcrs_redial", small_redial, retriever, llm, mode="grounded")
    asks = [
        "I want a scary movie", "Something romantic please", "A space adventure with aliens",
        "I loved Toy Story, anything similar?", "a cartoon for my kids", "hello", "a comedy",
    ]
    recommended = 0
    for n in range(42):
        d = dialogue(asks[n % len(asks)]) if n % 2 else dialogue("hi", "Hello! What do you like?", asks[n % 7])
        text, items = crs.respond(d)
        shown = [small_redial.get(i.item_id) for i in items]
        assert text and unshown_titles(text, shown, small_redial) == []
        recommended += bool(items)
        for line in text.splitlines():
            if line[:2] in {f"{k}." for k in range(1, 4)}:
                item = shown[int(line[0]) - 1]
                facts = fact_line(item)
                # every sentence of an item's line is copied from its catalog entry
                for a, b in sentence_spans(line[3:], [(0, len(item.label))]):
                    assert line[3:][a:b].strip() in facts
        catalog_facts = " ".join(fact_line(item) for item in shown)
        for invented in ("1986", "James Cameron", "Bob", "Tom Hanks"):
            assert invented not in text or invented in catalog_facts
    assert recommended >= 30


def test_a_long_plot_is_shown_in_whole_sentences_not_cut_mid_clause():
    from crs.grounded import PLOT_MAX_CHARS, short_plot
    plot = ("A retired diver is pulled back into the trade when his old crew finds a wreck off the coast. "
            "His daughter joins them against his wishes, and the sea has plans of its own for the whole "
            "family before the summer ends.")
    shown = short_plot(plot)
    assert shown == "A retired diver is pulled back into the trade when his old crew finds a wreck off the coast."
    assert len(plot) > PLOT_MAX_CHARS
    one_long = "A man " + "who walks " * 40 + "home."
    assert short_plot(one_long).endswith("...")
    assert short_plot("Short and whole.") == "Short and whole."
