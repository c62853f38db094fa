"""Servers on loopback for the bring-your-own-CRS tests: a faulty contract server and a small
ReDial catalog (embedded once per session). Helpers are in byo_support."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from byo_support import FaultyServer  # noqa: E402

from arena.catalogs.catalog import Catalog, load_catalog  # noqa: E402
from arena.catalogs.retrieval import ItemRetriever  # noqa: E402

ANCHORS = ["The Matrix (1999)", "Star Wars (1977)", "Alien (1979)", "Titanic (1997)", "Toy Story (1995)"]


@pytest.fixture(scope="session")
def small_redial() -> Catalog:
    redial = load_catalog("redial")
    chosen = [redial.find_title(name) for name in ANCHORS]
    space = [i for i in redial.items if "sci-fi" in i.genres and "space" in i.plot.lower()][:25]
    comedy = [i for i in redial.items if i.genres == ("comedy",) and i.plot][:15]
    return redial.subset([i.item_id for i in chosen + space + comedy], name="redial-byo-test")


@pytest.fixture(scope="session")
def byo_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("byo-cache")


@pytest.fixture(scope="session")
def small_retriever(small_redial: Catalog, byo_cache: Path) -> ItemRetriever:
    retriever = ItemRetriever(small_redial, byo_cache)
    retriever.prepare()
    return retriever


@pytest.fixture
def faulty_server():
    server = FaultyServer().start()
    yield server
    server.stop()
