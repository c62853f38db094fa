"""All six systems load from checkpoints in the published layout and answer
dialogues through the real path: entity linking, policy, generation,
recommendation, catalog items."""

from __future__ import annotations

import threading

import pytest

from arena.catalogs.catalog import load_catalog
from arena.dialogue import Dialogue, RecommendedItem
from arena.conversation.runner import DialogueRunner
from arena.conversation.crs_interface import TOP_K_KEPT, TOP_K_SHOWN, ConversationalRecommender
from crs.neural import VARIANTS, NeuralReply, neural_specs

USER_TURNS = [
    "Hi! I'm looking for a movie like Super Troopers (2001)",
    "I like scary movies, have you seen The Shining?",
    "Something with Brad Pitt would be great",
    "Sure, what else do you have?",
    "Thanks, anything with Tom Hanks?",
]


def converse(crs, name: str, turns=USER_TURNS) -> tuple[Dialogue, list[NeuralReply]]:
    dialogue = Dialogue(crs_id=name)
    replies = []
    for text in turns:
        dialogue.add_user(text)
        reply = crs.reply(dialogue)
        dialogue.add_agent(reply.text, reply.items)
        replies.append(reply)
    return dialogue, replies


@pytest.mark.parametrize("name", list(VARIANTS))
def test_each_system_chats_and_recommends_catalog_items(registry, name):
    crs = registry.get(name)
    assert isinstance(crs, ConversationalRecommender) and crs.name == name
    _, replies = converse(crs, name)
    options = crs.options
    # The policy penalises letters already chosen, so within as many turns as there
    # are letters every letter (and so "recommend", the last one) is chosen once.
    assert sorted(r.option for r in replies[: len(options)]) == sorted(options)
    recommended = [r for r in replies if r.action == "recommend"]
    chats = [r for r in replies if r.action == "chat"]
    assert recommended and chats
    for reply in recommended:
        assert len(reply.items) == TOP_K_SHOWN and len(reply.ranking) == TOP_K_KEPT
        assert reply.items == reply.ranking[:TOP_K_SHOWN]
        assert len({item.item_id for item in reply.ranking}) == TOP_K_KEPT
        for index, item in enumerate(reply.items, 1):
            assert f"{index}. {item.title}" in reply.text
    for reply in chats:
        assert isinstance(reply.text, str) and reply.items == []
    catalog = load_catalog(VARIANTS[name].dataset)
    for item in recommended[0].ranking:
        assert catalog.get(item.item_id).label == item.title  # real catalog items, by KG entity id


def test_respond_follows_the_interface_through_the_runner(registry):
    crs = registry.get("kbrd_redial")
    runner = DialogueRunner(crs, max_turns=5, turn_timeout_s=120)
    dialogue = Dialogue(crs_id="kbrd_redial")
    for text in USER_TURNS[:4]:
        reply = runner.user_turn(dialogue, text)
        assert reply.error is None
    items = dialogue.recommended_items()
    assert items and all(isinstance(i, RecommendedItem) for i in items)


def test_replies_are_deterministic_and_policy_state_is_recomputed(registry, tiny_settings, hf_cache, test_options):
    name = "unicrs_redial"
    first_dialogue, first = converse(registry.get(name), name)
    # A fresh instance (nothing memoised) given the same history must choose the same way.
    fresh = next(s for s in neural_specs(tiny_settings, options=test_options, hf_cache_dir=hf_cache)
                 if s.name == name).load()
    history = Dialogue(crs_id=name, utterances=first_dialogue.utterances[:-1])
    again = fresh.reply(history)
    assert (again.option, again.text, again.items) == (first[-1].option, first[-1].text, first[-1].items)


def test_barcor_sets_and_kbrd_adds_the_penalty(registry):
    for name, accumulate in (("barcor_redial", False), ("kbrd_redial", True), ("unicrs_opendialkg", True)):
        assert registry.get(name).accumulate_penalty is accumulate


