"""One message to both systems of a battle: the rules per side (webapp.sessions.battle.check_send_both) and
the endpoint the Battle tab's shared box uses, over HTTP."""

import threading

import pytest
from gradio_client import Client

from webapp.sessions.battle import check_send_both, partly_sent, rate, send, start_battle
from webapp.sessions.refusal import Refusal


def test_a_message_for_both_goes_to_every_side_that_can_take_it(services):
    with pytest.raises(Refusal) as refusal:
        check_send_both(services, None, "hello")
    assert refusal.value.text == "Press “New battle” first."  # one reason, said once
    session = start_battle(services, "u1")
    assert check_send_both(services, session, "hello") == (["A", "B"], {})
    with pytest.raises(Refusal, match="type a message"):
        check_send_both(services, session, "   ")

    send(services, session, "A", "hello")
    rate(services, session, "A", "satisfied")
    taken, refused = check_send_both(services, session, "and for my kids?")
    assert taken == ["B"] and list(refused) == ["A"]
    assert partly_sent(refused) == ("System A did not get this message: "
                                    "The conversation with System A has ended.")

    session.busy["B"].acquire()  # System B still writing its reply
    try:
        with pytest.raises(Refusal) as refusal:
            check_send_both(services, session, "anything?")
    finally:
        session.busy["B"].release()
    assert refusal.value.text == ("The conversation with System A has ended. "
                                  "System B is still answering your previous message.")


def test_the_shared_box_sends_to_both_panes_and_names_the_side_left_out(services, served):
    client = Client(served(services), verbose=False)
    client.predict(api_name="/battle_start")
    out = client.predict("A space adventure, please", api_name="/battle_send_both")
    chat_a, chat_b, notice = out[0], out[4], out[-1]  # (an API client gets no buttons)
    for chat in (chat_a, chat_b):
        assert [m["role"] for m in chat] == ["user", "assistant"]
        assert "A space adventure, please" in str(chat[0]["content"])
    assert notice == ""
    client.predict(api_name="/battle_frustrated_b")
    out = client.predict("Something older?", api_name="/battle_send_both")
    assert "System B did not get this message" in out[-1] and "System B has ended" in out[-1]
    stored = {d.metadata["side"]: d for d in services.store.list_dialogues()}
    assert [u.text for u in stored["A"].user_turns()] == ["A space adventure, please", "Something older?"]
    assert [u.text for u in stored["B"].user_turns()] == ["A space adventure, please"]
    client.predict(api_name="/battle_satisfied_a")
    assert "has ended" in client.predict("More?", api_name="/battle_send_both")[-1]


def test_both_systems_answer_at_the_same_time(tmp_path, served):
    """Each system's reply waits until the other one has begun: sent one after the other, neither would
    answer (each would fail after the barrier's timeout and void the battle)."""
    from battle_support import FakeCatalogCRS, make_services

    started = threading.Barrier(2, timeout=10)

    class Meeting(FakeCatalogCRS):
        def respond(self, dialogue):
            started.wait()
            return super().respond(dialogue)

    services = make_services(tmp_path, [Meeting("alpha"), Meeting("beta")])
    try:
        client = Client(served(services), verbose=False)
        client.predict(api_name="/battle_start")
        out = client.predict("Anything with dragons?", api_name="/battle_send_both")
        for chat in (out[0], out[4]):
            assert "you might enjoy" in str(chat[-1]["content"])
        assert not any(d.errors() for d in services.store.list_dialogues())
    finally:
        services.store.close()
