"""The learnt offline annotator's quality and behaviour (figures: BENCHMARKS.md, acts section).

Floors sit a little under the figures measured once on the held-out parts, so a
retrained artifact that is worse fails; where the issue's target (precision >= 0.95,
F1 >= 0.80) was met it is asserted as such. The figures are deterministic for a
given artifact.
"""

import pytest

from evaluators.acts.data import ARENA_HELD_OUT, iard_split, load_arena_style, load_iard
from evaluators.acts.quality import evaluate_dialogues, evaluate_rows
from tests.acts.acts_helpers import make_dialogue

pytestmark = pytest.mark.slow

# intent -> (minimum precision, minimum F1)
# Measured once (version 14): IARD Recommend 0.99 / 0.98, Accept 0.75 / 0.75, Reject 0.42 / 0.53;
# test10 Recommend 1.00 / 1.00, Accept 0.95 / 0.95, Reject 0.96 / 0.92. Recommend meets the target.
# With coherent label sets (arena.reading: never Accept with Reject, at most 3 intents) test10's Accept is
# 0.94 / 0.89, measured once after those rules; still above the 0.80 target.
IARD_FLOORS = {"Recommend": (0.95, 0.80), "Accept": (0.70, 0.70), "Reject": (0.38, 0.48)}
ARENA_FLOORS = {"Recommend": (0.95, 0.80), "Accept": (0.90, 0.85), "Reject": (0.92, 0.88)}
# Per-dialogue agreement with IARD's acts on its held-out part, measured once (version 14): Kendall tau
# RDL 0.57, SR 0.55; mean SR 0.75 predicted vs 0.70 from IARD's acts (version 13: 0.48, 0.54, 0.47).
METRIC_FLOORS = {"rdl": 0.52, "sr": 0.50}
MAX_SR_GAP = 0.08


@pytest.fixture(scope="module")
def annotator():
    from evaluators.acts.offline import OfflineActAnnotator

    return OfflineActAnnotator()


def _check(results, floors):
    for intent, (min_p, min_f1) in floors.items():
        prf = results[intent]
        assert prf.precision is not None and prf.precision >= min_p and prf.f1 >= min_f1, (intent, prf.as_dict())


def test_iard_held_out(annotator):
    _, held = iard_split(load_iard())
    _check(evaluate_dialogues(annotator, held), IARD_FLOORS)


def test_metrics_from_predicted_acts_follow_the_reference(annotator):
    from evaluators.acts.metric_calibration import agreement

    _, held = iard_split(load_iard())
    result = agreement(held, [annotator.annotate(d, overwrite=True) for d in held])
    for metric, floor in METRIC_FLOORS.items():
        assert result[metric]["tau"] >= floor, (metric, result[metric])
    assert abs(result["sr"]["mean_predicted"] - result["sr"]["mean_reference"]) <= MAX_SR_GAP, result["sr"]


def test_arena_style_held_out_set(annotator):
    results, _ = evaluate_rows(annotator, load_arena_style(ARENA_HELD_OUT))
    _check(results, ARENA_FLOORS)


def test_annotation_is_deterministic_and_keeps_given_acts(annotator):
    d = make_dialogue([
        ("U", "any good sci-fi?", None),
        ("A", "I would recommend the following items: 1: Alien (1979) 2: Arrival (2016)", None),
        ("U", "thanks, I'll watch Arrival", ["ACC"]),
    ])
    first, second = annotator.annotate(d), annotator.annotate(d)
    assert [u.dialogue_acts for u in first.utterances] == [u.dialogue_acts for u in second.utterances]
    rec = first.utterances[1].dialogue_acts[0]
    assert rec.intent in ("REC-S", "REC-E")
    assert [s[1] for s in rec.slot_values] == ["Alien (1979)", "Arrival (2016)"]
    assert first.utterances[2].dialogue_acts == d.utterances[2].dialogue_acts  # given acts kept
    assert first.metadata["acts_annotator"] == annotator.label == f"offline-acts/{annotator.version}"
    assert d.utterances[0].dialogue_acts is None  # the input is not modified


def _probabilities(annotator, turns):
    from evaluators.acts.features import dialogue_pairs
    from evaluators.acts.network import LABELS

    views, pairs = dialogue_pairs(make_dialogue(turns), None)
    row = annotator.model.probabilities(pairs)[-1]
    return {name.split(":", 1)[1]: float(p) for name, p in zip(LABELS, row) if name.startswith(views[-1].role.value)}


def test_items_attached_by_a_crs_are_read_by_the_model(annotator):
    """Attached items raise the model's Recommend probability and fill the slots. (A reply whose text
    names nothing, "Here is what I found.", stays below the threshold: see the model card's limits.)"""
    bare = _probabilities(annotator, [("U", "something funny", None), ("A", "Here is what I found.", None)])
    attached = _probabilities(annotator, [("U", "something funny", None),
                                          ("A", "Here is what I found.", None, [("42", "Airplane! (1980)")])])
    assert attached["REC"] > 2 * bare["REC"]
    d = make_dialogue([("U", "something funny", None),
                       ("A", "Here is what I found: Airplane! (1980)", None, [("42", "Airplane! (1980)")])])
    acts = annotator.annotate(d).utterances[1].dialogue_acts
    assert acts[0].intent in ("REC-S", "REC-E") and acts[0].slot_values[0][1] == "Airplane! (1980)"


def test_the_same_reply_reads_differently_in_context(annotator):
    """ "sounds great" accepts a recommendation, not an answer to a question about taste."""
    after_rec = _probabilities(annotator, [("U", "a heist movie please", None),
                                           ("A", "You might enjoy Ocean's Eleven (2001), a stylish heist.", None),
                                           ("U", "sounds great, I'll watch it tonight", None)])
    after_question = _probabilities(annotator, [("U", "a heist movie please", None),
                                                ("A", "Do you prefer something funny or something tense?", None),
                                                ("U", "sounds great, I'll watch it tonight", None)])
    assert after_rec["ACC"] > after_question["ACC"]
