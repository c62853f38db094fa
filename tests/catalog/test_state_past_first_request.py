"""How each later message updates the conversation's state: ages, styles, the catalog's genre words,
where a negation stops, subjects of the phrase table, titles the user already knows, a person asked
for in a question, and which wants give way when the catalog cannot keep them all."""

from __future__ import annotations

from arena.reading.constraints import Constraints
from crs.chatcrs import older_wants_given_up, shortfall_note
from tests.support.conversations import read

LIST = ["Airplane! (1980)", "The Terminator (1984)", "Titanic (1997)"]


def _slots(move) -> set[tuple[str, str, str]]:
    return {(c.slot, c.value, c.polarity) for c in move.state.constraints}


def test_an_age_said_plainly_sets_the_audience(policy, redial):
    assert ("audience", "children", "want") in _slots(read(policy, redial, "picking for my niece, she's 9"))
    assert ("audience", "children", "want") in _slots(read(policy, redial, "a movie my nephew aged 8 can see"))
    teen = read(policy, redial, "something for the kids tonight", LIST, "they are 15 and 16 by now")
    assert not teen.constraints.for_children


def test_a_relative_of_no_age_is_no_child(policy, redial):
    assert not read(policy, redial, "my brother wants a western").constraints.for_children


def test_live_action_rules_out_animation_and_is_no_action_genre(policy, redial):
    c = read(policy, redial, "a live-action fairy tale film please").constraints
    assert "animation" in c.unwanted_genres and "action" not in c.genres


def test_every_catalog_genre_is_a_genre_word(policy, redial):
    assert "adventure" in read(policy, redial, "something adventurous tonight").constraints.genres
    assert "film noir" in read(policy, redial, "a moody noir from the forties").constraints.genres


def test_a_negation_stops_where_a_new_request_begins(policy, redial):
    move = read(policy, redial, "a drama", LIST, "i don't want those could you show me a western")
    assert "western" in move.constraints.genres and "western" not in move.constraints.unwanted_genres
    move = read(policy, redial, "a drama", LIST, "never watched the first or it may be a western too")
    assert "western" in move.constraints.genres


def test_a_typographic_apostrophe_still_negates(policy, redial):
    assert "horror" in read(policy, redial, "I don\u00b4t want horror tonight").constraints.unwanted_genres
    assert "horror" in read(policy, redial, "I don\u2019t want horror tonight").constraints.unwanted_genres


def test_a_two_word_subject_needs_no_cue_word(policy, redial):
    assert "time travel" in read(policy, redial, "a flick with a time travel plot").constraints.subjects
    assert "true story" in read(policy, redial, "a crime film based on a true story").constraints.subjects


def test_a_negated_subject_after_a_cue_is_not_asked_for(policy, redial):
    c = read(policy, redial, "sci-fi about robots not about heroes").constraints
    assert not any("hero" in s for s in c.subjects)


def test_a_title_the_user_says_they_loved_stays_out_with_its_series(policy, redial):
    move = read(policy, redial, "an animated film", LIST, "we really loved Toy Story (1995)")
    toy_story_2 = redial.find_title("Toy Story 2 (1999)")
    assert redial.find_title("Toy Story (1995)").item_id in move.left_out
    assert toy_story_2 is not None and toy_story_2.item_id in move.left_out


def test_the_words_of_a_longer_title_ruled_out_stay_allowed(policy, redial):
    move = read(policy, redial, "a time travel movie", ["Looper (2012)"], "fine, but not Back to the Future")
    assert "time travel" in move.constraints.subjects
    assert not {"back", "futur", "future"} & set(move.constraints.unwanted_words)


def test_a_question_that_asks_for_a_new_title_with_a_person_is_a_request(policy, redial):
    move = read(policy, redial, "a comedy", LIST, "Perhaps a film that stars Tom Hanks?")
    assert move.act == "request" and "Tom Hanks" in move.constraints.people


def test_a_name_is_not_respelled_as_a_genre(policy, redial):
    c = read(policy, redial, "I like Jim Carey a lot").constraints
    assert "horror" not in c.genres


def test_a_liking_in_a_complaint_asks_for_its_genre(policy, redial):
    c = read(policy, redial, "a drama", LIST, "No, not these. I like westerns").constraints
    assert "western" in c.genres and "western" not in c.unwanted_genres


def test_the_wants_of_earlier_messages_give_way_first(policy, redial):
    move = read(policy, redial, "comedies with Adam Sandler", ["Happy Gilmore (1996)"],
                "something about outer space")
    first = older_wants_given_up(move)[0]
    assert first.subjects == move.constraints.subjects and first.subjects
    assert not first.genres and not first.people
    restated = read(policy, redial, "a comedy", LIST, "a comedy with Adam Sandler in it?")
    assert all("comedy" in c.genres for c in older_wants_given_up(restated))


def test_a_short_or_relaxed_list_says_so():
    asked = Constraints(genres=frozenset({"western"}), people=frozenset({"Tom Hanks"}))
    assert shortfall_note(asked, Constraints(people=frozenset({"Tom Hanks"})), 5) == (
        "Nothing in the catalog keeps to all of that, so these give up western.")
    assert shortfall_note(asked, None, 2) == "Only 2 titles in the catalog keep to all of that."
    assert shortfall_note(asked, None, 5) == ""


def test_a_short_list_after_earlier_ones_says_how_many_are_left_and_only_what_its_titles_give_up(redial):
    """After six titles with Denzel Washington were shown, three more are "only 3 more", not "only 3 titles
    in the catalog"; and a looser list whose titles all still star him gives up the genre alone."""
    asked = Constraints(genres=frozenset({"thriller"}), people=frozenset({"Denzel Washington"}))
    assert shortfall_note(asked, None, 3, more=True) == "Only 3 more titles in the catalog keep to all of that."
    his = [i for i in redial.items if "Denzel Washington" in i.people.get("star", ())
           and "thriller" not in i.genres][:3]
    assert len(his) == 3
    assert shortfall_note(asked, Constraints(), 3, shown=his) == (
        "Nothing in the catalog keeps to all of that, so these give up thriller.")
    others = [i for i in redial.items if "Denzel Washington" not in i.people.get("star", ())][:3]
    assert "Denzel Washington" in shortfall_note(asked, Constraints(), 3, shown=others)


def test_a_nationality_before_a_kind_word_is_an_origin_the_list_keeps(policy, redial, opendialkg):
    move = read(policy, opendialkg, "could you find me some French dramas")
    assert move.constraints.origins == {"france"}
    assert ("origin", "france", "want") in _slots(move)
    shown = [i for i in opendialkg.items if move.constraints.allows(i)]
    records = [" ".join([*i.languages, *i.genres, i.plot]).lower() for i in shown]
    assert records and all("french" in r or "france" in r for r in records)
    assert not read(policy, redial, "a film with an English teacher in it").constraints.origins
    later = read(policy, redial, "an Italian movie", LIST, "something more recent")
    assert later.constraints.origins == {"italy"}


def test_the_shortfall_note_names_what_was_given_up_only_when_a_list_follows():
    from arena.reading.constraints import Constraints
    from crs.chatcrs import shortfall_note
    asked = Constraints(people=frozenset({"Keanu Reeves"}), genres=frozenset({"western"}))
    relaxed = Constraints(genres=frozenset({"western"}))
    assert "Keanu Reeves" in shortfall_note(asked, relaxed, 3)
    assert shortfall_note(asked, relaxed, 0) == "Nothing in the catalog keeps to all of that."
