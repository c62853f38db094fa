"""A full disk (issue 26): one clear line for the participant, the transaction rolled back, nothing
half-written. The store is really filled: SQLite's `max_page_count` caps the database at its current
size, so the next write that needs a page fails with "database or disk is full", as on a full disk.
Exports are really cut short by a file-size limit (RLIMIT_FSIZE) in a child process."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest
from sqlalchemy import event

sys.path.insert(0, str(Path(__file__).parent.parent / "battle"))

from battle_support import FakeCatalogCRS, launch, make_services  # noqa: E402

from arena.dialogue import Dialogue, Role, UserInfo  # noqa: E402
from arena.store import Store, StoreFull, is_disk_full  # noqa: E402
from webapp.sessions import chat  # noqa: E402
from webapp.sessions.battle import rate, send, start_battle, vote  # noqa: E402
from webapp.sessions.refusal import Refusal  # noqa: E402
from webapp.sessions.turn_step import STORAGE_FULL, refused_when_full  # noqa: E402

BIG = 12_000  # characters: more than the free room on the database's last page


class Cap:
    """Caps a Store's SQLite database at its present number of pages, on every connection it opens."""

    def __init__(self, store: Store):
        self.engine = store.sql_engine()
        with self.engine.connect() as conn:
            self.pages = conn.exec_driver_sql("PRAGMA page_count").scalar()
        self.engine.dispose()  # pooled connections predate the cap
        event.listen(self.engine, "connect", self._cap)

    def _cap(self, dbapi_conn, _record):
        dbapi_conn.execute(f"PRAGMA max_page_count = {self.pages}")

    def lift(self):
        event.remove(self.engine, "connect", self._cap)
        self.engine.dispose()


def user_texts(store, dialogue_id):
    return [u.text for u in store.get_dialogue(dialogue_id).utterances if u.role == Role.USER]


def test_a_write_the_disk_cannot_take_is_store_full_and_leaves_nothing(tmp_path):
    store = Store(tmp_path / "arena.sqlite3")
    kept = Dialogue(crs_id="alpha", user=UserInfo(id="p"))
    kept.add_user("hi")
    store.save_dialogue(kept)
    cap = Cap(store)
    big = Dialogue(crs_id="alpha", user=UserInfo(id="p"))
    big.add_user("x" * BIG)
    with pytest.raises(StoreFull) as caught:
        store.save_dialogues([Dialogue(crs_id="beta", user=UserInfo(id="q")), big])  # one transaction
    assert "full" in str(caught.value) and "\n" not in str(caught.value)
    cap.lift()
    assert [d.dialogue_id for d in store.list_dialogues()] == [kept.dialogue_id]  # neither of the two
    assert store.integrity_check() == "ok"
    store.close()


def test_disk_full_errors_are_recognised_and_others_are_not():
    assert is_disk_full(OSError(errno.ENOSPC, "No space left on device"))
    assert is_disk_full(OSError(errno.EFBIG, "File too large"))
    assert not is_disk_full(OSError(errno.EACCES, "Permission denied"))
    assert is_disk_full(SimpleNamespace(orig=SimpleNamespace(pgcode="53100")))
    assert not is_disk_full(ValueError("database is locked"))
    with pytest.raises(PermissionError):  # any other failure is not dressed up as a full disk
        with refused_when_full():
            raise PermissionError(errno.EACCES, "Permission denied")


def test_chat_on_a_full_disk_says_so_and_keeps_nothing_half_written(tmp_path, caplog):
    """Through gradio_client against the running app: a message the store cannot take is answered with
    one line by the input, stays in its box, is not stored, and goes through once there is room."""
    from gradio_client import Client

    services = make_services(tmp_path, [FakeCatalogCRS("alpha")], max_turns=5, max_message_chars=20_000)
    demo, url = launch(services)
    try:
        client = Client(url, verbose=False)
        client.predict("alpha", api_name="/chat_start")
        client.predict("a comedy please", api_name="/chat_send")
        (stored,) = services.store.list_dialogues()
        cap = Cap(services.store)
        message = "and something long " + "x" * BIG
        outputs = client.predict(message, api_name="/chat_send")
        chat, status, box = outputs[0], outputs[2], outputs[3]
        assert status == f"⚠️ {STORAGE_FULL}"
        assert box["value"] == message  # the message stays in its box, to be sent again
        assert "something long" not in str(chat)  # the page shows what the store holds
        assert user_texts(services.store, stored.dialogue_id) == ["a comedy please"]
        assert any("write was refused" in r.getMessage() for r in caplog.records)
        cap.lift()
        client.predict(message, api_name="/chat_send")
        assert user_texts(services.store, stored.dialogue_id) == ["a comedy please", message]
    finally:
        demo.close()


def request(session="s1", host="10.0.0.1"):
    return SimpleNamespace(session_hash=session, client=SimpleNamespace(host=host))


def test_feedback_on_a_full_disk_leaves_the_conversation_open(tmp_path):
    services = make_services(tmp_path, [FakeCatalogCRS("alpha")], max_turns=5, max_message_chars=20_000)
    dialogue, _ = chat.start_conversation(services, "alpha", "p")
    chat.send_message(services, dialogue, "a comedy please", session_key="p")
    cap = Cap(services.store)
    with pytest.raises(Refusal, match="storage is full"):
        chat.give_feedback(services, dialogue, "satisfied", "y" * BIG, session_key="p", request=request())
    assert dialogue.feedback is None and not dialogue.ended  # the page can rate it again
    assert services.store.get_dialogue(dialogue.dialogue_id).feedback is None
    cap.lift()
    chat.give_feedback(services, dialogue, "satisfied", "fine", session_key="p", request=request())
    assert services.store.get_dialogue(dialogue.dialogue_id).feedback.sentiment == "satisfied"


