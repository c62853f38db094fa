"""More words read from the written tables and the catalog's own records (messages written for these tests):
"anime" and "Studio Ghibli" are told by the credits of Japanese animation directors the catalog records;
"lately" asks for the catalog's last years; "anyone famous in it?" asks who stars; "anything else?" asks for
more and turns nothing down."""

from __future__ import annotations

import pytest

from arena.reading.acts import question_aspect
from arena.reading.constraints import Constraints, update
from tests.catalog.test_chatcrs_policy import talk
from tests.catalog.test_ranker_reads_what_is_left import chatcrs  # noqa: F401


@pytest.mark.parametrize("message", ["got any anime you'd suggest?", "I'm after some good animes"])
def test_anime_is_japanese_animation_by_its_credits(chatcrs, message):
    _, text, shown = talk(chatcrs, message)
    assert shown and text.startswith("Here are some anime picks")
    makers = {"Hayao Miyazaki", "Isao Takahata", "Mamoru Hosoda", "Makoto Shinkai", "Mamoru Oshii",
              "Hiromasa Yonebayashi", "Katsuhiro Ôtomo", "Satoshi Kon", "Hideaki Anno", "Kunihiko Yuyama",
              "Tatsuya Nagamine", "Naoko Yamada", "Yoshiyuki Tomino", "Gorô Miyazaki"}
    assert all(set(i.people.get("director", ())) & makers for i in shown), [i.label for i in shown]


def test_studio_ghibli_is_named_once(chatcrs):
    _, text, shown = talk(chatcrs, "Do you have Studio Ghibli films?")
    assert "from Studio Ghibli:" in text and "Ghibli and" not in text
    assert all({"Hayao Miyazaki", "Isao Takahata", "Hiromasa Yonebayashi", "Gorô Miyazaki"}
               & set(i.people.get("director", ())) for i in shown)


@pytest.mark.parametrize("text", ["seen anything good lately?", "what's come out recently that's worth it?"])
def test_lately_asks_for_the_last_years(text):
    read = update(Constraints(), text, complaint=False, latest=(2016, 2100))
    assert read.years == (2016, 2100)


@pytest.mark.parametrize("text", ["anyone famous in the second one?", "anybody well-known in it?"])
def test_anyone_famous_asks_who_stars(text):
    assert question_aspect(text) == "stars"


def test_anything_else_asks_for_more_and_turns_nothing_down(chatcrs):
    _, text, _ = talk(chatcrs, "a war movie please", "anything else from the last few years?")
    assert "leave those out" not in text and text.startswith("Some other war picks")
