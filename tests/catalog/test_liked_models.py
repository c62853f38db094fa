"""A title the user speaks well of is a model of the wish (crs/liked_models.py): the list leads with titles
of its kind (a shared genre) and none that only shares a word of its title; a later liked title takes
over as the model; a title asked for as a kind of film ("a Harry Potter movie") is no model at all.
Wording written for these tests."""

from __future__ import annotations

from arena.catalogs.catalog import Catalog
from arena.conversation.dialogue_state import Constraint, DialogueState, MentionedItem
from crs.liked_models import like_the_models, model_titles, models_first, named_as_kind
from tests.catalog.test_chatcrs_policy import talk
from tests.catalog.test_ranker_reads_what_is_left import chatcrs  # noqa: F401


def _item(catalog: Catalog, name: str):
    item = catalog.find_title(name)
    assert item is not None, name
    return item


def test_a_shared_title_word_is_no_likeness(redial):
    home_alone = _item(redial, "Home Alone (1990)")
    lookalike = next(i for i in redial if "Home" in i.title.split() and i.item_id != home_alone.item_id
                     and "Alone" not in i.title)
    assert not like_the_models(lookalike, [home_alone])
    assert like_the_models(lookalike, [home_alone], lookalikes_allowed=True) == bool(
        {g.lower() for g in lookalike.genres} & {"comedy", "family"})


def test_the_models_kind_leads_and_the_rest_stays_after(redial):
    model = _item(redial, "Dead Poets Society (1989)")  # comedy, drama
    items = [i for i in redial if i.genres][:200]
    ordered = models_first(items, [model])
    assert sorted(i.item_id for i in ordered) == sorted(i.item_id for i in items if i.item_id != model.item_id)
    flags = [like_the_models(i, [model]) for i in ordered]
    assert flags == sorted(flags, reverse=True)  # every fitting one before every other one


def test_the_latest_turn_that_liked_a_title_sets_the_model(redial):
    first, later = _item(redial, "Legally Blonde (2001)"), _item(redial, "The Sound of Music (1965)")
    state = DialogueState(user_turns=3, mentioned=[MentionedItem(item_id=first.item_id, turn=0),
                                                   MentionedItem(item_id=later.item_id, turn=2)])
    models, held = model_titles(state, redial)
    assert [m.item_id for m in models] == [later.item_id]
    assert {m.item_id for m in held} == {first.item_id, later.item_id}


def test_a_title_turned_down_is_no_model(redial):
    disliked = _item(redial, "Legally Blonde (2001)")
    state = DialogueState(user_turns=1, mentioned=[MentionedItem(item_id=disliked.item_id, liked=False)])
    assert model_titles(state, redial) == ([], [])


def test_a_held_up_title_counts_even_unmentioned(redial):
    held_up = _item(redial, "Home Alone (1990)")
    state = DialogueState(user_turns=1, constraints=[Constraint(slot="like", value=held_up.item_id)])
    _models, held = model_titles(state, redial)
    assert [i.item_id for i in held] == [held_up.item_id]


def test_a_series_named_as_the_kind_of_film_is_no_model(redial):
    potter = _item(redial, "Harry Potter and the Sorcerer's Stone (2001)")
    assert named_as_kind("could you find me a harry potter movie tonight", potter)
    assert named_as_kind("Any Harry Potter films you rate?", potter)
    assert not named_as_kind("I loved Harry Potter and the Sorcerer's Stone, what else?", potter)
    state = DialogueState(user_turns=1, mentioned=[MentionedItem(item_id=potter.item_id)])
    assert model_titles(state, redial, "could you find me a harry potter movie tonight") == ([], [])


def test_liking_a_family_comedy_brings_no_title_lookalikes(chatcrs):
    _, _, shown = talk(chatcrs, "My nephew and I adored Home Alone (1990). What should we put on next?")
    assert shown
    assert not any("home" in i.title.lower().split() for i in shown), [i.label for i in shown]
    assert all({g.lower() for g in i.genres} & {"comedy", "family"} for i in shown), [i.label for i in shown]


def test_a_title_liked_later_leads_the_next_list_by_its_genres(chatcrs):
    _, _, shown = talk(chatcrs, "I'm after a comedy for tonight.",
                       "Oh and I loved The Sound of Music (1965) when I was little.")
    assert shown
    wanted = {"biography", "drama", "family"}
    assert all(wanted & {g.lower() for g in i.genres} for i in shown), [(i.label, i.genres) for i in shown]