def test_entities_are_linked_and_windowed(registry):
    crs = registry.get("kbrd_redial")
    dialogue = Dialogue(crs_id="kbrd_redial")
    dialogue.add_user("I loved Super Troopers (2001) and anything with Tom Hanks")
    turns, _ = crs._turns(dialogue)
    entities = crs._entities(turns)
    assert crs.kg.entity2id["Super Troopers (2001)"] in entities
    assert crs.kg.entity2id["Tom Hanks"] in entities
    many = Dialogue(crs_id="kbrd_redial")
    for _ in range(40):
        many.add_user("Tom Hanks")
    assert len(crs._entities(crs._turns(many)[0])) == VARIANTS["kbrd_redial"].entity_max_length


def test_recommend_ranks_items_from_the_catalog(registry):
    crs = registry.get("barcor_opendialkg")
    dialogue = Dialogue(crs_id="barcor_opendialkg")
    dialogue.add_user("Any good fantasy books?")
    ranking = crs.recommend(dialogue, k=20)
    assert len(ranking) == 20 and len({r.item_id for r in ranking}) == 20
    assert all(r.title for r in ranking)


def test_loaders_are_shared_and_thread_safe(tiny_settings, hf_cache, test_options):
    from crs.registry import CRSRegistry

    registry = CRSRegistry(neural_specs(tiny_settings, options=test_options, hf_cache_dir=hf_cache))
    got, errors = [], []

    def load():
        try:
            got.append(registry.get("unicrs_opendialkg"))
        except Exception as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=load) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors and len({id(x) for x in got}) == 1
    # Both UniCRS systems share one DialoGPT (same base, same added-token count).
    assert registry.get("unicrs_redial").gpt2 is got[0].gpt2

    replies = {}

    def chat(index):
        dialogue = Dialogue(crs_id="unicrs_opendialkg")
        dialogue.add_user(USER_TURNS[index])
        replies[index] = got[0].respond(dialogue)

    workers = [threading.Thread(target=chat, args=(i,)) for i in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    for index in range(3):
        dialogue = Dialogue(crs_id="unicrs_opendialkg")
        dialogue.add_user(USER_TURNS[index])
        assert got[0].respond(dialogue) == replies[index]


def test_reply_length_is_bounded(registry, test_options):
    crs = registry.get("barcor_redial")
    assert crs.runtime.response_limit(crs.variant.resp_max_length - 1) == test_options.max_new_tokens
    dialogue = Dialogue(crs_id="barcor_redial")
    dialogue.add_user(USER_TURNS[0])
    inputs = crs.prepare(*(lambda t: (t, crs._entities(t)))(crs._turns(dialogue)[0]))
    text = crs.generate(inputs)
    assert len(crs.encoder.ids(text)) <= test_options.max_new_tokens + 2


def test_failed_replies_are_not_part_of_the_history(registry):
    crs = registry.get("kbrd_opendialkg")
    clean = Dialogue(crs_id="kbrd_opendialkg")
    clean.add_user(USER_TURNS[0])
    with_error = clean.model_copy(deep=True)
    with_error.add_agent("Sorry, I ran into a problem.", error="RuntimeError: boom")
    for dialogue in (clean, with_error):
        dialogue.add_user(USER_TURNS[1])
    assert crs.reply(with_error) == crs.reply(clean)


@pytest.mark.parametrize("name", ["kbrd_redial", "unicrs_opendialkg"])
def test_generated_chat_names_no_title_it_does_not_show(registry, name, monkeypatch):
    """The generator's words pass the one title check: a chat reply shows no items, so a sentence
    naming a catalog title is dropped (and a reply left empty gets a neutral question)."""
    crs = registry.get(name)
    title = next(item.label for item in load_catalog(VARIANTS[name].dataset).items if len(item.label.split()) >= 4)
    monkeypatch.setattr(crs, "generate", lambda inputs: f"You should watch {title}. What genres do you like?")
    monkeypatch.setattr(crs, "_choose", lambda inputs, state: (crs.options[0], state))
    dialogue = Dialogue(crs_id=name)
    dialogue.add_user(USER_TURNS[0])
    reply = crs.reply(dialogue)
    assert reply.action == "chat" and reply.items == []
    assert reply.text == "What genres do you like?"
    monkeypatch.setattr(crs, "generate", lambda inputs: f"{title} is a great one.")
    assert crs.reply(dialogue).text == "What kind of movie are you in the mood for?"
