import pytest

from tests.replicas.replicas_support import ReplicaProcess


@pytest.fixture
def replicas():
    """Start replicas with `replicas(db, name, *args, env=...)`; all of them end with the test."""
    started: list[ReplicaProcess] = []

    def start(db: str, name: str, *args: str, env=None) -> ReplicaProcess:
        replica = ReplicaProcess(db, name, *args, env=env)
        started.append(replica)
        return replica

    yield start
    for replica in started:
        replica.stop()
