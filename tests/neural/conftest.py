"""Tiny random checkpoints in the published layout, built once per test session.

The real knowledge graphs and catalogs (assets/catalogs) are used, so entity
ids, item ids and catalog lookups are the real ones; only the networks are
small and random.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.runtime.config import Settings
from tests.support.checkpoints import Sizes, corpus, fabricate
from crs.neural.variants import RuntimeOptions

# Short replies keep the fast tests fast; one thread avoids contention on small CPUs.
TEST_OPTIONS = RuntimeOptions(threads=1, max_new_tokens=6)


@pytest.fixture(scope="session")
def test_options() -> RuntimeOptions:
    return TEST_OPTIONS


@pytest.fixture(scope="session")
def tiny_texts() -> list[str]:
    return corpus(1500)


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory, tiny_texts) -> Path:
    """A models folder with all twelve checkpoint folders and the three base models."""
    return fabricate(tmp_path_factory.mktemp("models"), Sizes.tiny(), texts=tiny_texts)


@pytest.fixture(scope="session")
def tiny_settings(tiny_models, tmp_path_factory) -> Settings:
    return Settings.from_env(models_dir=tiny_models, cache_dir=tmp_path_factory.mktemp("cache"))


@pytest.fixture(scope="session")
def hf_cache(tmp_path_factory) -> Path:
    """An empty Hugging Face cache, so a developer's real cache never leaks into tests."""
    return tmp_path_factory.mktemp("hf-cache")


@pytest.fixture(scope="session")
def registry(tiny_settings, hf_cache):
    from crs.neural import neural_specs
    from crs.registry import CRSRegistry

    return CRSRegistry(neural_specs(tiny_settings, options=TEST_OPTIONS, hf_cache_dir=hf_cache))
