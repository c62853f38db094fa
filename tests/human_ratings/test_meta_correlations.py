"""Meta-evaluation against aspect ratings, checked on hand-made ratings worked out by hand."""

import json
import math

import pytest

from arena.dialogue import Dialogue, Feedback, Rating, Score, UserInfo, UserKind
from evaluators.cli import main, record_of
from evaluators.meta_correlations import bootstrap_intervals, correlation_records, point_correlations

# Five rated dialogues of one system (human users):
#   rdl                 x = 0.1  0.2  0.3  0.4  0.5
#   overall_impression  y = 1    3    2    4    4
#   satisfied           s = 0    1    0    1    1
#
# Spearman(x, y): ranks of x = 1 2 3 4 5 (deviations -2 -1 0 1 2, squares 10);
#   ranks of y = 1 3 2 4.5 4.5 (mean 3, deviations -2 0 -1 1.5 1.5, squares 9.5);
#   sum of products = 4 + 0 + 0 + 1.5 + 3 = 8.5, rho = 8.5 / sqrt(10 * 9.5) = 0.872082.
# Pearson(x, y): deviations of x -.2 -.1 0 .1 .2 (squares 0.1), of y (mean 2.8) -1.8 .2 -.8 1.2 1.2
#   (squares 6.8); products 0.36 - 0.02 + 0 + 0.12 + 0.24 = 0.70, r = 0.70 / sqrt(0.68) = 0.848875.
# Pearson(x, s): deviations of s (mean 0.6) -.6 .4 -.6 .4 .4 (squares 1.2); products
#   0.12 - 0.04 + 0 + 0.04 + 0.08 = 0.20, r = 0.2 / sqrt(0.12) = 0.577350.
# Spearman(x, s): ranks of s = 1.5 4 1.5 4 4 (mean 3, deviations -1.5 1 -1.5 1 1, squares 7.5);
#   products 3 - 1 + 0 + 1 + 2 = 5, rho = 5 / sqrt(75) = 0.577350.
X = [0.1, 0.2, 0.3, 0.4, 0.5]
Y = [1, 3, 2, 4, 4]
S = ["frustrated", "satisfied", "frustrated", "satisfied", "satisfied"]


def dialogue(i, crs, rdl, overall=None, sentiment=None, kind=UserKind.HUMAN, relevance=()):
    d = Dialogue(dialogue_id=f"{crs}-{i}", crs_id=crs, user=UserInfo(kind=kind, id=f"user-{i}"))
    d.add_user("hi", utterance_id=f"{crs}-{i}-u")
    for j, value in enumerate(relevance):
        d.add_agent("a reply", utterance_id=f"{crs}-{i}-a{j}").ratings.append(
            Rating(values={"relevance": value}, rater_id="r", rater_kind=kind, form_version="aspects_v1"))
    d.scores["rdl"] = Score(value=rdl, scorer="rdl", version="1")
    d.scores["acts"] = Score(value=1.0, scorer="acts", version="1")  # not a metric: never correlated
    if overall is not None:
        d.ratings.append(Rating(values={"overall_impression": overall}, rater_id=f"user-{i}", rater_kind=kind,
                                form_version="aspects_v1"))
    if sentiment:
        d.feedback = Feedback(sentiment=sentiment)
    return d


def hand_corpus():
    ds = [dialogue(i, "alpha", x, y, s) for i, (x, y, s) in enumerate(zip(X, Y, S))]
    ds.append(dialogue(5, "alpha", None, 0, "frustrated"))  # rdl unscored: must be dropped, not read as 0
    ds.append(dialogue(6, "alpha", 0.0, None, None))  # nothing rated: dropped from every pair
    return ds


def find(records, **where):
    hits = [r for r in records if all(r[k] == v for k, v in where.items())]
    assert len(hits) == 1, hits
    return hits[0]


def test_point_correlations_match_the_hand_computation():
    rho, r = point_correlations(X, Y)
    assert rho == pytest.approx(8.5 / math.sqrt(95)) and rho == pytest.approx(0.872082, abs=1e-6)
    assert r == pytest.approx(0.70 / math.sqrt(0.68)) and r == pytest.approx(0.848875, abs=1e-6)
    assert point_correlations([1, 2], [1, 2]) == (None, None)  # too few pairs
    assert point_correlations([1, 2, 3], [2, 2, 2]) == (None, None)  # constant side: undefined


