"""ChatCRS with a scripted LLM, the real catalog linker and the real embedding model."""

from __future__ import annotations

import pytest
from dialogue_helpers import dialogue

from arena.catalogs import retrieval
from arena.catalogs.catalog import Catalog
from arena.dialogue import Dialogue, RecommendedItem
from arena.llm import FakeProvider, LLMClient, LLMError, LLMRequest, RetryPolicy, TransientLLMError
from arena.conversation.runner import POLITE_ERROR, DialogueRunner
from arena.conversation.crs_interface import TOP_K_KEPT, TOP_K_SHOWN, CRSUnavailable
from crs.chatcrs import PROMPT_PATH, ChatCRS, chatcrs_specs, clean_reply
from crs.registry import CRSRegistry


class Recorder:
    """A fake LLM answering `reply` (text or function of the request), or a fixed script."""

    def __init__(self, reply="Sure, happy to help!", script=None):
        self.reply = reply
        self.provider = FakeProvider(script if script is not None else self._answer)
        self.client = LLMClient(self.provider, retry=RetryPolicy(base_delay_s=0.01))

    def _answer(self, request: LLMRequest) -> str:
        return self.reply(request) if callable(self.reply) else self.reply

    @property
    def system(self) -> str:
        return self.provider.requests[-1].messages[0][1]




@pytest.fixture
def make_crs(small_redial: Catalog, retriever):
    def build(reply="Sure, happy to help!", script=None) -> tuple[ChatCRS, Recorder]:
        llm = Recorder(reply, script)
        return ChatCRS("chatcrs_redial", small_redial, retriever, llm.client), llm

    return build


def test_greeting_gets_a_question_and_no_items(make_crs):
    crs, llm = make_crs("Hi! What kind of movie are you in the mood for?")
    text, items = crs.respond(dialogue("Hello there"))
    assert text == "Hi! What kind of movie are you in the mood for?"
    assert items == []
    assert "Titles from the catalog" not in llm.system  # no preference yet: nothing offered
    assert llm.system.startswith(PROMPT_PATH.read_text().splitlines()[0].replace("{item_kind}", "movies"))


def test_preference_gets_real_catalog_items_offered_to_the_llm(make_crs, small_redial: Catalog):
    crs, llm = make_crs()
    state = crs.analyse(dialogue("I want a space adventure with aliens and spaceships"))
    offered = crs.candidates(dialogue("I want a space adventure with aliens and spaceships"), state)
    assert sum("sci-fi" in item.genres for item in offered[:TOP_K_SHOWN]) >= 3
    first, second = offered[0], offered[1]
    llm.reply = f"Try {second.label}, or else {first.label}."
    text, items = crs.respond(dialogue("I want a space adventure with aliens and spaceships"))
    assert [i.item_id for i in items] == [second.item_id, first.item_id]  # in the order named
    assert all(small_redial.get(i.item_id).label == i.title for i in items)
    assert first.label in llm.system and second.label in llm.system
    request = llm.provider.requests[-1]
    assert [role for role, _ in request.messages] == ["system", "user"]
    assert request.messages[-1][1] == "I want a space adventure with aliens and spaceships"


def test_reply_never_carries_html_and_items_stay_separate(make_crs):
    crs, _ = make_crs('<p>Try <b>Alien</b>!</p><script>alert("x")</script><img src=x onerror=y> Enjoy <3')
    text, items = crs.respond(dialogue("Recommend me a scary space movie"))
    assert "<" not in text and ">" not in text
    assert text.startswith("Try Alien!")  # linked; a correct bare title stays as written
    assert [i.title for i in items] == ["Alien (1979)"] and isinstance(items[0], RecommendedItem)


def test_mentioned_and_already_shown_items_are_excluded(make_crs, small_redial: Catalog):
    crs, _ = make_crs()
    matrix = small_redial.find_title("The Matrix (1999)")
    alien = small_redial.find_title("Alien (1979)")
    shown = [alien.to_recommended()]
    d = dialogue(
        "Something like The Matrix please",
        "How about Alien (1979)?",
        "I have seen that one, anything else in space?",
        items_after={1: shown},
    )
    ranking = crs.rank(d)
    assert len(ranking) <= TOP_K_KEPT
    assert not {item.item_id for item, _ in ranking} & {matrix.item_id, alien.item_id}


