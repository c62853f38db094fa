import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "battle"))

from battle_support import FakeCatalogCRS, make_services  # noqa: E402


@pytest.fixture
def services(tmp_path):
    svc = make_services(tmp_path, [FakeCatalogCRS("alpha"), FakeCatalogCRS("beta"), FakeCatalogCRS("gamma")],
                        max_turns=6)
    yield svc
    svc.store.close()
