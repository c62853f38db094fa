"""One title normaliser and one Recall@k / preference coverage for scorers and simulators alike."""

from arena.dialogue import Dialogue, RecommendedItem, Role, Utterance
from arena.target_metrics import coverage_per_turn, recall_at, target_keys
from arena.titles.linking import find_mentions
from arena.titles.names import clean_title, split_year, title_key
from evaluators import metrics as scorer_metrics
from simulators import metrics as simulator_metrics


def test_one_key_for_the_ways_a_title_is_written():
    key = title_key("The Usual Suspects (1995)")
    assert key == "the usual suspects"
    assert title_key("Usual Suspects, The") == key
    assert title_key("  “the usual   suspects” ") == key
    assert title_key("Amélie (2001)") == title_key("Amelie") == "amelie"
    assert title_key("Schindler's List") == title_key("Schindlers List")


def test_one_year_range_everywhere():
    assert split_year("Heat (1995)") == ("Heat", 1995)
    assert split_year("Blade Runner 2049") == ("Blade Runner 2049", None)
    assert split_year("Room (1234)") == ("Room (1234)", None)  # not a release year
    assert clean_title("Room (1234)") == "Room (1234)"
    assert [m.title for m in find_mentions(Utterance(role=Role.AGENT, text="Try Heat (1995) or Room (1234)."))] \
        == ["Heat (1995)"]


def test_targets_match_by_id_or_by_title_key():
    keys = target_keys(["m1", "Usual Suspects, The", {"item_id": "m9", "title": "Heat (1995)"}])
    recs = [("m1", "Something"), (None, "The Usual Suspects (1995)"), ("m2", "heat")]
    assert recall_at(recs, keys, 3) == 1.0
    assert recall_at(recs, keys, 1) == 1 / 3
    assert coverage_per_turn([recs[:1], [], recs[1:]], keys, 1) == [1 / 3, 1 / 3, 2 / 3]


def test_scorers_and_simulators_agree():
    targets = [{"title": "Heat (1995)"}, {"title": "Usual Suspects, The"}]  # no ids: matched by title
    d = Dialogue(crs_id="x")
    for items in ([RecommendedItem(item_id="m7", title="Heat")],
                  [RecommendedItem(item_id="m8", title="The Usual Suspects")]):
        d.utterances.append(Utterance(role=Role.USER, text="more?"))
        d.utterances.append(Utterance(role=Role.AGENT, text="here", items=items))
    ids = simulator_metrics.target_ids(targets)
    by_scorer = scorer_metrics.preference_coverage(d, ids, 5)
    by_simulator = [row["pc"] for row in simulator_metrics.preference_coverage(d, targets, k=5)]
    assert by_scorer == by_simulator == [0.5, 1.0]
    assert scorer_metrics.recall_per_turn(d, ids, 10) == [
        row["recall@10"] for row in simulator_metrics.per_turn_recall(d, targets)] == [0.5, 0.5]
