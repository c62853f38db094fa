"""Idempotent sends (issue 26): a client message id stores one turn however often it is sent, also under
three concurrent sends, through the service layer and through gradio_client against the running app."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import gradio as gr
import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "battle"))

from battle_support import FakeCatalogCRS, launch, make_services  # noqa: E402

from arena.dialogue import Dialogue, Role, UserInfo  # noqa: E402
from webapp.sessions.idempotent_sends import CLIENT_MESSAGE_IDS  # noqa: E402
from webapp.sessions import chat  # noqa: E402


def user_texts(services, dialogue_id):
    return [u.text for u in services.store.get_dialogue(dialogue_id).utterances if u.role == Role.USER]


def test_the_same_id_twice_stores_one_turn_and_a_new_id_another(tmp_path):
    services = make_services(tmp_path, [FakeCatalogCRS("alpha")], max_turns=5)
    dialogue = Dialogue(crs_id="alpha", user=UserInfo(id="p"))
    for _ in range(2):
        chat.send_message(services, dialogue, "a comedy", session_key="k", message_id="m-1")
    assert user_texts(services, dialogue.dialogue_id) == ["a comedy"]
    # the same text on purpose, later, under a new id is a new turn (the time window aside)
    dialogue.utterances[-1].timestamp = dialogue.utterances[-2].timestamp = \
        dialogue.utterances[-1].timestamp.replace(year=2000)
    chat.send_message(services, dialogue, "a comedy", session_key="k", message_id="m-2")
    assert user_texts(services, dialogue.dialogue_id) == ["a comedy", "a comedy"]
    assert services.store.get_dialogue(dialogue.dialogue_id).metadata[CLIENT_MESSAGE_IDS] == ["m-1", "m-2"]
    with pytest.raises(gr.Error, match="message id"):
        chat.send_message(services, dialogue, "x", session_key="k", message_id="<script>")


def test_three_concurrent_sends_with_one_id_store_one_turn(tmp_path):
    services = make_services(tmp_path, [FakeCatalogCRS("alpha", delay_s=0.5)], max_turns=5)
    dialogue = Dialogue(crs_id="alpha", user=UserInfo(id="p"))
    threads = [threading.Thread(target=chat.send_message,
                                args=(services, dialogue, "a comedy", "k", "same-id")) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert user_texts(services, dialogue.dialogue_id) == ["a comedy"]


def test_repeated_sends_through_the_api_store_one_turn(tmp_path):
    """The probe: three concurrent identical sends behind a slow reply stored three turns."""
    from gradio_client import Client

    services = make_services(tmp_path, [FakeCatalogCRS("alpha", delay_s=2.5)], max_turns=10)
    demo, url = launch(services)
    try:
        client = Client(url, verbose=False)
        client.predict("alpha", api_name="/chat_start")
        jobs = [client.submit("a space movie please", "alpha", "msg-7", api_name="/chat_send") for _ in range(3)]
        for job in jobs:
            job.result(timeout=60)
        # and without an id: copies queued behind the reply are still recognised
        jobs = [client.submit("and a comedy", api_name="/chat_send") for _ in range(3)]
        for job in jobs:
            job.result(timeout=60)
        (stored,) = services.store.list_dialogues()
        assert [u.text for u in stored.utterances if u.role == Role.USER] == ["a space movie please", "and a comedy"]
    finally:
        demo.close()
