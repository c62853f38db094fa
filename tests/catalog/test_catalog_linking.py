"""Finding mentioned titles and knowledge-graph entities in free text."""

from __future__ import annotations

import pytest

from arena.catalogs.catalog import Catalog
from arena.titles.phrases import normalize, tokenize


def labels(items):
    return [item.label for item in items]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("I loved The Matrix", ["The Matrix (1999)"]),
        ("i loved the matrix and the matrix reloaded", ["The Matrix (1999)", "The Matrix Reloaded (2003)"]),
        ("Have you seen It (2017)?", ["It (2017)"]),
        ("I loved It", ["It (2017)"]),
        ("Have you seen 'Her'?", ["Her (2013)"]),
        ("my kids love Frozen", ["Frozen (2013)"]),
        ("I liked Halloween (2007) more than the original", ["Halloween (2007)"]),
        ("the dark knight rises was long", ["The Dark Knight Rises (2012)"]),
        ("Star Wars: The Last Jedi was ok", ["Star Wars: Episode VIII – The Last Jedi (2017)"]),
        ("something like Inceptoin please", ["Inception (2010)"]),
        ("what about spiderman homecoming", ["Spider-Man: Homecoming (2017)"]),
        ("Police Academy (1984) and American Pie (1999)", ["Police Academy (1984)", "American Pie (1999)"]),
        ("Get Out was creepy", ["Get Out (2017)"]),
        ("how about the lion king or toy story 3", ["The Lion King (1994)", "Toy Story 3 (2010)"]),
        # a short word one letter off, the rest of a long title right
        ("maybe something like a hitchhikers gude to the galaxy ?",
         ["The Hitchhiker's Guide to the Galaxy (2005)"]),
        # everyday words after a comparing "like" are a title even in lower case
        ("whats the most like love actually mixed in with silver linings playbook",
         ["Love Actually (2003)", "Silver Linings Playbook (2012)"]),
        ("something like the ring", ["The Ring (2002)"]),
    ],
)
def test_links_mentioned_titles(redial: Catalog, text, expected):
    assert labels(redial.link(text)) == expected


@pytest.mark.parametrize(
    "text",
    [
        "It was great, I liked it a lot",
        "Hi, how are you?",
        "I'm frozen, it is so cold here",
        "Frozen is nice",  # a lone capital that opens a sentence proves nothing
        "I want to get out more",
        "up for anything",
        "I need a movie in time for the holidays",
        "I saw the room yesterday and the others liked it",
        "I'm in the mood for a movie about a boy and his dog",
        "Awesome, thanks!",
        "I would like love stories",  # "like" as a liking
        "something like that one",
        "a movie like the last one",
        "I want something with a lot of action and a great story",
        "",
    ],
)
def test_ordinary_words_do_not_link(redial: Catalog, text):
    assert redial.link(text) == []


def test_longer_title_wins_over_its_prefix(redial: Catalog):
    assert labels(redial.link("The Matrix Reloaded is underrated")) == ["The Matrix Reloaded (2003)"]


def test_link_limit_and_deduplication(redial: Catalog):
    text = "Titanic, Avatar, Inception, Titanic again, Gravity, Interstellar and Jaws"
    assert len(redial.link(text, limit=3)) == 3
    found = redial.link(text, limit=10)
    assert len(found) == len(set(found)) == 6


def test_link_spans_point_at_the_mention(redial: Catalog):
    text = "Yesterday I watched Alien (1979) twice"
    [(item, start, end)] = redial.link_spans(text)
    assert item.label == "Alien (1979)"
    assert text[start:end] == "Alien (1979)"


def test_person_names_are_not_read_as_titles(opendialkg: Catalog):
    assert opendialkg.link("Could you recommend movies directed by John Carpenter?") == []
    assert [name for name, _ in opendialkg.link_entities("movies by John Carpenter")] == ["John Carpenter"]


def test_genre_words_are_genres_not_titles(opendialkg: Catalog):
    # OpenDialKG has a film called "Drama" whose entity is also the genre.
    assert labels(opendialkg.link("The Salon is a Drama and Comedy.")) == ["The Salon (2005)"]
    assert labels(opendialkg.link("I loved Casablanca")) == ["Casablanca (1942)"]
    drama = opendialkg.entity2id["Drama"]
    assert ("Drama", drama) in opendialkg.link_entities("The Salon is a Drama and Comedy.")


def test_link_entities_finds_people_genres_and_titles(redial: Catalog):
    found = redial.link_entities("I like horror and sci-fi movies with Tom Hanks, like Cast Away")
    names = [name for name, _ in found]
    assert names == ["horror", "sci-fi", "Tom Hanks", "Cast Away (2000)"]
    assert all(redial.entity2id[name] == eid for name, eid in found)


def test_link_entities_understands_everyday_genre_words(redial: Catalog):
    text = "something funny or animated, maybe comedies or romantic films, or scifi"
    names = [name for name, _ in redial.link_entities(text)]
    assert names == ["comedy", "animation", "romance", "sci-fi"]


def test_link_entities_on_opendialkg_includes_years_and_languages(opendialkg: Catalog):
    text = "Any Fight Club style thriller in English from 2008?"
    names = [name for name, _ in opendialkg.link_entities(text)]
    assert "Fight Club" in names and "2008" in names
    assert any("English" in name for name in names)


def test_normalisation_folds_case_accents_and_punctuation():
    assert normalize("Léon: The Professional") == "leon the professional"
    assert normalize("Ocean's Eleven & Co.") == "oceans eleven and co"
    assert [t.raw for t in tokenize("Spider-Man (2002)")] == ["Spider", "Man", "2002"]
