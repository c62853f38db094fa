import socket
from pathlib import Path

import pytest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def launched(tmp_path):
    """Launch a demo in-process on 127.0.0.1; yields a function taking Services -> base URL."""
    demos = []

    def launch(services):
        from webapp.serve import build_demo, launch_app

        demo = build_demo(services)
        demo.queue(default_concurrency_limit=16)
        port = free_port()
        launch_app(demo, server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
        demos.append((demo, services))
        return f"http://127.0.0.1:{port}/"

    yield launch
    for demo, services in demos:
        demo.close()
        services.close()


@pytest.fixture
def two_system_app(tmp_path):
    """The public app in this process with two scripted systems (alpha, beta) and 4 messages a conversation:
    (services, address)."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "battle"))
    from battle_support import FakeCatalogCRS, launch, make_services

    services = make_services(tmp_path, [FakeCatalogCRS("alpha"), FakeCatalogCRS("beta")], max_turns=4)
    demo, address = launch(services)
    yield services, address
    demo.close()
    services.store.close()
