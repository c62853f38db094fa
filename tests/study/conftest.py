import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "battle"))

from battle_support import FakeCatalogCRS, make_services  # noqa: E402
from tests.support.prolific_server import ProlificServer  # noqa: E402


@pytest.fixture
def services(tmp_path):
    svc = make_services(tmp_path, [FakeCatalogCRS("alpha"), FakeCatalogCRS("beta"), FakeCatalogCRS("gamma")],
                        max_turns=6)
    yield svc
    svc.store.close()


@pytest.fixture
def prolific(monkeypatch):
    """A local server modelling Prolific's API, with the app's settings pointing at it."""
    with ProlificServer() as server:
        monkeypatch.setenv("PROLIFIC_API_TOKEN", server.token)
        monkeypatch.setenv("ARENA_PROLIFIC_URL", server.url)
        yield server