def test_dialogue_level_records_drop_unscored_and_unrated_pairwise():
    records = correlation_records(hand_corpus(), rounds=200, seed=1)
    overall = find(records, metric="rdl", aspect="overall_impression", level="dialogue")
    assert overall["n"] == 5 and overall["users"] == "human"
    assert overall["spearman"] == pytest.approx(0.872082, abs=1e-6)
    assert overall["pearson"] == pytest.approx(0.848875, abs=1e-6)
    assert overall["ci_for"] == "spearman" and overall["ci_low"] == overall["spearman_ci_low"]
    assert -1 <= overall["ci_low"] <= overall["ci_high"] <= 1
    assert -1 <= overall["pearson_ci_low"] <= overall["pearson_ci_high"] <= 1
    sat = find(records, metric="rdl", aspect="satisfaction", level="dialogue")
    assert sat["n"] == 5
    assert sat["spearman"] == pytest.approx(0.577350, abs=1e-6) and sat["pearson"] == pytest.approx(0.577350,
                                                                                                    abs=1e-6)
    assert not [r for r in records if r["metric"] == "acts"]
    system = find(records, metric="rdl", aspect="overall_impression", level="system")
    assert system["n"] == 1 and system["kendall_tau"] is None  # one system: no ranking


def test_bootstrap_is_seeded_and_a_perfect_order_has_a_point_interval():
    assert bootstrap_intervals(X, Y, rounds=300, seed=7) == bootstrap_intervals(X, Y, rounds=300, seed=7)
    perfect = bootstrap_intervals([1, 2, 3, 4], [10, 20, 30, 40], rounds=300, seed=0)
    assert perfect["spearman"] == pytest.approx((1.0, 1.0)) and perfect["pearson"] == pytest.approx((1.0, 1.0))


def test_system_level_kendall_tau_by_hand():
    # Systems' mean rdl 0.2 / 0.5 / 0.8 and mean overall impression 1 / 2 / 0: pairs (a,b) concordant,
    # (a,c) and (b,c) discordant, so tau = (1 - 2) / 3.
    ds = [dialogue(0, "a", 0.1, 1), dialogue(1, "a", 0.3, 1), dialogue(2, "b", 0.5, 2),
          dialogue(3, "c", 0.8, 0), dialogue(4, "c", 0.8, None)]
    rec = find(correlation_records(ds, rounds=50), metric="rdl", aspect="overall_impression", level="system")
    assert rec["n"] == 3 and rec["kendall_tau"] == pytest.approx(-1 / 3)


def test_people_and_simulators_are_never_pooled_and_groups_split():
    ds = hand_corpus() + [dialogue(10 + i, "sim_redial", x, y, kind=UserKind.SIMULATOR)
                          for i, (x, y) in enumerate(zip(X, reversed(Y)))]
    records = correlation_records(ds, rounds=50)
    assert find(records, metric="rdl", aspect="overall_impression", level="dialogue", users="human")["n"] == 5
    sim = find(records, metric="rdl", aspect="overall_impression", level="dialogue", users="simulator")
    assert sim["n"] == 5 and sim["spearman"] < 0
    by_dataset = correlation_records(ds, group_by="dataset", rounds=50)
    assert {(r["users"], r["group"]) for r in by_dataset} == {("human", "unknown"), ("simulator", "redial")}
    by_crs = correlation_records(ds, group_by="crs", rounds=50)
    assert {r["level"] for r in by_crs} == {"dialogue"}


def test_reply_ratings_are_averaged_per_dialogue():
    # Mean relevance per dialogue 1.5 / 2 / 3 against rdl 0.1 / 0.2 / 0.3: the same order, rho = 1.
    ds = [dialogue(i, "alpha", x, relevance=rel) for i, (x, rel) in enumerate(
        [(0.1, (1, 2)), (0.2, (2,)), (0.3, (3, 3))])]
    rec = find(correlation_records(ds, rounds=50), metric="rdl", aspect="relevance", level="dialogue")
    assert rec["n"] == 3 and rec["spearman"] == pytest.approx(1.0)


