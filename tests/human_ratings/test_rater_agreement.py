"""Rater agreement: Krippendorff's alpha from (unit, rater, value) triples, its sources and the export's card."""

import math

import pytest

from arena.corpus.bundle import ExportFilter, export_bundle
from arena.crowd.agreement import (
    GOLD, NO_VARIATION, NOMINAL, NOT_ENOUGH_OVERLAP, ORDINAL, VERDICT, Judgement, agreement_report,
    describe, gold_judgements, krippendorff_alpha, rating_judgements, replayed_dialogue, verdict_judgements,
)
from arena.crowd.aspects import load_form
from arena.dialogue import Dialogue, Feedback, Rating, UserInfo, UserKind
from arena.store import Store
from arena.store.studies import Participant

NAN = math.nan


def triples(matrix):
    """Judgements of a raters x units matrix as the library's documentation writes it (NaN: not rated)."""
    return [Judgement(unit, f"rater{r}", value) for r, row in enumerate(matrix) for unit, value in enumerate(row)
            if not (isinstance(value, float) and math.isnan(value))]


# The library's own docstring examples (krippendorff 0.9.0, `alpha`): Krippendorff's reliability data.
DOCUMENTED = [[NAN, NAN, NAN, NAN, NAN, 3, 4, 1, 2, 1, 1, 3, 3, NAN, 3],
              [1, NAN, 2, 1, 3, 3, 4, 3, NAN, NAN, NAN, NAN, NAN, NAN, NAN],
              [NAN, NAN, 2, 1, 3, 4, 4, NAN, 2, 1, 1, 3, 3, NAN, 4]]
