"""The ranker reads only what the constraints leave of a message: a genre that every item shown must have
is a filter, so its word no longer brings titles that hold it ("a comedy" gave The Original Kings of
Comedy, "a good horror movie" The Amityville Horror), and a message with no word left that says what is
wanted ("Yes I am looking for a comedy") is not matched against plots and titles at all ("yes" gave Yes
Man): the items the logged conversations talk of most come first. A list of three or more genres is a
list of tastes, one of which will do. The messages are written for these tests."""

from __future__ import annotations

import numpy as np
import pytest

from arena.catalogs.catalog import Catalog
from arena.catalogs.retrieval import ItemRetriever
from arena.llm.client import LLMClient
from arena.llm.providers import FakeProvider
from arena.reading.constraints import Constraints, carried_spans, update
from crs.chatcrs import ChatCRS
from arena.reading.vocabulary import says_what_is_wanted
from crs.recommender.signals import PopularitySignal
from tests.catalog.test_chatcrs_policy import talk

@pytest.fixture(scope="module")
def chatcrs(redial: Catalog, tmp_path_factory) -> ChatCRS:
    # The whole catalog (its embeddings ship with the project): on a sample, too few entries compete for
    # the words of a message to show what they bring.
    retriever = ItemRetriever(redial, tmp_path_factory.mktemp("ranker-embeddings"))
    retriever.prepare()
    llm = LLMClient(FakeProvider(lambda request: "no model sentence may reach a reply"))
    return ChatCRS("chatcrs_redial", redial, retriever, llm, mode="grounded")


def popularity(system: ChatCRS, items) -> list[float]:
    signal = next(s for s in system.recommender.signals if isinstance(s, PopularitySignal))
    rows = {item.item_id: n for n, item in enumerate(system.catalog.items)}
    return [float(signal.named[rows[i.item_id]]) for i in items]


@pytest.mark.parametrize("message, genre, words", [
    ("Yes I am looking for a comedy", "comedy", ("yes", "comedy")),
    ("I want a good comedy", "comedy", ("comedy",)),
    ("hi, can you recommend a good horror movie?", "horror", ("horror",)),
])
def test_a_genre_asked_brings_no_title_that_holds_its_word(chatcrs, message, genre, words):
    _, _, shown = talk(chatcrs, message)
    assert shown and all(genre in i.genres for i in shown), [i.label for i in shown]
    assert not [i.label for i in shown if any(w in i.title.lower().split() for w in words)]
    # Nothing else was asked: the most talked-of of the genre come first, not the newest obscure entries.
    allowed = [i for i in chatcrs.catalog.items if genre in i.genres]
    assert min(popularity(chatcrs, shown)) >= float(np.median(popularity(chatcrs, allowed)))


def test_a_refinement_with_no_word_left_keeps_to_what_was_asked(chatcrs):
    d, _, shown = talk(chatcrs, "hi, can you recommend a good horror movie?", "something more recent")
    first = [chatcrs.catalog.get(i.item_id) for i in d.agent_turns()[0].items]
    newer = min(max(i.year for i in first) + 1, 2012)  # the reader's rule for "newer" than a list
    assert shown and all("horror" in i.genres and i.year >= newer for i in shown), [i.label for i in shown]
    allowed = [i for i in chatcrs.catalog.items if "horror" in i.genres and (i.year or 0) >= newer]
    assert min(popularity(chatcrs, shown)) >= float(np.median(popularity(chatcrs, allowed)))


def test_a_title_that_holds_a_genre_word_stays_a_title():
    text = "I loved The Amityville Horror, any horror like it?"
    spans = carried_spans(text, Constraints(genres=frozenset({"horror"})))
    # Both "Horror"s are genre words; which one names the title is the policy's to tell (it keeps titles).
    assert {text[a:b].lower() for a, b in spans} == {"horror"}


def test_what_says_nothing_of_the_item():
    assert not says_what_is_wanted("Yes I am looking for a      ")
    assert not says_what_is_wanted("hi, can you recommend a good       movie?")
    assert says_what_is_wanted("a      about dogs")


@pytest.mark.parametrize("text", [
    "I enjoy horror the most, but am also fine with action, thriller, and fantasy",
    "comedy, drama, romance and animation are my favourites",
    "I like westerns but I'm fine with war films too",
])
def test_a_list_of_tastes_asks_for_any_one_of_them(text):
    read = update(Constraints(), text, complaint=False)
    assert len(read.genres) >= 2 and read.any_genre, read


def test_two_genres_named_together_are_both_asked_for():
    read = update(Constraints(), "a romantic comedy please", complaint=False)
    assert read.genres == {"comedy", "romance"} and not read.any_genre


def test_a_plain_first_request_gets_well_liked_titles_and_one_question(chatcrs):
    _, text, shown = talk(chatcrs, "Can you suggest something good to watch tonight?")
    # "tonight" says when, not what: no title or plot holding it ("Skylark Tonight", Game Night).
    assert shown and not [i.label for i in shown if "tonight" in (i.title + " " + i.plot).lower()
                          or "night" in i.title.lower()]
    assert text.rstrip().endswith("I'll narrow these down.")
    _, text, _ = talk(chatcrs, "Can you suggest something good to watch tonight?", "a comedy then")
    assert "narrow these down" not in text
