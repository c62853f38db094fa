"""A second human reading of Accept/Reject scored against a dialogue's own labels
(`evaluators.acts.quality.reading_agreement`, used by benchmarks/acts_reference_agreement.py)."""

from evaluators.acts.quality import reading_agreement
from tests.acts.acts_helpers import make_dialogue


def _dialogue():
    return make_dialogue([
        ("A", "Have you seen Heat (1995)?", ["REC-E"]),
        ("U", "no thanks, something newer?", ["REJ"]),
        ("A", "How about Ronin (1998)?", ["REC-S"]),
        ("U", "too old for me", ["CRI-F"]),
        ("A", "Try Sicario (2015).", ["REC-S"]),
        ("U", "ok I'll watch that one", ["ACC"]),
        ("A", "Enjoy!", ["CLO"]),
        ("U", "bye", ["OTH"]),
    ], dialogue_id="d1")


def test_counts_each_decision_against_the_labels():
    second = {"d1:1": (False, True), "d1:3": (False, True), "d1:5": (True, False), "d1:7": (True, False)}
    result = reading_agreement([_dialogue()], second)
    assert result.users == 4
    assert (result.accept.tp, result.accept.fp, result.accept.fn) == (1, 1, 0)
    assert (result.reject.tp, result.reject.fp, result.reject.fn) == (1, 1, 0)
    # the turn-down IARD calls a feature critique is dropped by the gate, the true one kept
    gated = result.reject_without_critique
    assert (gated.tp, gated.fp, gated.fn) == (1, 0, 0)
    assert result.parted == {"CRI-F": 1}


def test_only_utterances_the_second_reading_covers_are_scored():
    result = reading_agreement([_dialogue()], {"d1:5": (True, False), "d1:0": (True, True)})
    assert result.users == 1  # d1:0 is a system turn: not a user decision
    assert (result.accept.tp, result.reject.fn) == (1, 0)
