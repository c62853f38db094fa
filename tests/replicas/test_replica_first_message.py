"""Two app processes on one PostgreSQL database receiving the same first message at the same moment (a
client retrying through a load balancer without stickiness): one conversation is stored, and the process
that did not answer it answers with that conversation. A Battle page whose battle was voted or replaced on
the other process is told so and shown the battle as stored.

Every reply takes a moment (`--reply-delay`), so both processes are answering the message at once: without
the start claim each stored a conversation of its own, every time."""

from __future__ import annotations

import uuid

import pytest

from arena.store import Store
from webapp.sessions import participants
from webapp.sessions.turn_step import CHANGED_ELSEWHERE

pytestmark = pytest.mark.slow  # two app processes and a PostgreSQL cluster

REPLY_DELAY = ("--reply-delay", "0.6")


@pytest.fixture
def db(postgres_server):
    url = postgres_server.create_database("first_message")
    Store(url).close()  # the schema in place before both start
    return url


@pytest.fixture
def pair(db, replicas):
    return replicas(db, "r1", *REPLY_DELAY), replicas(db, "r2", *REPLY_DELAY)


def participant(db: str) -> str:
    """A fresh participant (the id a browser's token stands for)."""
    with Store(db) as store:
        return participants.participant_id(store, uuid.uuid4().hex + uuid.uuid4().hex[:8])


def stored_chats(db: str, user: str) -> list[list[str]]:
    with Store(db) as store:
        return [[u.text for u in d.utterances] for d in store.list_dialogues(user_id=user)]


def both_at_once(r1, r2, op: str, **args) -> list[dict]:
    r1.send(op, **args)
    r2.send(op, **args)
    return [r1.receive(), r2.receive()]


@pytest.mark.parametrize("message_id", ["m-1", None], ids=["named", "unnamed"])
def test_a_first_message_sent_to_both_replicas_at_once_stores_one_conversation(db, pair, message_id):
    r1, r2 = pair
    for n in range(3):  # the issue saw two conversations in 2 of 3 tries
        user = participant(db)
        answers = both_at_once(r1, r2, "chat_send", user=user, text=f"hello {n}", message_id=message_id)
        (stored,) = stored_chats(db, user)  # one conversation, not one per replica
        assert stored[0] == f"hello {n}" and len(stored) == 2
        # Both answer with that conversation: one stored it, the other found it (a repeat: no line).
        assert {a["id"] for a in answers} == {answers[0]["id"]} and all(a["turns"] == stored for a in answers)
        assert min(a["status"] for a in answers) == ""
        # The conversation goes on from either replica.
        r2.call("chat_send", user=user, text=f"more {n}", message_id=f"m-more-{n}")
        (longer,) = stored_chats(db, user)
        assert longer[:3] == [f"hello {n}", stored[1], f"more {n}"] and len(longer) == 4


def test_a_new_conversation_started_on_both_at_once_with_a_reused_id_is_one_new_conversation(db, pair):
    """A client that names the first message of every conversation alike: the rated conversation is over,
    so its start is free for the next one, which is still made once."""
    r1, r2 = pair
    user = participant(db)
    r1.call("chat_send", user=user, text="first talk", message_id="m-1")
    assert r1.call("chat_rate", user=user, sentiment="satisfied")["status"].startswith("Thank you")
    answers = both_at_once(r1, r2, "chat_send", user=user, text="second talk", message_id="m-1", new=True)
    chats = stored_chats(db, user)
    assert [turns[0] for turns in chats] == ["first talk", "second talk"] and len(chats[1]) == 2
    assert all(a["turns"] == chats[1] for a in answers)


def test_a_battle_page_whose_battle_was_voted_elsewhere_is_told_so_and_shown_as_stored(db, replicas):
    r1, r2 = replicas(db, "r1"), replicas(db, "r2")
    user = participant(db)
    battle_id = r1.call("battle_start", user=user)["battle"]
    r1.call("battle_send", user=user, side="A", text="a comedy")
    r1.call("battle_send", user=user, side="B", text="a comedy")
    r2.call("battle_rate", user=user, side="A", sentiment="satisfied")
    r2.call("battle_rate", user=user, side="B", sentiment="frustrated")
    r2.call("battle_vote", user=user, choice="A")
    # r1's page still shows the battle: not "Press New battle first", and no old panes.
    assert r1.call("battle_send", user=user, side="A", text="one more") == {
        "status": CHANGED_ELSEWHERE, "battle": None}
    with Store(db) as store:
        sides = [d for d in store.list_dialogues(user_id=user) if d.metadata.get("battle_id") == battle_id]
    assert sorted(len(d.utterances) for d in sides) == [2, 2]
    # The page now shows no battle: a message there asks for a new one, as on any fresh page.
    again = r1.call("battle_send", user=user, side="A", text="one more")
    assert again == {"refused": "Press “New battle” first."}


def test_a_battle_page_whose_battle_was_replaced_elsewhere_shows_the_new_one(db, replicas):
    r1, r2 = replicas(db, "r1"), replicas(db, "r2")
    user = participant(db)
    old = r1.call("battle_start", user=user)["battle"]
    r1.call("battle_send", user=user, side="A", text="old battle")
    new = r2.call("battle_start", user=user)["battle"]  # "New battle" in a tab served by r2
    assert new != old
    stale = r1.call("battle_send", user=user, side="A", text="meant for the old battle")
    assert stale["status"] == CHANGED_ELSEWHERE and stale["battle"] == new
    assert stale["sides"] == {"A": [], "B": []}
    r1.call("battle_send", user=user, side="A", text="now in the new battle")  # the page shows it now
    with Store(db) as store:
        said = {d.metadata["battle_id"]: [u.text for u in d.utterances][::2]
                for d in store.list_dialogues(user_id=user) if d.metadata.get("side") == "A"}
    assert said == {old: ["old battle"], new: ["now in the new battle"]}
