"""The recommender over a sample of a catalog: every signal scores the sample, never the full catalog."""

from __future__ import annotations

import numpy as np
import pytest

from arena.catalogs.catalog import load_catalog
from crs.recommender.recommender import Recommender, build_signals, load_recommender
from crs.recommender.signals import MentionSignal, feature_matrix
from crs.recommender.statistics import ItemStatistics


@pytest.fixture(scope="module")
def opendialkg():
    return load_catalog("opendialkg")


def test_an_empty_sample_is_refused_in_one_line_instead_of_ranking_the_full_catalog(opendialkg):
    # The sample a genre filter gave back can be empty (OpenDialKG capitalises its genres); the full
    # catalog then stood in for it, and its signals no longer matched the sample's embeddings.
    empty = opendialkg.subset([], name="no-items")
    with pytest.raises(ValueError, match="no items"):
        load_recommender("opendialkg", catalog=empty)


def test_a_small_sample_ranks_only_its_own_items(opendialkg):
    picked = [i.item_id for i in opendialkg.items if "Comedy" in i.genres][:25]
    sample = opendialkg.subset(picked, name="comedy-sample")
    recommender = load_recommender("opendialkg", catalog=sample)
    ranked = recommender.rank_texts(["a silly comedy for the weekend"], k=10)
    assert ranked and {r.item.item_id for r in ranked} <= set(picked)


def test_embeddings_of_another_catalog_fail_when_the_recommender_is_built(films):
    catalog, kg_path = films
    foreign = np.zeros((len(catalog.items) + 3, 4), dtype=np.float32)
    with pytest.raises(ValueError, match="rows but catalog"):
        build_signals(catalog, ItemStatistics(), foreign, lambda texts: np.zeros((len(texts), 4)), kg_path)


def test_a_signal_of_another_size_is_named_in_the_error(films):
    catalog, kg_path = films
    recommender = Recommender(catalog, build_signals(catalog, ItemStatistics(), None, None, kg_path))
    stray = MentionSignal({}, len(catalog.items) + 1)
    ctx = recommender.context_of_texts(["a heist film"])
    with pytest.raises(ValueError, match="MentionSignal 9"):
        feature_matrix([*recommender.signals, stray], ctx)
