"""Simulated users say only what a person would: no role labels or prompt pieces, no copied system
sentences, not the recommender's part; and a simulator failure is never a user's verdict."""

from __future__ import annotations

import itertools
import re

import pytest
from sim_fakes import AttributeCRS, ScriptedCRS, fake_llm

from arena.dialogue import Dialogue, Feedback, RecommendedItem, Role
from arena.llm import LLMRequest, TransientLLMError
from arena.conversation.runner import DialogueRunner
from simulators import build_simulator
from simulators.base import unusable_user_text

# What small models wrote as the user in offline runs, and plain messages.
BAD = [
    "You: (The recommender suggested Jumanji) I like it.",
    "Chat History: User: hi Recommender: hello",
    "Recommender: Have you seen Alien?",
    "I would recommend you watch a comedy tonight.",
    "Here are some movies you might like.",
    "As an AI language model I cannot have preferences.",
]
GOOD = [
    "I'd like a funny movie from the 90s, nothing too scary.",
    "Seen that one already. Something with Tom Hanks?",
    "Is it suitable for my kids?",
]
SYSTEM_SENTENCE = "Could you tell me a genre or an actor you like?"  # what AttributeCRS asks
ROLE_LABEL = re.compile(r"\b(you|user|seeker|recommender|system|assistant|chat history)\s*:|\(the recommender",
                        re.IGNORECASE)


@pytest.mark.parametrize("text", BAD)
def test_prompt_pieces_and_the_recommenders_part_are_unusable(text):
    assert unusable_user_text(text) is not None


@pytest.mark.parametrize("text", GOOD)
def test_plain_messages_are_usable(text):
    assert unusable_user_text(text) is None


def test_a_copied_system_sentence_is_unusable():
    d = Dialogue(crs_id="s")
    d.add_user("hi")
    d.add_agent("Hello! " + SYSTEM_SENTENCE)
    assert unusable_user_text("Sure. Could you tell me a genre or an actor you like?", d) is not None
    assert unusable_user_text("I like westerns with Clint Eastwood.", d) is None


def leaky_responder():
    """Every simulator message the model writes is bad, in turn each of the ways above."""
    bad = itertools.cycle(BAD + [SYSTEM_SENTENCE])

    def respond(request: LLMRequest) -> str:
        system, user = request.messages[0][1], request.messages[-1][1]
        if "judge conversations" in system:
            return "CONTINUE"
        if "Answer in JSON" in user:
            return '{"opinions": []}'
        return next(bad)

    return respond


def copies(text: str, replies: list[str], n: int = 6) -> bool:
    words = re.findall(r"[a-z']+", text.lower())
    grams = {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}
    for reply in replies:
        reply_words = re.findall(r"[a-z']+", reply.lower())
        if grams & {tuple(reply_words[i:i + n]) for i in range(len(reply_words) - n + 1)}:
            return True
    return False


@pytest.mark.parametrize("kind", ["llm_us", "target_biased"])
def test_no_generated_turn_leaks_a_prompt_or_copies_the_system(view, kind):
    llm = fake_llm(leaky_responder())
    said = 0
    for seed in range(8):
        sim = build_simulator(kind, catalog=view, seed=seed, llm=llm)
        d = DialogueRunner(AttributeCRS(view), max_turns=6).run_simulated(Dialogue(crs_id="a"), sim)
        for n, turn in enumerate(d.utterances):
            if turn.role != Role.USER:
                continue
            said += 1
            earlier_replies = [u.text for u in d.utterances[:n] if u.role == Role.AGENT]
            assert not ROLE_LABEL.search(turn.text), turn.text
            assert not copies(turn.text, earlier_replies), turn.text
    assert said >= 16


def test_a_simulator_failure_is_a_failed_dialogue_without_a_verdict(view):
    llm = fake_llm([TransientLLMError("HTTP 503")] * 5, max_retries=1)
    sim = build_simulator("llm_us", catalog=view, seed=1, llm=llm)
    d = DialogueRunner(ScriptedCRS([("hi", [])]), max_turns=5).run_simulated(Dialogue(crs_id="s"), sim)
    sim.finalize(d)
    assert d.end_reason == "simulator_error" and d.metadata["errors"]
    assert d.feedback is None and d.metadata["simulator_failed"] is True


def test_a_satisfied_verdict_after_an_ignored_question_is_lowered(view):
    films = [f for f in view.all() if f.genres][:3]
    items = [RecommendedItem(item_id=f.item_id, title=f.display_title) for f in films]
    llm = fake_llm(lambda request: "CONTINUE")
    sim = build_simulator("llm_us", catalog=view, seed=3, llm=llm)
    d = Dialogue(crs_id="s")
    d.add_user("a comedy please")
    d.add_agent("Try these.", items=items[:1])
    d.add_user(f"What is {films[0].title} about?")
    d.add_agent("Or these.", items=items[1:])
    d.end("simulator_stop: goal reached")
    d.feedback = Feedback(sentiment="satisfied", comment="Found it.")
    sim.finalize(d)
    assert d.feedback.sentiment == "frustrated" and d.metadata["ignored_user_turns"]


def test_an_answered_question_leaves_the_verdict_alone(view):
    film = next(f for f in view.all() if f.genres)
    item = RecommendedItem(item_id=film.item_id, title=film.display_title)
    sim = build_simulator("llm_us", catalog=view, seed=3, llm=fake_llm(lambda request: "CONTINUE"))
    d = Dialogue(crs_id="s")
    d.add_user("a comedy please")
    d.add_agent("Try this.", items=[item])
    d.add_user(f"What is {film.title} about?")
    d.add_agent("It is about a family.", items=[item])
    d.feedback = Feedback(sentiment="satisfied", comment="Found it.")
    sim.finalize(d)
    assert d.feedback.sentiment == "satisfied" and d.metadata["ignored_user_turns"] == []


def test_a_turned_down_title_shown_again_counts_as_ignored(view):
    film = next(f for f in view.all() if f.genres)
    item = RecommendedItem(item_id=film.item_id, title=film.display_title)
    sim = build_simulator("llm_us", catalog=view, seed=3, llm=fake_llm(lambda request: "CONTINUE"))
    d = Dialogue(crs_id="s")
    d.add_user("a comedy please")
    d.add_agent("Try this.", items=[item])
    d.add_user(f"I didn't like {film.title}, something else")
    d.add_agent("Try this one.", items=[item])
    d.feedback = Feedback(sentiment="satisfied", comment="")
    sim.finalize(d)
    assert d.feedback.sentiment == "frustrated"
    assert d.metadata["ignored_user_turns"] == [f"turned down, then shown again: {film.display_title}"]
