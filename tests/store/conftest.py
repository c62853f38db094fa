import pytest

from arena.store import Store


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "nested" / "arena.sqlite3")
    yield s
    s.close()
