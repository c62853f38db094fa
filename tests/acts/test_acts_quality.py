"""The offline annotator's quality (see benchmarks/results/acts.md).

Where the issue's targets (precision >= 0.95, F1 >= 0.80) are met they are
asserted; elsewhere a floor a little under the measured figure guards against
regressions. The figures are deterministic for a given artifact. The
arena-style sets have all been tuned on by now, so on them these are
regression guards; the held-out evidence is benchmarks/acts_fresh_sets.py.
"""

import pytest

from evaluators.acts.data import ARENA_HELD_OUT, ARENA_SETS, iard_split, load_arena_style, load_iard
from evaluators.acts.quality import evaluate_dialogues, evaluate_rows

pytestmark = pytest.mark.slow

# intent -> (minimum precision, minimum F1)
IARD_FLOORS = {"Recommend": (0.95, 0.80), "Accept": (0.80, 0.70), "Reject": (0.40, 0.50)}
SECOND_ANNOTATION_FLOORS = {"Accept": (0.85, 0.80), "Reject": (0.72, 0.58)}
TARGET = (0.95, 0.80)


@pytest.fixture(scope="module")
def annotator():
    from evaluators.acts.offline import OfflineActAnnotator

    return OfflineActAnnotator()


def test_iard_held_out(annotator):
    _, held = iard_split(load_iard())
    results = evaluate_dialogues(annotator, held)
    for intent, (min_p, min_f1) in IARD_FLOORS.items():
        prf = results[intent]
        assert prf.precision >= min_p and prf.f1 >= min_f1, (intent, prf.as_dict())


def test_iard_held_out_against_the_second_annotation(annotator):
    from evaluators.acts.data import load_second_annotation, with_second_annotation

    _, held = iard_split(load_iard())
    results = evaluate_dialogues(annotator, with_second_annotation(held, load_second_annotation()))
    for intent, (min_p, min_f1) in SECOND_ANNOTATION_FLOORS.items():
        prf = results[intent]
        assert prf.precision >= min_p and prf.f1 >= min_f1, (intent, prf.as_dict())


@pytest.mark.parametrize("path", [*ARENA_SETS, ARENA_HELD_OUT], ids=lambda p: p.name.replace("_arena_style.jsonl", ""))
def test_arena_style_sets_meet_the_target(annotator, path):
    results, _ = evaluate_rows(annotator, load_arena_style(path))
    for intent, prf in results.items():
        if prf.support == 0:
            continue  # dev3 holds no system turns
        assert prf.precision >= TARGET[0] and prf.f1 >= TARGET[1], (intent, prf.as_dict())


def test_annotation_is_deterministic_and_keeps_given_acts(annotator):
    from tests.acts.acts_helpers import make_dialogue

    d = make_dialogue([
        ("U", "any good sci-fi?", None),
        ("A", "I would recommend the following items: 1: Alien (1979) 2: Arrival (2016)", None),
        ("U", "thanks, I'll watch Arrival", ["ACC"]),
    ])
    first, second = annotator.annotate(d), annotator.annotate(d)
    assert [u.dialogue_acts for u in first.utterances] == [u.dialogue_acts for u in second.utterances]
    rec = first.utterances[1].dialogue_acts[0]
    assert rec.intent == "REC-S"
    assert [s[1] for s in rec.slot_values] == ["Alien (1979)", "Arrival (2016)"]
    assert first.utterances[2].dialogue_acts == d.utterances[2].dialogue_acts  # given acts kept
    assert first.metadata["acts_annotator"] == annotator.label
    assert d.utterances[0].dialogue_acts is None  # the input is not modified


def test_items_attached_by_a_crs_mean_recommend(annotator):
    from tests.acts.acts_helpers import make_dialogue

    d = make_dialogue([("U", "something funny", None), ("A", "Here is what I found.", None, [("42", "Airplane! (1980)")])])
    acts = annotator.annotate(d).utterances[1].dialogue_acts
    assert acts[0].intent == "REC-S" and acts[0].slot_values[0][1] == "Airplane! (1980)"


def _last_intents(annotator, turns):
    from tests.acts.acts_helpers import make_dialogue

    d = make_dialogue([(role, text, None) for role, text in turns])
    return {a.intent for a in annotator.annotate(d).utterances[-1].dialogue_acts}


def test_decisions_follow_the_recommendation_on_the_table(annotator):
    rec = ("A", "You might enjoy Knives Out (2019), a fun whodunit.")
    # A strong acceptance outweighs a bare "no" ...
    assert {"ACC"} <= _last_intents(annotator, [rec, ("U", "no! ill check it out")])
    assert "REJ" not in _last_intents(annotator, [rec, ("U", "no! ill check it out")])
    # ... unless the message contrasts two items.
    both = _last_intents(annotator, [("A", "Try Superbad (2007) or Bridesmaids (2011)."),
                                     ("U", "not superbad, too silly. bridesmaids sounds good though, i'll watch that")])
    assert {"ACC", "REJ"} <= both
    # With nothing on the table there is nothing to accept or reject.
    idle = _last_intents(annotator, [("A", "Sci-fi is a great genre. Any favorite directors?"),
                                     ("U", "I really dislike Michael Bay")])
    assert not idle & {"ACC", "REJ"}
    closing = _last_intents(annotator, [("A", "Great, enjoy Knives Out (2019)!"), ("U", "no thanks, I'm all set")])
    assert not closing & {"ACC", "REJ"}


def test_a_title_the_user_did_not_name_is_a_recommendation(annotator):
    assert _last_intents(annotator, [("U", "a mystery please"),
                                     ("A", "Gone Baby Gone (2007) is a dark mystery set in Boston.")]) & {"REC-S", "REC-E"}
    echoed = _last_intents(annotator, [("U", "I watched Inception (2010) last night"), ("A", "Sure."),
                                       ("U", "it was long"), ("A", "Inception (2010) is long indeed.")])
    assert not echoed & {"REC-S", "REC-E"}
