"""Suite-wide settings: never touch the network hub, never use a developer's cache."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import pytest  # noqa: E402


@pytest.fixture
def isolated_env(tmp_path, monkeypatch):
    """Settings pointing at a temporary database and cache, with the fake LLM."""
    monkeypatch.setenv("ARENA_DB", str(tmp_path / "arena.sqlite3"))
    monkeypatch.setenv("ARENA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ARENA_LLM_PROVIDER", "fake")
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "ARENA_LLM_MODEL"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


@pytest.fixture(scope="session")
def embedding_cache(tmp_path_factory):
    """One cache folder for the whole run, so catalog embeddings are computed once."""
    return tmp_path_factory.mktemp("arena-cache")


@pytest.fixture(scope="session")
def postgres_server():
    """One PostgreSQL cluster for the whole run (Debian's binaries; their absence fails, never skips)."""
    from tests.support.postgres import MISSING, PostgresServer, find_bin_dir

    bin_dir = find_bin_dir()
    if bin_dir is None:
        pytest.fail(MISSING)
    server = PostgresServer(bin_dir).start()
    yield server
    server.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def db_location(request, tmp_path):
    """A fresh database location for each backend: a SQLite file path or a PostgreSQL URL."""
    if request.param == "sqlite":
        return str(tmp_path / "db" / "arena.sqlite3")
    return request.getfixturevalue("postgres_server").create_database()


@pytest.fixture
def browser(tmp_path):
    """Debian's Chromium through Playwright (tests/support/browser.py); screenshots in ARENA_SCREENSHOTS."""
    from tests.support.browser import open_browser, screenshots_dir

    with open_browser(screenshots_dir(tmp_path)) as opened:
        yield opened