DOCUMENTED_ORDINAL = [[1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
                      [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
                      [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
                      [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN]]


def test_the_librarys_documented_examples():
    nominal = krippendorff_alpha(triples(DOCUMENTED), NOMINAL, rounds=0)
    assert round(nominal.alpha, 6) == 0.691358
    # units 1 and 13 have no rating and unit 0 one: 12 units with two or more raters
    assert (nominal.units, nominal.raters, nominal.judgements) == (12, 3, 26)
    ordinal = krippendorff_alpha(triples(DOCUMENTED_ORDINAL), ORDINAL, domain=[1, 2, 3, 4, 5], rounds=0)
    assert round(ordinal.alpha, 3) == 0.815 and ordinal.units == 11  # unit 10's lone value pairs with none


def test_cases_computed_by_hand():
    # Two raters, three units: (a, a), (a, b), (b, b). Coincidences o_aa = o_bb = 2, o_ab = o_ba = 1;
    # n_a = n_b = 3, n = 6. alpha = 1 - (n - 1) * (o_ab + o_ba) / (2 n_a n_b) = 1 - 5 * 2 / 18 = 4/9.
    nominal = [Judgement(u, r, v) for u, pair in enumerate([("a", "a"), ("a", "b"), ("b", "b")])
               for r, v in zip(("x", "y"), pair)]
    assert krippendorff_alpha(nominal, NOMINAL, rounds=0).alpha == pytest.approx(4 / 9)
    # Ordinal, (1, 1), (1, 2), (3, 3) on a 0-4 scale: n_1 = 3, n_2 = 1, n_3 = 2 (points 0 and 4 unused).
    # delta(c, k) = (sum of n_g from c to k - (n_c + n_k) / 2)^2: delta(1,2) = 4, delta(1,3) = 12.25,
    # delta(2,3) = 2.25. Observed: 2 * 4 = 8; expected: 2 * (3*1*4 + 3*2*12.25 + 1*2*2.25) = 180.
    # alpha = 1 - (n - 1) * 8 / 180 = 7/9. As interval data it would be 1 - 5 * 2 / 39.33... = 0.746.
    ordinal = [Judgement(u, r, v) for u, pair in enumerate([(1, 1), (1, 2), (3, 3)])
               for r, v in zip(("x", "y"), pair)]
    assert krippendorff_alpha(ordinal, ORDINAL, domain=range(5), rounds=0).alpha == pytest.approx(7 / 9)


def test_the_interval_holds_the_point_estimate_and_repeats_with_its_seed():
    result = krippendorff_alpha(triples(DOCUMENTED_ORDINAL), ORDINAL, rounds=500, seed=3)
    assert result.low <= result.alpha <= result.high and result.low < result.high
    again = krippendorff_alpha(triples(DOCUMENTED_ORDINAL), ORDINAL, rounds=500, seed=3)
    assert (again.low, again.high) == (result.low, result.high)
    assert describe(result) == f"{result.alpha:.2f} [{result.low:.2f}, {result.high:.2f}]"


@pytest.mark.parametrize("judgements", [
    [],
    [Judgement("d1", "x", 3), Judgement("d2", "x", 1), Judgement("d3", "y", 2)],  # nobody shares a unit
    [Judgement("d1", "x", 3), Judgement("d1", "y", 1), Judgement("d2", "x", 2)],  # one shared unit
])
def test_fewer_than_two_shared_units_give_no_alpha(judgements):
    result = krippendorff_alpha(judgements, ORDINAL)
    assert result.alpha is None and result.low is None and result.note == NOT_ENOUGH_OVERLAP
    assert describe(result) == "not enough overlap"


def test_one_value_everywhere_is_no_variation_not_a_number():
    same = [Judgement(u, r, 4) for u in ("d1", "d2") for r in ("x", "y")]
    result = krippendorff_alpha(same, ORDINAL, domain=range(5))
    assert result.alpha is None and result.note == NO_VARIATION and result.units == 2


def test_a_raters_later_judgement_of_a_unit_replaces_the_earlier_one():
    judgements = [Judgement("d1", "x", "a"), Judgement("d1", "x", "b"), Judgement("d1", "y", "b"),
                  Judgement("d2", "x", "a"), Judgement("d2", "y", "a")]
    result = krippendorff_alpha(judgements, NOMINAL, rounds=0)
    assert result.alpha == pytest.approx(1.0) and result.judgements == 4


def rated(values, rater, kind=UserKind.HUMAN, **metadata):
    d = Dialogue(crs_id="alpha", user=UserInfo(kind=UserKind.HUMAN, id=rater), metadata=metadata)
    d.add_user("a comedy")
    d.add_agent("Airplane!")
    d.ratings.append(Rating(values=values, rater_id=rater, rater_kind=kind, form_version="aspects_v1"))
    return d


def test_sources_people_only_and_replays_count_for_the_dialogue_they_show():
    original = rated({"overall_impression": 3}, "p1")
    original.feedback = Feedback(sentiment="satisfied")
    replay = rated({"overall_impression": 2}, "p2", known_answer={"dialogue_id": original.dialogue_id})
    replay.feedback = Feedback(sentiment="frustrated")
    older = rated({"overall_impression": 1}, "p3", replay_of=original.dialogue_id)
    simulated = rated({"overall_impression": 0}, "sim", kind=UserKind.SIMULATOR)
    pooled = rated({"overall_impression": 0}, "anonymous")
    replay.utterances[1].ratings.append(Rating(values={"relevance": 2}, rater_id="p2", form_version="aspects_v1"))
    assert replayed_dialogue(replay) == replayed_dialogue(older) == original.dialogue_id
    assert replayed_dialogue(original) is None
    ratings = rating_judgements([original, replay, older, simulated, pooled])
    assert sorted((j.unit == original.dialogue_id, j.rater, j.value) for j in ratings["overall_impression"]) == [
        (True, "p1", 3), (True, "p2", 2), (True, "p3", 1)]
    assert ratings["relevance"] == [Judgement((original.dialogue_id, 1), "p2", 2)]
    assert verdict_judgements([original, replay]) == [Judgement(original.dialogue_id, "p1", "satisfied"),
                                                      Judgement(original.dialogue_id, "p2", "frustrated")]


def test_gold_answers_are_judgements_of_one_text_per_study_version():
    workers = [Participant("s1", f"w{i}", 1, data={"gold_answer": answer})
               for i, answer in enumerate(["satisfied", "satisfied", "frustrated"])]
    workers += [Participant("s1", "w9", 1, data={}), Participant("s2", "w0", 2, data={"gold_answer": "satisfied"})]
    found = gold_judgements(workers)
    assert len(found) == 4 and {j.unit for j in found} == {("s1", 1), ("s2", 2)}
    report = agreement_report([], gold=workers)
    assert [(r.name, r.note) for r in report if r.name == GOLD] == [(GOLD, NOT_ENOUGH_OVERLAP)]


def test_the_report_lists_every_aspect_of_the_form_and_verdicts_when_given():
    form = load_form()
    pairs = [(1, 1), (1, 2), (3, 3)]
    dialogues = []
    for left, right in pairs:
        d = rated({"overall_impression": left}, "p1")
        d.ratings.append(Rating(values={"overall_impression": right}, rater_id="p2", form_version="aspects_v1"))
        dialogues.append(d)
    report = {r.name: r for r in agreement_report(dialogues, form, rounds=50)}
    assert list(report)[:len(form.names())] == form.names() and VERDICT not in report
    assert report["overall_impression"].alpha == pytest.approx(7 / 9)
    assert (report["overall_impression"].units, report["overall_impression"].raters) == (3, 2)
    assert report["understanding"].note == NOT_ENOUGH_OVERLAP and report["understanding"].units == 0


def test_the_exports_card_shows_the_agreement(tmp_path):
    store = Store(tmp_path / "arena.sqlite3")
    try:
        shown = []
        for left, right in [(1, 1), (1, 2), (3, 3)]:
            d = rated({"overall_impression": left}, "p1")
            d.ratings.append(Rating(values={"overall_impression": right}, rater_id="p2",
                                    form_version="aspects_v1"))
            d.feedback = Feedback(sentiment="satisfied")
            d.end("feedback")
            store.save_dialogue(d)
            shown.append(d)
        replay = rated({}, "p3", replay_of=shown[0].dialogue_id)
        replay.ratings.clear()
        replay.feedback = Feedback(sentiment="frustrated")
        replay.end("feedback")
        store.save_dialogue(replay)
        card = export_bundle(store, tmp_path / "out", ExportFilter()).files["card"].read_text()
    finally:
        store.close()
    section = card.split("## Rater agreement", 1)[1].split("\n## ", 1)[0]
    rows = {line.split(" | ")[0].strip("| "): line for line in section.splitlines() if line.startswith("| ")}
    overall = rows["overall\\_impression"]  # cells are escaped Markdown
    assert overall.startswith("| overall\\_impression | ordinal | 0.78 [") and overall.endswith("| 3 | 2 |")
    assert rows["verdict"] == "| verdict | nominal | not enough overlap | 1 | 2 |"  # one replayed dialogue
