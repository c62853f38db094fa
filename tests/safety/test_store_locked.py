"""A database locked past its busy timeout (another process holds its write lock): one line by the control,
the message kept in its box, nothing half-stored, and a resend stores the turn once. New visitors still
get in. The lock is real: a second SQLite connection holds BEGIN IMMEDIATE on the same file."""

from __future__ import annotations

import sqlite3
import sys
import threading
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "battle"))
sys.path.insert(0, str(Path(__file__).parent))

from battle_support import FakeCatalogCRS, launch, make_services  # noqa: E402

from arena.dialogue import Role  # noqa: E402
from webapp.sessions import participants  # noqa: E402
from webapp.sessions.turn_step import STORE_BUSY, is_store_busy  # noqa: E402

BUSY_S = 0.4  # the store's busy timeout in these tests (30 s in the app)


class HeldLock:
    """Another process's write lock on the database until `release`."""

    def __init__(self, path: Path):
        self.conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.conn.execute("BEGIN IMMEDIATE")

    def release(self) -> None:
        self.conn.execute("ROLLBACK")
        self.conn.close()


@pytest.fixture
def services(tmp_path, monkeypatch):
    monkeypatch.setattr("arena.store.engine.BUSY_TIMEOUT_S", BUSY_S)
    svc = make_services(tmp_path, [FakeCatalogCRS("alpha")], max_turns=5)
    yield svc
    svc.store.close()


def user_texts(store, dialogue_id):
    return [u.text for u in store.get_dialogue(dialogue_id).utterances if u.role == Role.USER]


def test_a_locked_database_is_told_in_one_line_and_a_resend_stores_the_turn_once(services, caplog):
    from gradio_client import Client

    demo, url = launch(services)
    try:
        client = Client(url, verbose=False)
        client.predict("alpha", api_name="/chat_start")
        client.predict("a comedy please", api_name="/chat_send")
        (stored,) = services.store.list_dialogues()
        first_visitor = participants.participant_id(services.store, participants.new_token())
        lock = HeldLock(services.settings.db_path)
        try:
            started = time.monotonic()
            outputs = client.predict("and a thriller", api_name="/chat_send")
            assert time.monotonic() - started < 20
            chat, status, box = outputs[0], outputs[2], outputs[3]
            assert status == f"⚠️ {STORE_BUSY}"
            for leak in ("SQL", "INSERT", "UPDATE", "sqlite", str(services.settings.db_path.parent)):
                assert leak not in status
            assert box["value"] == "and a thriller"  # kept, to be sent again
            assert "and a thriller" not in str(chat)  # the page shows what the store holds
            # A new visitor can still read the page and be identified.
            assert Client(url, verbose=False).predict(api_name="/leaderboard") is not None
            assert participants.participant_id(services.store, participants.new_token()) != first_visitor
        finally:
            lock.release()
        client.predict("and a thriller", api_name="/chat_send")
        assert user_texts(services.store, stored.dialogue_id) == ["a comedy please", "and a thriller"]
        assert any("write was refused" in r.getMessage() for r in caplog.records)
    finally:
        demo.close()


def test_only_lock_errors_count_as_busy():
    import sqlalchemy as sa

    locked = sa.exc.OperationalError("INSERT ...", {}, sqlite3.OperationalError("database is locked"))
    assert is_store_busy(locked) and is_store_busy(sqlite3.OperationalError("database is locked"))
    assert not is_store_busy(sa.exc.OperationalError("x", {}, sqlite3.OperationalError("no such table: t")))
    assert not is_store_busy(ValueError("locked"))


def test_a_lock_released_within_the_timeout_is_waited_for(services):
    lock = HeldLock(services.settings.db_path)
    threading.Timer(BUSY_S / 4, lock.release).start()
    services.store.set_meta("probe", "1")  # waits for the lock, then writes
    assert services.store.get_meta("probe") == "1"


def test_a_full_store_still_lets_new_visitors_in(services):
    """The page load identifies a visitor by reading the participant keys; nothing is written."""
    from test_disk_full import Cap

    participants.participant_id(services.store, participants.new_token())  # the first visitor made the key
    cap = Cap(services.store)
    try:
        with services.store.sql_engine().connect() as conn:  # the cap holds: a big write is refused
            with pytest.raises(Exception, match="full"):
                conn.exec_driver_sql("CREATE TABLE filler AS SELECT zeroblob(1000000) AS b")
        assert participants.participant_id(services.store, participants.new_token()).startswith("p-")
    finally:
        cap.lift()