def test_disliked_titles_push_the_ranking_away(make_crs, small_redial: Catalog):
    crs, _ = make_crs()
    titanic = small_redial.find_title("Titanic (1997)")
    state = crs.analyse(dialogue("I hated Titanic, but I loved Alien"))
    liked = {item.label: ok for _, item, ok in state.mentioned}
    assert liked == {"Titanic (1997)": False, "Alien (1979)": True}
    assert titanic.item_id in state.excluded()


def test_reaction_to_recommendations_recommends_again(make_crs, small_redial: Catalog):
    crs, llm = make_crs()
    shown = [small_redial.find_title("Toy Story (1995)").to_recommended()]
    d = dialogue("hey", "Hi! Maybe Toy Story?", "hmm, not sure", items_after={1: shown})
    _, items = crs.respond(d)
    assert items == []  # the scripted reply names no title
    assert "Already suggested: Toy Story (1995)" in llm.system
    assert crs.candidates(d) and shown[0].item_id not in {i.item_id for i in crs.candidates(d)}
    assert [role for role, _ in llm.provider.requests[-1].messages] == ["system", "user", "assistant", "user"]


def test_llm_failures_propagate(make_crs):
    crs, _ = make_crs(script=[LLMError("quota exhausted")] + [TransientLLMError("overloaded")] * 5)
    with pytest.raises(LLMError, match="quota exhausted"):
        crs.respond(dialogue("I like comedies"))
    with pytest.raises(LLMError, match="after 5 attempts"):
        crs.respond(dialogue("I like comedies"))


def test_an_empty_reply_is_an_error(make_crs):
    crs, _ = make_crs("   <br>  ")
    with pytest.raises(LLMError, match="empty reply"):
        crs.respond(dialogue("I like comedies"))


def test_runner_records_llm_failure_politely(make_crs):
    crs, _ = make_crs(script=["Welcome! What do you like?", LLMError("server said no")])
    runner = DialogueRunner(crs, max_turns=5, turn_timeout_s=60)
    d = Dialogue(crs_id=crs.name)
    runner.user_turn(d, "hello")
    reply = runner.user_turn(d, "I like horror")
    assert reply.text == POLITE_ERROR and "server said no" in reply.error
    assert d.agent_turns()[0].text == "Welcome! What do you like?"


def test_clean_reply():
    assert clean_reply("Assistant: <i>Hello</i>\n\n\n\nthere") == "Hello\n\nthere"
    long = "This is a sentence. " * 200
    cleaned = clean_reply(long)
    assert len(cleaned) <= 1200 and cleaned.endswith(".")


def test_specs_check_load_and_serve_through_the_registry(small_redial: Catalog, retriever):
    llm = Recorder("How about one of these?")
    # Same cache folder as the session's retriever: loading reads its embeddings from disk.
    specs = chatcrs_specs(lambda: llm.client, retriever.cache_dir, catalog_loader=lambda name: small_redial)
    assert [s.name for s in specs] == ["chatcrs_redial", "chatcrs_opendialkg"]
    assert {s.family for s in specs} == {"chatcrs"} and [s.dataset for s in specs] == ["redial", "opendialkg"]
    assert all(s.check() is None for s in specs)
    registry = CRSRegistry(specs[:1])
    crs = registry.get("chatcrs_redial")
    assert isinstance(crs, ChatCRS) and crs.retriever.loaded_from_cache is True
    text, items = crs.respond(dialogue("a haunted house horror movie"))
    assert crs.mode == "llm_led"  # the fake provider is not the bundled model
    assert text == "How about one of these?" and items == []


def test_check_reports_a_missing_embedding_package(monkeypatch, tmp_path):
    real_find_spec = retrieval.importlib.util.find_spec
    monkeypatch.setattr(
        retrieval.importlib.util,
        "find_spec",
        lambda name, *a: None if name == "sentence_transformers" else real_find_spec(name, *a),
    )
    spec = chatcrs_specs(lambda: pytest.fail("no LLM needed for a check"), tmp_path)[0]
    problem = spec.check()
    assert isinstance(problem, CRSUnavailable)
    assert "sentence-transformers" in problem.reason
    assert problem.fix.startswith("pip install")