def test_a_vote_on_a_full_disk_stores_no_part_of_the_battle(tmp_path):
    services = make_services(tmp_path, [FakeCatalogCRS("alpha"), FakeCatalogCRS("beta")], max_message_chars=20_000)
    session = start_battle(services, "u1", request=request("b", "10.0.0.4"))
    for side in ("A", "B"):
        send(services, session, side, "a comedy please")
        rate(services, session, side, "satisfied")
    before = {d.dialogue_id: d.model_dump_json() for d in services.store.list_dialogues()}
    cap = Cap(services.store)
    with pytest.raises(Refusal, match="storage is full"):
        vote(services, session, "A", "z" * BIG, "u1")
    assert session.vote is None and services.store.list_votes() == []
    assert {d.dialogue_id: d.model_dump_json() for d in services.store.list_dialogues()} == before
    cap.lift()
    vote(services, session, "A", "fine", "u1")
    assert [v.choice for v in services.store.list_votes()] == ["A"]


EXPORT_UNDER_A_FILE_SIZE_LIMIT = textwrap.dedent("""
    import resource, signal, sys
    from arena.corpus.bundle import export_bundle
    from arena.store import Store
    from webapp.sessions.refusal import Refusal
    from webapp.sessions.turn_step import refused_when_full

    store = Store(sys.argv[1])
    store.list_dialogues()  # the database is open before the limit: only the export's files meet it
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG, as ENOSPC would
    resource.setrlimit(resource.RLIMIT_FSIZE, (20_000, 20_000))
    try:
        with refused_when_full():  # as the Download tab prepares an export
            export_bundle(store, sys.argv[2], salt="fixed")
    except Refusal as exc:
        print(exc.text)
        sys.exit(3)
""")


def test_an_export_cut_short_by_the_disk_leaves_no_half_file(tmp_path):
    store = Store(tmp_path / "arena.sqlite3")
    for i in range(20):  # about 40 kB of dialogues: more than the child may write to one file
        d = Dialogue(crs_id="alpha", user=UserInfo(id=f"p{i}"))
        d.add_user("a long message " + "w" * 2000)
        d.add_agent("ok")
        store.save_dialogue(d)
    store.close()
    out = tmp_path / "export"
    result = subprocess.run([sys.executable, "-c", EXPORT_UNDER_A_FILE_SIZE_LIMIT, str(tmp_path / "arena.sqlite3"),
                             str(out)], capture_output=True, text=True, timeout=120, cwd=Path(__file__).parents[2],
                            env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert result.returncode == 3, result.stderr
    assert result.stdout.strip() == STORAGE_FULL and "Traceback" not in result.stderr
    left = sorted(p.name for p in out.iterdir()) if out.exists() else []
    assert "dialogues.jsonl" not in left and not [n for n in left if n.endswith(".tmp")], left


def test_a_label_the_full_disk_refused_counts_once_when_sent_again(tmp_path):
    """The limiters count a label only once it is stored: the retry is neither over the limit nor a burst."""
    from arena.crowd.counting import LABEL_FLAG

    services = make_services(tmp_path, [FakeCatalogCRS("alpha")], max_turns=5, max_message_chars=20_000,
                             max_rated_per_user=1, max_rated_per_ip=1, burst_labels=1)
    dialogue, _ = chat.start_conversation(services, "alpha", "p")
    chat.send_message(services, dialogue, "a comedy please", session_key="p")
    cap = Cap(services.store)
    for _ in range(2):  # refused twice by the disk, never by the limit
        with pytest.raises(Refusal, match="storage is full"):
            chat.give_feedback(services, dialogue, "satisfied", "y" * BIG, session_key="p", request=request())
    cap.lift()
    chat.give_feedback(services, dialogue, "satisfied", "fine", session_key="p", request=request())
    stored = services.store.get_dialogue(dialogue.dialogue_id)
    assert stored.feedback.sentiment == "satisfied" and LABEL_FLAG not in stored.metadata
    other, _ = chat.start_conversation(services, "alpha", "p")  # the one label allowed is now spent
    chat.send_message(services, other, "a drama please", session_key="p")
    with pytest.raises(Refusal, match="limit of 1 rated conversations"):
        chat.give_feedback(services, other, "satisfied", "fine", session_key="p", request=request())


def test_a_vote_the_full_disk_refused_counts_once_when_cast_again(tmp_path):
    services = make_services(tmp_path, [FakeCatalogCRS("alpha"), FakeCatalogCRS("beta")], max_message_chars=20_000,
                             max_votes_per_user=1, max_votes_per_ip=1)
    session = start_battle(services, "u1", request=request("b", "10.0.0.4"))
    for side in ("A", "B"):
        send(services, session, side, "a comedy please")
        rate(services, session, side, "satisfied")
    cap = Cap(services.store)
    for _ in range(2):
        with pytest.raises(Refusal, match="storage is full"):
            vote(services, session, "A", "z" * BIG, "u1")
    cap.lift()
    vote(services, session, "A", "fine", "u1")
    assert [v.choice for v in services.store.list_votes()] == ["A"]
    second = start_battle(services, "u1", request=request("b", "10.0.0.4"))
    for side in ("A", "B"):
        send(services, second, side, "a drama please")
        rate(services, second, side, "satisfied")
    with pytest.raises(Refusal, match="limit of 1 vote"):  # the stored vote was counted, once
        vote(services, second, "B", "fine", "u1")
