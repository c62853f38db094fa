import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from battle_support import FakeCatalogCRS, make_services, serving_apps  # noqa: E402


@pytest.fixture
def fakes():
    return [FakeCatalogCRS("alpha"), FakeCatalogCRS("beta"), FakeCatalogCRS("gamma")]


@pytest.fixture
def services(tmp_path, fakes):
    svc = make_services(tmp_path, fakes, max_turns=3, max_message_chars=200)
    yield svc
    svc.store.close()


@pytest.fixture
def served():
    """Launch Services as the real app on 127.0.0.1; returns the base URL."""
    with serving_apps() as serve:
        yield serve
