"""The first message of a Chat conversation, received by two app processes at once (here: two sets of the
app's services on one database, each with its own memory), stores one conversation; a first turn that is
refused gives its claim back. The same with two real processes on PostgreSQL is in
tests/replicas/test_replica_first_message.py."""

from __future__ import annotations

import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

pytest.importorskip("gradio")
sys.path.insert(0, str(Path(__file__).parent.parent / "battle"))

from battle_support import FakeCatalogCRS, make_services  # noqa: E402

from webapp.sessions import chat, first_message, participants  # noqa: E402
from webapp.sessions.refusal import Refusal  # noqa: E402
from webapp.sessions.turn_step import CHANGED_ELSEWHERE  # noqa: E402


@pytest.fixture
def two_processes(tmp_path):
    """Two processes' worth of services on one SQLite file; every reply takes 0.4 s."""
    pair = [make_services(tmp_path, [FakeCatalogCRS("alpha", delay_s=0.4)], max_turns=5) for _ in range(2)]
    yield pair
    for services in pair:
        services.store.close()


def a_participant(services) -> str:
    return participants.participant_id(services.store, uuid.uuid4().hex * 2)


def first_message_on_both(pair, user: str, text: str, message_id):
    """What each process answers to the same first message, sent to both at the same moment."""
    answers, start = [None, None], threading.Barrier(2)

    def send(n: int) -> None:
        page, _ = chat.start_conversation(pair[n], "alpha", user)  # each process's own fresh page
        start.wait()
        answers[n] = chat.send_message(pair[n], page, text, session_key=user, message_id=message_id)

    threads = [threading.Thread(target=send, args=(n,)) for n in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answers


@pytest.mark.parametrize("message_id", ["m-1", None], ids=["named", "unnamed"])
def test_the_same_first_message_on_two_processes_stores_one_conversation(two_processes, message_id):
    user = a_participant(two_processes[0])
    answers = first_message_on_both(two_processes, user, "a comedy please", message_id)
    (stored,) = two_processes[0].store.list_dialogues(user_id=user)
    assert [u.text for u in stored.utterances][0] == "a comedy please" and len(stored.utterances) == 2
    assert [d.dialogue_id for d, _ in answers] == [stored.dialogue_id] * 2
    assert sorted(status for _, status in answers)[0] == ""  # the other one: a repeat, nothing more stored


def test_a_retry_arriving_while_the_first_is_answered_waits_for_it(two_processes):
    """The retry reaches the other process while the first reply is still being written: it waits for
    that conversation and answers with it, as a repeat."""
    one, other = two_processes
    user = a_participant(one)
    page, _ = chat.start_conversation(one, "alpha", user)
    first = threading.Thread(target=chat.send_message, args=(one, page, "a comedy"),
                             kwargs={"session_key": user, "message_id": "m-1"})
    first.start()
    time.sleep(0.1)  # the first message is being answered (0.4 s)
    retry, _ = chat.start_conversation(other, "alpha", user)
    shown, status = chat.send_message(other, retry, "a comedy", session_key=user, message_id="m-1")
    first.join()
    assert shown.dialogue_id == page.dialogue_id and status == "" and len(shown.utterances) == 2
    assert len(one.store.list_dialogues(user_id=user)) == 1


def test_a_refused_first_turn_gives_its_claim_back(two_processes):
    one, other = two_processes
    user = a_participant(one)
    page, _ = chat.start_conversation(one, "alpha", user)
    with pytest.raises(Refusal, match="limit"):  # too long: the system never answers it
        chat.send_message(one, page, "x" * (one.settings.max_message_chars + 1), session_key=user,
                          message_id="m-1")
    key = first_message.start_key(user, "m-1", "x" * (one.settings.max_message_chars + 1))
    assert one.store.conversation_start_holder(key) is None and one.store.list_dialogues(user_id=user) == []
    fresh, _ = chat.start_conversation(other, "alpha", user)
    stored, status = chat.send_message(other, fresh, "hello", session_key=user, message_id="m-1")
    assert status != CHANGED_ELSEWHERE and [u.text for u in stored.utterances][0] == "hello"


def test_the_chat_reads_its_page_through_the_session_base(two_processes):
    """The Chat's first send and the Battle's and the study's sends check the page the same way
    (`session_base`): a new page is sent as new, a page whose conversation went from the store is behind."""
    from arena.dialogue import Role, Utterance
    from webapp.sessions import session_base
    from webapp.sessions.turn_step import ChangedElsewhere

    services = two_processes[0]
    user = a_participant(services)
    page, _ = chat.start_conversation(services, "alpha", user)
    assert session_base.as_stored_or_new(services, page) is None  # not stored yet: the first send creates it
    with pytest.raises(ChangedElsewhere):
        session_base.as_stored(services, page)  # the Battle and the study store theirs at their start
    key, other = session_base.claim_first_send(services, page, "m-1", "hello")
    assert other is None and key == first_message.start_key(user, "m-1", "hello")
    first_message.release_start(services, page, key)
    page.utterances.append(Utterance(role=Role.USER, text="hello"))  # a page holding a turn never stored
    with pytest.raises(ChangedElsewhere):
        session_base.as_stored_or_new(services, page)
    anonymous, _ = chat.start_conversation(services, "alpha", "anonymous")
    assert session_base.claim_first_send(services, anonymous, "m-1", "hello") == (None, None)
