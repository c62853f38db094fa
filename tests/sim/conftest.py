import pytest


@pytest.fixture(scope="session")
def view():
    from simulators import catalog_view

    return catalog_view("redial")
