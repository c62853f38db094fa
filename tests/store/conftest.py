import pytest

from arena.store import Store


@pytest.fixture
def store(db_location):
    """The same store tests on SQLite and on PostgreSQL."""
    s = Store(db_location)
    yield s
    s.close()
