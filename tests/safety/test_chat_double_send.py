"""Enter-then-Send, concurrent sends and feedback during a reply: the stored dialogue stays in order."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("gradio")
sys.path.insert(0, str(Path(__file__).parent.parent / "battle"))

from battle_support import FakeCatalogCRS, make_services  # noqa: E402

from arena.dialogue import Dialogue, Role, UserInfo  # noqa: E402
from webapp.sessions import chat  # noqa: E402


@pytest.fixture
def slow_services(tmp_path):
    services = make_services(tmp_path, [FakeCatalogCRS("alpha", delay_s=0.4)], max_turns=5)
    yield services
    services.store.close()


def _run_together(*calls):
    threads = []
    for call in calls:
        threads.append(threading.Thread(target=call))
        threads[-1].start()
        time.sleep(0.05)  # the second click arrives while the first is being answered
    for t in threads:
        t.join()


def _roles(services, dialogue_id):
    return [u.role for u in services.store.get_dialogue(dialogue_id).utterances]


def test_enter_then_send_stores_the_message_once(slow_services):
    dialogue = Dialogue(crs_id="alpha", user=UserInfo(id="p"))
    send = lambda: chat.send_message(slow_services, dialogue, "a comedy please", session_key="s1")  # noqa: E731
    _run_together(send, send)
    assert _roles(slow_services, dialogue.dialogue_id) == [Role.USER, Role.AGENT]


def test_concurrent_sends_in_one_session_are_serialised(slow_services):
    dialogue = Dialogue(crs_id="alpha", user=UserInfo(id="p"))
    _run_together(
        lambda: chat.send_message(slow_services, dialogue, "first", session_key="s2"),
        lambda: chat.send_message(slow_services, dialogue, "second", session_key="s2"),
    )
    stored = slow_services.store.get_dialogue(dialogue.dialogue_id)
    assert [u.role for u in stored.utterances] == [Role.USER, Role.AGENT, Role.USER, Role.AGENT]
    assert [u.text for u in stored.utterances if u.role == Role.USER] == ["first", "second"]


def test_a_reply_is_never_stored_after_the_feedback(slow_services):
    dialogue = Dialogue(crs_id="alpha", user=UserInfo(id="p"))
    chat.send_message(slow_services, dialogue, "hello", session_key="s3")
    _run_together(
        lambda: chat.send_message(slow_services, dialogue, "anything scary?", session_key="s3"),
        lambda: chat.give_feedback(slow_services, dialogue, "satisfied", "", session_key="s3"),
    )
    stored = slow_services.store.get_dialogue(dialogue.dialogue_id)
    assert stored.feedback is not None
    assert [u.role for u in stored.utterances] == [Role.USER, Role.AGENT] * 2
    assert stored.utterances[-1].timestamp <= stored.feedback.timestamp
