"""Drive the real app over HTTP with gradio_client: ChatCRS on the fake LLM, a real store."""

import pytest
from gradio_client import Client

from arena.runtime.config import Settings
from arena.llm import FakeProvider, LLMClient
from webapp.services import build_services


@pytest.fixture
def services(tmp_path, embedding_cache):
    settings = Settings.from_env(
        {"ARENA_LLM_PROVIDER": "fake"},
        db_path=tmp_path / "arena.sqlite3",
        cache_dir=embedding_cache,
        max_turns=3,
        max_message_chars=200,
    )
    # LLM-led ChatCRS shows the catalog items its reply names.
    llm = LLMClient(FakeProvider(default="Here is something you might enjoy: Interstellar (2014) <script>alert(1)</script>"))
    return build_services(settings, llm=llm, metrics="")


def test_chat_is_stored_with_feedback_and_rendered_safely(services, launched):
    client = Client(launched(services), verbose=False)
    client.predict("chatcrs_redial", api_name="/chat_start")
    out = client.predict("I love space adventures like Star Wars", api_name="/chat_send")
    history = out[0]
    assert history[0]["role"] == "user"
    reply = history[-1]["content"]
    reply_text = reply if isinstance(reply, str) else str(reply)
    assert "<script>" not in reply_text
    client.predict("Great, thanks!", api_name="/chat_send")
    client.predict("loved it", api_name="/chat_satisfied")

    stored = services.store.list_dialogues()
    assert len(stored) == 1
    d = stored[0]
    assert d.crs_id == "chatcrs_redial"
    assert d.num_turns == 2
    assert d.feedback.sentiment == "satisfied" and d.feedback.comment == "loved it"
    assert [i.title for i in d.agent_turns()[0].items] == ["Interstellar (2014)"], "ChatCRS shows what it names"
    assert d.agent_turns()[0].text.startswith("Here is something")


def test_bad_messages_are_refused_clearly_and_nothing_is_lost(services, launched):
    client = Client(launched(services), verbose=False)
    client.predict("chatcrs_redial", api_name="/chat_start")
    client.predict("a comedy please", api_name="/chat_send")
    for bad, expected in (("   ", "type a message"), ("x" * 201, "limit is 200")):
        status = client.predict(bad, api_name="/chat_send")[2]  # a status line, not an error
        assert expected in status
    d = services.store.list_dialogues()[0]
    assert d.num_turns == 1 and d.feedback is None
    client.predict("", api_name="/chat_frustrated")
    assert "already rated this conversation (frustrated)" in client.predict("", api_name="/chat_satisfied")[2]
    assert "has ended" in client.predict("one more", api_name="/chat_send")[2]  # never a silent new one
    (d,) = services.store.list_dialogues()
    assert d.num_turns == 1 and d.feedback.sentiment == "frustrated"


def test_the_limit_is_announced_and_never_starts_a_new_conversation(services, launched):
    client = Client(launched(services), verbose=False)  # max_turns=3
    client.predict("chatcrs_redial", api_name="/chat_start")
    statuses = [client.predict(f"message {i}", api_name="/chat_send")[2] for i in range(3)]
    assert "one more message" in statuses[1] and "limit of 3 messages" in statuses[2]
    assert "limit of 3 messages" in client.predict("a fourth", api_name="/chat_send")[2]
    (d,) = services.store.list_dialogues()
    assert d.num_turns == 3 and d.end_reason == "max_turns"
    client.predict("", api_name="/chat_satisfied")  # the capped conversation is still rated
    assert services.store.get_dialogue(d.dialogue_id).feedback.sentiment == "satisfied"


def test_two_sessions_never_see_each_other(services, launched):
    url = launched(services)
    alice, bob = Client(url, verbose=False), Client(url, verbose=False)
    alice.predict("chatcrs_redial", api_name="/chat_start")
    bob.predict("chatcrs_opendialkg", api_name="/chat_start")
    a_hist = alice.predict("alice wants horror", api_name="/chat_send")[0]
    b_hist = bob.predict("bob wants romance", api_name="/chat_send")[0]
    assert all("bob" not in str(m["content"]) for m in a_hist)
    assert all("alice" not in str(m["content"]) for m in b_hist)
    alice.predict("", api_name="/chat_frustrated")
    dialogues = {d.crs_id: d for d in services.store.list_dialogues()}
    assert dialogues["chatcrs_redial"].feedback.sentiment == "frustrated"
    assert dialogues["chatcrs_opendialkg"].feedback is None
    assert dialogues["chatcrs_redial"].user.id != dialogues["chatcrs_opendialkg"].user.id


def test_finished_chat_is_scored_in_the_background(tmp_path, embedding_cache, launched):
    settings = Settings.from_env(
        {"ARENA_LLM_PROVIDER": "fake"}, db_path=tmp_path / "scored.sqlite3", cache_dir=embedding_cache
    )
    llm = LLMClient(FakeProvider(default="You could watch one of these."))
    services = build_services(settings, llm=llm, metrics="acts,rdl,srrr,sr")
    client = Client(launched(services), verbose=False)
    client.predict("chatcrs_redial", api_name="/chat_start")
    client.predict("Recommend me a scary horror movie", api_name="/chat_send")
    client.predict("Thanks, I'll watch the first one!", api_name="/chat_send")
    client.predict("", api_name="/chat_satisfied")
    services.scorer.wait()
    stored = services.store.list_dialogues()[0]
    assert {"rdl", "srrr", "sr"} <= set(stored.scores)
    rdl = stored.scores["rdl"]
    assert rdl.value is not None and 0 <= rdl.value <= 1
    assert "offline" in rdl.version  # the annotator that produced the acts is recorded
    words = client.predict(api_name="/chat_scores")[0]
    assert "Pace:" in words and "in 4 messages" in words  # plain words for the participant
    assert "offline" not in words and "rdl" not in words  # no metric ids or version strings