def test_meta_command_writes_json_records_with_imported_ratings(tmp_path, capsys):
    scored = tmp_path / "scored.jsonl"
    ds = [dialogue(i, "alpha", x, None, s) for i, (x, s) in enumerate(zip(X, S))]
    scored.write_text("".join(json.dumps(record_of(d)) + "\n" for d in ds))
    ratings = tmp_path / "ratings.csv"
    ratings.write_text("dialogue_id,overall_impression\n" + "".join(f"alpha-{i},{y}\n" for i, y in enumerate(Y)))
    out = tmp_path / "meta.json"
    assert main(["meta", "--input", str(scored), "--ratings", str(ratings), "--json", str(out),
                 "--rounds", "100"]) == 0
    printed = capsys.readouterr().out
    assert "spearman +0.872" in printed and "pearson +0.849" in printed
    records = json.loads(out.read_text())
    rec = find(records, metric="rdl", aspect="overall_impression", level="dialogue")
    assert {"metric", "aspect", "level", "spearman", "pearson", "ci_low", "ci_high", "n"} <= set(rec)
    assert rec["n"] == 5 and rec["spearman"] == pytest.approx(0.872082, abs=1e-6)


def test_meta_command_refuses_a_bad_ratings_file(tmp_path, capsys):
    scored = tmp_path / "scored.jsonl"
    scored.write_text(json.dumps(record_of(dialogue(0, "alpha", 0.1))) + "\n")
    ratings = tmp_path / "ratings.csv"
    ratings.write_text("dialogue_id,overall_impression\nalpha-0,9\n")
    assert main(["meta", "--input", str(scored), "--ratings", str(ratings)]) == 2
    assert "row 1 (line 2), column 'overall_impression': '9' is outside the scale 0-4" in capsys.readouterr().err


def test_resample_ranks_equal_scipy_rankdata_with_ties():
    import numpy as np
    from scipy import stats

    from evaluators.meta_correlations import resample_ranks

    rng = np.random.default_rng(3)
    for values in ([0.5, 0.1, 0.5, 0.9, 0.3, 0.1], list(rng.integers(0, 4, 40)), list(rng.random(25))):
        idx = rng.integers(0, len(values), size=(50, len(values)))
        expected = stats.rankdata(np.asarray(values, float)[idx], axis=1)
        assert np.array_equal(resample_ranks(values, idx), expected)


def test_turn_level_pairs_each_rated_reply_with_its_per_turn_recall():
    # Recall@k per system turn 0 .5 .5 1 against the replies' relevance 0 1 2 3: ranks 1 2.5 2.5 4 and 1 2 3 4,
    # Spearman = 4.5 / sqrt(4.5 * 5) = 0.948683; Pearson (deviations -.5 0 0 .5) = 1.5 / sqrt(.5 * 5), the same.
    d = dialogue(0, "alpha", 0.1, relevance=(0, 1, 2, 3))
    d.scores["recall"] = Score(value=0.5, scorer="recall", version="1", details={"per_turn": [0.0, 0.5, 0.5, 1.0]})
    rec = find(correlation_records([d], rounds=50), metric="recall", aspect="relevance", level="turn")
    assert rec["n"] == 4 and rec["spearman"] == pytest.approx(4.5 / math.sqrt(22.5))
    assert rec["pearson"] == pytest.approx(1.5 / math.sqrt(2.5))
    # Per-turn values that do not line up with the replies pair with nothing.
    d.scores["recall"].details["per_turn"] = [0.0, 0.5, 1.0]
    assert not [r for r in correlation_records([d], rounds=50) if r["level"] == "turn"]


def test_extra_aspects_are_correlated_and_satisfaction_stays_the_users_own():
    ds = [dialogue(i, "alpha", x, sentiment=s) for i, (x, s) in enumerate(zip(X, S))]
    for d, y in zip(ds, Y):
        d.ratings.append(Rating(values={"warmth": y}, rater_id="study", form_version="aspects_v1",
                                source="import", extra_scales={"warmth": (0, 4)}))
    records = correlation_records(ds, rounds=50)
    assert find(records, metric="rdl", aspect="warmth", level="dialogue")["spearman"] == pytest.approx(0.872082,
                                                                                                          abs=1e-6)
    assert [r["aspect"] for r in records if r["level"] == "dialogue"] == ["warmth", "satisfaction"]
