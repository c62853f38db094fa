"""Questions that sort the shown list, a child's age as a limit on the list, and fields no catalog holds."""

from __future__ import annotations

from arena.reading.constraints import Constraints, update
from crs.item_answers import answer
from crs.shown_filter import answer_move
from tests.support.conversations import read

SHOWN = ["Die Hard (1988)", "Toy Story (1995)", "The Matrix (1999)"]


def test_asking_which_shown_item_has_an_actor_answers_from_the_shown_items(policy, redial):
    asked = "do any of those have Bruce Willis in them?"
    move = read(policy, redial, "a few films for the weekend", SHOWN, asked)
    assert (move.act, move.aspect) == ("question", "filter")
    assert [i.label for i in move.about] == ["Die Hard (1988)"]
    text, named = answer_move(move)
    assert [i.label for i in named] == ["Die Hard (1988)"] and "Die Hard" in text and "Toy Story" not in text


def test_a_filter_by_decade_keeps_the_shown_order_and_makes_no_new_list(policy, redial):
    move = read(policy, redial, "a few films for the weekend", SHOWN, "which of these are from the 90s?")
    assert move.aspect == "filter"
    assert [i.label for i in move.about] == ["Toy Story (1995)", "The Matrix (1999)"]


def test_a_filter_nothing_shown_meets_says_so_without_titles(policy, redial):
    move = read(policy, redial, "a few films for the weekend", SHOWN, "are any of them westerns?")
    text, named = answer_move(move)
    assert move.aspect == "filter" and named == [] and text.startswith("None of the ones I showed")


def test_a_child_of_twelve_rules_out_war_stories_and_violent_plots(redial):
    asked = update(Constraints(), "a war drama for my 12 year old", complaint=False)
    assert asked.for_children
    animated_war = redial.find_title("Grave of the Fireflies (1988)")
    assert animated_war is not None and not asked.allows(animated_war)
    assert not any(asked.loosened().allows(i) for i in redial.items if "war" in i.genres)


def test_a_question_on_the_running_time_says_it_is_not_known_and_what_is(policy, redial):
    move = read(policy, redial, "a few films for the weekend", SHOWN, "how long is the second one?")
    assert (move.aspect, [i.label for i in move.about]) == ("runtime", ["Toy Story (1995)"])
    text, _ = answer("runtime", move.about)
    assert text.startswith("I don't know the runtime of Toy Story (1995); here is what I know:")
