"""Accept with Reject where an utterance addresses different items (arena.reading.intents, offline.decide)."""

import json

import numpy as np
import pytest

from arena.dialogue import Role
from arena.reading.acts import decisions_apart, names_different_items, parts_of
from arena.reading.intents import coherent
from evaluators.acts import f1_calibration as F
from evaluators.acts.network import LABELS
from evaluators.acts.offline import MixedDecisions, decide

ACC, REJ, PRO = (LABELS.index(f"USER:{name}") for name in ("ACC", "REJ", "PRO"))


@pytest.mark.parametrize("text", [
    "Did not like Knocked Up but I will check out When Harry Met Sally",
    "Hmm. Not interested in Rocky but the other two sound really good! Thanks a lot!!",
    "I'm not interested in Seven Pounds (2008) , but thanks....I'm interested in The Best Offer (2013) . Thanks.",
    "I didn't care for Juno (2007) ...I will go with Knocked Up (2007) ...Thanks for all your help.",
    "Did not like Knocked Up but will check out When Harry Met Sally",  # the subject left out after "but"
])
def test_a_turn_down_and_a_take_in_different_parts_address_different_items(text):
    assert decisions_apart(text)


@pytest.mark.parametrize("text", [
    "Sounds good, I'll watch it",  # a take alone
    "No thanks, I didn't like it",  # a turn-down alone
    "I'm not interested, I don't want to see it",  # "interested", "want to see" negated
    "I didn't like it, it sounds boring",  # one part doing both is no evidence of two items
    "I haven't seen it but it sounds good",  # not seen is no turn-down
    "I didn't like it. will you show me another?",  # "will" asks here, it takes nothing
    "Not a fan of Will Ferrell but will see",  # "will see" is no promise to watch anything
])
def test_one_decision_or_one_item_is_not_two(text):
    assert not decisions_apart(text)


def test_parts_split_at_joined_messages_sentences_and_contrast():
    assert parts_of("Not a fan of it....Coco may be good, though. Thanks!") == [
        "Not a fan of it", "Coco may be good", "Thanks"]


def test_two_items_named():
    assert names_different_items("X sounds more interesting than Y", titles=2)
    assert names_different_items("Not that one, but the other two", titles=0)  # a pointer and "the other two"
    assert names_different_items("Rocky no, the other two yes", titles=1)
    assert not names_different_items("the other two sound good", titles=0)
    assert not names_different_items("I loved Heat", titles=1)


def test_coherent_keeps_both_only_together():
    passed = [("ACC", 2.0), ("REJ", 0.5), ("PRO", 1.0)]
    assert coherent(passed) == ["ACC", "PRO"]
    assert coherent(passed, together=True) == ["ACC", "REJ", "PRO"]
    # the limit of three still holds
    assert coherent(passed + [("SEE", 3.0)], together=True) == ["ACC", "PRO", "SEE"]


def _user_probs(acc, rej, pro=0.01):
    p = np.full((1, len(LABELS)), 0.01)
    p[0, ACC], p[0, REJ], p[0, PRO] = acc, rej, pro
    return p


THRESHOLD = np.full(len(LABELS), 0.5)
MIXED = "Did not like Knocked Up but I will check out When Harry Met Sally"
SAME = "I will check it out, no thanks, I didn't like it"


def test_decide_keeps_accept_and_reject_only_where_the_parts_say_different_items():
    p = _user_probs(0.9, 0.7)
    assert decide([Role.USER], p, THRESHOLD, texts=[MIXED]) == [["ACC"]]  # no artifact key: the surer one
    assert decide([Role.USER], p, THRESHOLD, mixed=MixedDecisions(), texts=[MIXED]) == [["ACC", "REJ"]]
    assert decide([Role.USER], p, THRESHOLD, mixed=MixedDecisions(), texts=[SAME]) == [["ACC"]]
    assert decide([Role.USER], p, THRESHOLD, mixed=MixedDecisions()) == [["ACC"]]  # no text, no evidence


def test_items_named_count_only_with_by_items():
    p = _user_probs(0.9, 0.7)
    text = ["Heat sounds more interesting than Ronin"]
    assert decide([Role.USER], p, THRESHOLD, mixed=MixedDecisions(), texts=text, titles=[2]) == [["ACC"]]
    assert decide([Role.USER], p, THRESHOLD, mixed=MixedDecisions(by_items=True), texts=text,
                  titles=[2]) == [["ACC", "REJ"]]


def test_the_second_decision_at_a_lower_bar_needs_the_parts():
    p = _user_probs(0.9, 0.3)  # Reject under its threshold, above half of it
    mixed = MixedDecisions(second_at=0.5)
    assert decide([Role.USER], p, THRESHOLD, mixed=mixed, texts=[MIXED]) == [["ACC", "REJ"]]
    assert decide([Role.USER], _user_probs(0.9, 0.2), THRESHOLD, mixed=mixed, texts=[MIXED]) == [["ACC"]]
    assert decide([Role.USER], p, THRESHOLD, mixed=mixed, texts=["I will check it out"]) == [["ACC"]]


def test_mixed_decisions_round_trip_through_the_artifact_meta():
    mixed = MixedDecisions(by_items=True, second_at=0.5)
    assert MixedDecisions.from_meta(json.loads(json.dumps(mixed.to_meta()))) == mixed


def test_round_16_candidates_keep_version_14s_decisions():
    assert [c.name.split(":")[0] for c in F.ROUNDS["16"]] == ["G", "G-N", "H", "H-N", "K"]
    assert all(c.keeps_decisions and c.mixed is not None for c in F.ROUNDS["16"])
    assert not any(c.keeps_decisions for c in F.CANDIDATES if c.thresholds is None or c.reject_parts)
