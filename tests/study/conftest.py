import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "battle"))

from battle_support import FakeCatalogCRS, make_services  # noqa: E402
from tests.support.prolific_server import ProlificServer  # noqa: E402
from study_support import RESEARCHER_PASSWORD  # noqa: E402
from webapp.protection.admin_auth import hash_password  # noqa: E402


@pytest.fixture
def services(tmp_path):
    svc = make_services(tmp_path, [FakeCatalogCRS("alpha"), FakeCatalogCRS("beta"), FakeCatalogCRS("gamma")],
                        max_turns=6)
    yield svc
    svc.store.close()


@pytest.fixture
def researcher_services(tmp_path):
    """Two systems and the researcher "ada" (password `RESEARCHER_PASSWORD`), for the researcher's pages."""
    svc = make_services(tmp_path, [FakeCatalogCRS("alpha"), FakeCatalogCRS("beta")], max_turns=6, admin_users=("ada",),
                        admin_password_hash=hash_password(RESEARCHER_PASSWORD, iterations=1000))
    yield svc
    svc.store.close()


@pytest.fixture
def prolific(monkeypatch):
    """A local server modelling Prolific's API, with the app's settings pointing at it."""
    with ProlificServer() as server:
        monkeypatch.setenv("PROLIFIC_API_TOKEN", server.token)
        monkeypatch.setenv("ARENA_PROLIFIC_URL", server.url)
        yield server
