"""Five reading rules: the medium and its joining words are no topic ("music based videos"), "the latest"
is the catalog's own last years, a liked title the catalog lacks is said to be missing, a question about
the system after a list is about the system, and a studio or a language subject is read from the
catalog's own fields."""

from __future__ import annotations

from collections import Counter

import pytest

from arena.catalogs.catalog import Catalog
from arena.dialogue import Dialogue
from arena.reading.constraints import Constraints, latest_years, update
from arena.reading.names_unknown import liked_title_phrases, maker_names
from arena.reading.phrase_table import maker_credits
from arena.reading.subjects import plain_subjects, subjects_asked, word_counts
from crs.dialogue_policy import DialoguePolicy
from crs.item_answers import heading, system_intro
from tests.support.conversations import read


@pytest.fixture(scope="module")
def counts(redial: Catalog) -> Counter:
    return word_counts(redial.items)


@pytest.mark.parametrize("message", [
    "got any dance based clips?", "I want something video-based tonight", "short videos about cooking",
    "a flick based on a song",
])
def test_the_medium_and_its_joining_words_are_no_subject(message, counts, redial):
    said = {s for s, _ in subjects_asked(message)} | {
        s for s, _ in plain_subjects(message, counts, len(redial.items))}
    assert not said & {"video", "videos", "clip", "clips", "based", "flick", "about", "with"}, said


@pytest.mark.parametrize("message", ["looking for music-based films", "any movie based around music?",
                                     "some music clips for a party"])
def test_music_as_what_the_item_is_made_of_asks_for_the_music_genre(message):
    c = update(Constraints(), message, complaint=False)
    assert c.genres == {"music"} and not c.subjects


def test_the_latest_is_the_catalogs_own_last_years():
    # a catalog whose newest entries are from 1990: its latest years end there, whatever today's date is
    years = [1950] * 60 + [1985] * 20 + [1988] * 10 + [1989] * 6 + [1990] * 4
    assert latest_years(years) == (1989, 2100)
    c = update(Constraints(), "what are the newest westerns you have?", complaint=False,
               latest=latest_years(years))
    assert c.years == (1989, 2100) and c.genres == {"western"}


def test_the_latest_of_a_real_catalog_combines_with_a_genre(policy, redial):
    low, _ = latest_years(i.year for i in redial.items)
    newest = max(i.year for i in redial.items if i.year)
    assert newest - 5 <= low <= newest
    move = read(policy, redial, "show me the most recent animated films")
    assert move.act == "request" and move.constraints.years == (low, 2100)
    assert move.constraints.genres == {"animation"}


def test_a_liked_title_the_catalog_lacks_is_said_to_be_missing(policy, redial):
    assert [p for p, _ in liked_title_phrases("we really enjoyed Quorvath Rising, more like that?")] == [
        "Quorvath Rising"]
    move = read(policy, redial, "we really enjoyed Quorvath Rising, more like that?")
    assert move.act == "request" and len(move.notes) == 1
    assert "Quorvath Rising" in move.notes[0] and "don't have" in move.notes[0]
    # the missing title's words reach no ranker, so no lookalike of them is matched
    assert "Quorvath" not in move.state.asked[-1]


def test_a_liked_title_the_catalog_holds_gets_no_missing_note(policy, redial):
    move = read(policy, redial, "I liked Toy Story, anything similar?")
    assert move.notes == []


@pytest.mark.parametrize("question", ["How do you go about choosing those?", "so are you a real person?",
                                      "where did all these titles come from?"])
def test_a_question_about_the_system_after_a_list_is_about_the_system(policy, redial, question):
    shown = ["Groundhog Day (1993)", "Billy Madison (1995)"]
    move = read(policy, redial, "a feel-good comedy", shown, question)
    assert (move.act, move.aspect) == ("chat", "system")
    assert "catalog" in system_intro("movie", question)


def test_how_this_list_was_chosen_stays_a_question_about_the_list(policy, redial):
    move = read(policy, redial, "a feel-good comedy", ["Groundhog Day (1993)", "Billy Madison (1995)"],
                "how did you pick those two?")
    assert (move.act, move.aspect) == ("question", "why")


def test_a_question_about_a_shown_item_stays_about_the_item(policy, redial):
    move = read(policy, redial, "a feel-good comedy", ["Groundhog Day (1993)", "Billy Madison (1995)"],
                "how does the first one end?")
    assert move.act == "question"


def test_language_is_a_subject_the_plots_bear_out(policy, redial):
    move = read(policy, redial, "any film about language and translation?")
    assert "language" in move.constraints.subjects


def test_a_studio_the_records_cannot_tell_gets_one_line_and_no_title_match(policy, redial):
    assert [n for n, _ in maker_names("anything made by Laika?", {})] == ["Laika"]
    move = read(policy, redial, "anything made by Laika?")
    assert not move.constraints.makers and len(move.notes) == 1 and "Laika" in move.notes[0]
    assert "Laika" not in move.state.asked[-1]  # no lookalike title must come of it


@pytest.mark.parametrize("message, maker", [
    ("a superhero film from marvel please", "Marvel"), ("got any DC movies?", "DC"),
    ("anything made by Pixar?", "Pixar"),
])
def test_a_studio_of_the_phrase_table_is_told_by_the_credits_the_catalog_records(policy, redial, message,
                                                                                 maker):
    """ReDial's records name no studio, but they credit the comic creators of a Marvel or DC film as its
    writers and name Pixar's directors: the films they mark, and never a title or plot that merely holds
    the word (a short called "Marvel One-Shots", a documentary about Pixar)."""
    move = read(policy, redial, message)
    assert move.constraints.makers == {maker} and not move.notes
    allowed = [i for i in redial.items if move.constraints.allows(i)]
    assert len(allowed) >= 5
    marked_by, _ = maker_credits(maker)
    for item in allowed:
        credited = {p for names in item.people.values() for p in names}
        assert credited & marked_by, item.name
    word_only = [i for i in redial.items if maker.lower() in f"{i.title} {i.plot}".lower().split()
                 and not {p for names in i.people.values() for p in names} & marked_by]
    assert not set(word_only) & set(allowed)
    if maker == "Pixar":
        assert all("animation" in i.genres for i in allowed)


def test_a_studio_the_records_name_is_a_constraint(opendialkg):
    policy = DialoguePolicy(opendialkg)
    move = read(policy, opendialkg, "I'd love a Disney film for tonight")
    assert move.constraints.makers == {"Disney"} and not move.notes
    assert "from Disney" in heading(move.constraints)
    allowed = [i for i in opendialkg.items if move.constraints.allows(i)]
    assert allowed and all("disney" in " ".join([i.title, i.plot, *i.genres]).lower() for i in allowed)


def test_everyday_words_after_from_are_no_studio(counts):
    for message in ("something to watch from home", "a comedy from the 80s", "anything by myself tonight"):
        assert maker_names(message, counts) == [], message


def test_a_studio_carries_into_the_next_turn(opendialkg):
    policy = DialoguePolicy(opendialkg)
    d = Dialogue(crs_id="test")
    d.add_user("any Disney movies?")
    move = policy.read(d)
    assert move.constraints.makers == {"Disney"}
    d.add_agent("Here: The Lion King", items=[])
    d.add_user("something funnier")
    assert policy.read(d).constraints.makers == {"Disney"}
