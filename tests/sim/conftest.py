import pytest


@pytest.fixture(scope="session")
def view():
    from simulators import catalog_view

    return catalog_view("redial")


@pytest.fixture(scope="session")
def ray_local():
    """One local Ray (2 CPUs) for every Ray test of the run: starting Ray takes a while."""
    import ray

    from arena.runtime import distributed
    distributed.connect(num_cpus=2)
    yield
    ray.shutdown()
