"""A negation reaches the phrase it attaches to, not the rest of its clause."""

from __future__ import annotations

import pytest

from arena.reading.constraints import Constraints, update
from arena.reading.scope import negated_before, negated_phrases


def read(text: str) -> Constraints:
    return update(Constraints(), text, complaint=False)


def test_a_mood_or_a_genre_with_the_gore_left_out_asks_for_either():
    c = read("a nature documentary or something eerie, minus the gore")
    assert "documentary" in c.genres and "horror" in c.genres and c.any_genre
    assert c.unwanted_intensity == {"gore"} and not c.unwanted_genres


@pytest.mark.parametrize("text, kept, out", [
    ("a western without any romance or a crime film", "crime", "romance"),
    ("animated, no musicals, or perhaps a comedy", "comedy", "musical"),
    ("a sci-fi film but not too violent, or a thriller", "thriller", None),
])
def test_a_new_phrase_after_the_negated_one_is_still_asked_for(text, kept, out):
    c = read(text)
    assert kept in c.genres and kept not in c.unwanted_genres
    assert out is None or out in c.unwanted_genres


@pytest.mark.parametrize("text, genres", [
    ("please no westerns or musicals", {"western", "musical"}),
    ("I can't stand war films, westerns or musicals", {"war", "western", "musical"}),
])
def test_a_bare_list_after_the_cue_stays_ruled_out(text, genres):
    assert genres <= read(text).unwanted_genres


def test_the_words_ruled_out_stop_where_the_next_phrase_starts():
    text = "a comedy with no zombies, maybe something sporty"
    assert negated_phrases(text) == ["zombies"]
    assert not negated_before(text, text.index("sporty"))
    assert read(text).unwanted_words and all(not w.startswith("mayb") for w in read(text).unwanted_words)
