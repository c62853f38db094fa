"""A sign-off after remarks on the titles is a closing: what a person says about a shown title (seen it,
its genre, who in the family liked it, a "but") before the thanks or the goodbye asks for no new list.
A question, a plain ask for other items, a turn-down or a wish after the sign-off still asks on. The
messages are written for these tests."""

from __future__ import annotations

import pytest

from arena.reading.acts import is_closing, signs_off_after_comments, takes_it
from tests.catalog.test_closings_and_references import _read, setting, systems  # noqa: F401
from tests.catalog.test_chatcrs_policy import talk

SIGN_OFFS = [
    "Already watched that one, a great thriller. Many thanks for your help!",
    "My daughter adored the first film. Thanks a lot, goodbye",
    "Never heard of it but the plot seems fun, cheers!",
    "Saw it at the cinema years ago, a proper western. Thank you!",
    "The cast is strong and the story a bit dark. I appreciate the tips. Have a nice evening!",
    "Not familiar with it, but I will definitely check out those titles",
    "That is more my style. Thanks for the ideas",
]
STILL_ASKING = [
    "Seen it, thanks, but I'm after a comedy now",
    "Great thriller. Thanks, though something lighter next",
    "Thanks, I like westerns too",
    "Watched all of those, thank you. Anything from the 70s?",
    "Not my thing, thanks.",
    "Thanks! Could you find me a horror one?",
    "A lovely film. Thanks, and more like that for my kids",
]


@pytest.mark.parametrize("text", SIGN_OFFS)
def test_a_sign_off_after_remarks_is_a_closing(text):
    assert signs_off_after_comments(text) and is_closing(text), text


@pytest.mark.parametrize("text", STILL_ASKING)
def test_a_sign_off_that_still_asks_is_no_closing(text):
    assert not signs_off_after_comments(text), text
    assert not is_closing(text), text


@pytest.mark.parametrize("text", ["I'd love to watch that!", "We would like to see those"])
def test_a_wish_for_the_shown_item_takes_it(text):
    assert takes_it(text) and is_closing(text)


@pytest.mark.parametrize("text", SIGN_OFFS[:4] + ["I would like to see it!"])
def test_the_policy_reads_a_sign_off_after_remarks_as_an_end(setting, text):  # noqa: F811
    assert _read(setting, text).act in ("end", "accept"), text


@pytest.mark.parametrize("text", STILL_ASKING[:4])
def test_the_policy_reads_a_sign_off_that_still_asks_as_asking(setting, text):  # noqa: F811
    assert _read(setting, text).act not in ("end", "accept"), text


@pytest.mark.parametrize("name", ["chatcrs_redial", "crb_crs_redial"])
def test_no_system_answers_a_sign_off_after_remarks_with_a_list(systems, name):  # noqa: F811
    d, text, items = talk(systems[name], "a funny adventure film please",
                          "Already watched that one, a great comedy. Many thanks for your help!")
    assert d.agent_turns()[0].items and items == [], (name, text)
