"""A title typed with a digit for letters links to the catalog's plain spelling."""

from __future__ import annotations

from arena.reading.title_spelling import plain_readings, respelled
from tests.support.conversations import read


def test_a_stylised_title_links_to_the_plainly_spelt_catalog_entry(policy, redial):
    move = read(policy, redial, "I want a dark thriller in the vein of Se7en")
    assert move.act == "request" and "Seven (1995)" in [i.label for i in move.about]


def test_the_plain_readings_of_a_word_with_a_digit_inside():
    assert plain_readings("Se7en") == ["seven", "seten"]
    assert plain_readings("M3GAN") == ["megan"]


def test_digits_that_are_no_spelling_stay_as_typed():
    title_words = {"seven", "megan", "bos", "nd"}.__contains__
    text = "films from the 80s, the 2nd one, 4ever young"
    assert respelled(text, title_words) == text
    assert respelled("like M3GAN", title_words) == "like Megan"
    assert respelled("like se7en", {"seven", "se7en"}.__contains__) == "like se7en"  # the catalog's own spelling
