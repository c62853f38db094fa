"""The learnt combination: reproducible from a seed, and it learns what separates targets."""

from __future__ import annotations

import numpy as np
import pytest

from crs.recommender.combination import LinearCombination, TrainingTurn, train_pairwise
from crs.recommender.training import Turn, recall_per_target, split_dialogues

FEATURES = ["useful", "noise", "misleading"]


def synthetic_turns(seed: int, n: int = 60, items: int = 40) -> list[TrainingTurn]:
    """Targets score high on `useful`, `noise` is random, `misleading` favours non-targets."""
    rng = np.random.default_rng(seed)
    turns = []
    for _ in range(n):
        matrix = rng.random((items, 3)).astype(np.float32)
        targets = list(rng.choice(items, size=2, replace=False))
        matrix[targets, 0] += 0.8
        matrix[targets, 2] -= 0.5
        turns.append(TrainingTurn(matrix, [int(t) for t in targets]))
    return turns


def test_training_twice_gives_identical_weights(tmp_path):
    turns = synthetic_turns(1)
    first = train_pairwise(turns, FEATURES, seed=7)
    second = train_pairwise(turns, FEATURES, seed=7)
    first.save(tmp_path / "a.json")
    second.save(tmp_path / "b.json")
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    assert first.version == second.version


def test_weights_follow_the_evidence():
    combination = train_pairwise(synthetic_turns(2), FEATURES, seed=3)
    useful, noise, misleading = combination.weights
    assert useful > abs(noise) and useful > 0 and misleading < 0


def test_weights_file_must_fit_the_features(tmp_path):
    LinearCombination(FEATURES, np.ones(3, np.float32), "v").save(tmp_path / "w.json")
    assert LinearCombination.load(tmp_path / "w.json", FEATURES).features == FEATURES
    with pytest.raises(ValueError, match="retrain"):
        LinearCombination.load(tmp_path / "w.json", ["useful", "noise"])


def test_dialogue_split_keeps_dialogues_whole_and_is_seeded():
    turns = [Turn(f"d{i // 3}", ["hi"], ["1"], []) for i in range(90)]
    a1, b1 = split_dialogues(turns, 5, [0.8, 0.2])
    a2, b2 = split_dialogues(turns, 5, [0.8, 0.2])
    assert a1 == a2 and b1 == b2
    assert not {t.dialog_id for t in a1} & {t.dialog_id for t in b1}
    assert len({t.dialog_id for t in b1}) == 6


def test_recall_counts_every_target_once():
    rankings = [["a", "z", "b"], ["z", "z", "z"]]
    assert recall_per_target(rankings, [["a", "b"], ["c"]], (1, 3)) == ({1: 1 / 3, 3: 2 / 3}, 3)


def test_lambdamart_is_reproducible_and_ranks_targets_first(tmp_path):
    from crs.recommender.combination import load_combination, train_lambdamart

    turns = synthetic_turns(4, n=80)
    first = train_lambdamart(turns, FEATURES, seed=5, trees=30)
    second = train_lambdamart(turns, FEATURES, seed=5, trees=30)
    first.save(tmp_path / "a.json")
    second.save(tmp_path / "b.json")
    assert (tmp_path / "a.trees.txt").read_bytes() == (tmp_path / "b.trees.txt").read_bytes()
    loaded = load_combination(tmp_path / "a.json")
    held_out = synthetic_turns(9, n=20)
    hits = sum(int(np.argmax(loaded.score(t.features))) in t.targets for t in held_out)
    assert hits >= 15
    assert np.allclose(loaded.score(held_out[0].features), first.score(held_out[0].features))


def test_evidence_never_counts_against_an_item_and_interactions_are_learnt():
    # "bm25_last" plays the misleading column here: unconstrained it would get a negative weight.
    names = ["dense_last", "popularity", "bm25_last"]
    combination = train_pairwise(synthetic_turns(6), names, seed=1)
    weights = dict(zip(names + [f"{a}*{b}" for a, b in combination.interactions], combination.weights))
    assert weights["bm25_last"] == 0.0 and weights["dense_last"] > 0
    assert ("dense_last", "popularity") in combination.interactions and len(combination.weights) == 3 + 3
    assert all(w >= 0 for w in combination.weights)
