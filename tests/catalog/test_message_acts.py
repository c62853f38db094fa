"""The learnt message-act reader (`arena.reading.message_acts`) and where the dialogue policy takes its
act over the rules' request: a question about the system, a greeting nobody asked a question in, a choice
of a shown item worded as no rule has it, a question about a shown item. The messages here are worded
unlike any line of the reader's training data."""

from __future__ import annotations

import json

import pytest

from arena.reading.message_acts import ACTS, ARTIFACT, MessageActReader
from crs.dialogue_policy import DialoguePolicy
from crs.item_answers import greeting, system_intro
from tests.support.conversations import read

SHOWN = ["Die Hard (1988)", "Toy Story (1995)", "The Matrix (1999)"]
OPENING = "a few films for the weekend"


@pytest.fixture(scope="module")
def reader() -> MessageActReader:
    return MessageActReader()


def test_the_artifact_names_its_origin_split_and_held_out_figures():
    spec = json.loads(ARTIFACT.read_text(encoding="utf-8"))
    assert tuple(spec["acts"]) == ACTS
    assert len(spec["weights"]) == len(ACTS) and len(spec["weights"][0]) == 384
    assert spec["held_out"]["rows"] > 300 and 0.5 < spec["held_out"]["accuracy"] <= 1
    assert "sha256" in spec["split"] and "Apache-2.0" in spec["licences"]


def test_probabilities_are_a_distribution_over_the_acts(reader):
    probs = reader.probabilities("could you find me a war film from the seventies")
    assert set(probs) == set(ACTS)
    assert abs(sum(probs.values()) - 1) < 1e-4
    assert max(probs, key=probs.__getitem__) == "request"


@pytest.mark.parametrize("text, act", [
    ("are you some kind of program", "about_system"),
    ("good evening to you", "chit_chat"),
    ("many thanks and goodbye", "closing"),
])
def test_the_reader_tells_acts_apart_by_meaning(reader, text, act):
    assert reader.act(text) == act


def test_a_missing_or_broken_artifact_leaves_the_rules_alone(tmp_path, redial):
    assert MessageActReader(path=tmp_path / "absent.json").probabilities("hello") is None
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({"acts": ["request"], "weights": [], "bias": []}), encoding="utf-8")
    assert MessageActReader(path=broken).act("what are you?") is None
    rules_only = DialoguePolicy(redial, message_acts=MessageActReader(path=tmp_path / "absent.json"))
    assert read(rules_only, redial, "I want a funny movie").act == "request"


@pytest.mark.parametrize("text", ["Is this the place for film tips?", "what exactly are you",
                                  "how do I use this"])
def test_a_question_about_the_system_gets_no_list(policy, redial, text):
    move = read(policy, redial, text)
    assert (move.act, move.aspect) == ("chat", "system")


def test_a_choice_worded_unlike_the_rules_is_taken_not_answered_with_a_list(policy, redial):
    move = read(policy, redial, OPENING, SHOWN, "ok, Die Hard goes on the watchlist")
    assert move.act == "accept" and [i.label for i in move.about] == ["Die Hard (1988)"]


def test_a_question_about_the_middle_shown_item_is_answered_about_it(policy, redial):
    move = read(policy, redial, OPENING, SHOWN, "any good actors in the middle one?")
    assert move.act == "question" and [i.label for i in move.about] == ["Toy Story (1995)"]


def test_asking_for_more_like_a_shown_item_stays_a_request(policy, redial):
    assert read(policy, redial, OPENING, SHOWN, "more like the first").act == "request"


def test_a_request_with_a_constraint_stays_a_request(policy, redial):
    assert read(policy, redial, "something like Alien").act == "request"
    assert read(policy, redial, OPENING, SHOWN, "something older please").act == "request"


def test_a_greeting_says_how_the_system_is_only_when_asked():
    for turn in range(2):
        assert "thanks for asking" not in greeting(turn, "movie", "hi")
        assert "All good here" not in greeting(turn, "movie", "hi")
    assert "thanks for asking" in greeting(0, "movie", "hello, how are you?")


def test_the_system_intro_says_what_it_does_and_invites_a_request():
    text = system_intro("movie")
    assert "recommend" in text and text.rstrip().endswith("?")


def test_a_request_phrased_as_a_question_is_no_question_about_a_title_it_does_not_name(opendialkg):
    policy = DialoguePolicy(opendialkg)
    move = read(policy, opendialkg, "Hi there!", [], "a thriller with sandra bullock in?")
    assert move.act == "request" and not move.about


def test_a_message_read_again_is_not_encoded_again(reader):
    first = reader.probabilities("we could watch something after dinner")
    assert reader.probabilities("we could watch something after dinner") is first


@pytest.mark.parametrize("text", ["alright keep going", "okay continue", "sure, go ahead", "list them"])
def test_asking_to_carry_on_is_never_taken_for_a_goodbye_or_a_question_about_the_system(policy, redial, text):
    # the learnt reading alone says a goodbye or a question about the system for some of these; the form of
    # the message (asking for more, and not worded as a question) keeps the request
    for turns in ([text], [OPENING, SHOWN, text]):
        move = read(policy, redial, *turns)
        assert move.act not in ("end", "accept") and move.aspect != "system", (turns, move.act, move.aspect)
