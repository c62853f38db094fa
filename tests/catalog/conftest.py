"""Shared fixtures: the real catalogs, and a small ReDial sub-catalog embedded once per session.

Embedding the full catalogs takes minutes on a CPU, so retrieval and ChatCRS
tests use about seventy real ReDial items chosen by genre (space sci-fi,
romance, horror, animation, comedy) plus a few well-known anchors.
"""

from __future__ import annotations

import pytest

from arena.catalogs.catalog import Catalog, load_catalog
from arena.catalogs.retrieval import ItemRetriever, embedding_model
from crs.dialogue_policy import DialoguePolicy

ANCHORS = ["The Matrix (1999)", "Star Wars (1977)", "Alien (1979)", "Titanic (1997)", "Toy Story (1995)"]
GROUPS = {
    "space": lambda i: "sci-fi" in i.genres and ("space" in i.plot.lower() or "planet" in i.plot.lower()),
    "romance": lambda i: "romance" in i.genres and "sci-fi" not in i.genres and "horror" not in i.genres,
    "horror": lambda i: "horror" in i.genres and "sci-fi" not in i.genres,
    "animation": lambda i: "animation" in i.genres and "horror" not in i.genres,
    "comedy": lambda i: i.genres == ("comedy",),
}
PER_GROUP = 13


@pytest.fixture(scope="session")
def redial() -> Catalog:
    return load_catalog("redial")


@pytest.fixture(scope="session")
def policy(redial: Catalog) -> DialoguePolicy:
    """The dialogue policy over the real ReDial catalog."""
    return DialoguePolicy(redial)


@pytest.fixture(scope="session")
def opendialkg() -> Catalog:
    return load_catalog("opendialkg")


@pytest.fixture(scope="session")
def small_redial(redial: Catalog) -> Catalog:
    chosen = [redial.find_title(name) for name in ANCHORS]
    for test in GROUPS.values():
        group = [i for i in redial.items if test(i) and i.plot and i not in chosen]
        chosen.extend(group[:PER_GROUP])
    return redial.subset([i.item_id for i in chosen], name="redial-test")


@pytest.fixture(scope="session")
def model():
    return embedding_model()


@pytest.fixture(scope="session")
def retriever(small_redial: Catalog, model, tmp_path_factory) -> ItemRetriever:
    built = ItemRetriever(small_redial, tmp_path_factory.mktemp("embeddings"))
    built.prepare()
    return built
