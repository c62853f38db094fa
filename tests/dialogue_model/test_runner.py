import threading
import time

import pytest

from arena.dialogue import Dialogue, RecommendedItem, Role, UserKind
from arena.conversation.runner import (
    POLITE_ERROR,
    POLITE_TIMEOUT,
    DialogueEnded,
    DialogueRunner,
    MessageRejected,
)
from arena.conversation.simulator_interface import StopDialogue, UserTurn


class EchoCRS:
    def __init__(self):
        self.seen = []

    def respond(self, dialogue):
        self.seen.append(len(dialogue.utterances))
        last = dialogue.utterances[-1].text
        return f"You said: {last}", [RecommendedItem(item_id="1", title="Heat (1995)")]


class BrokenCRS:
    def respond(self, dialogue):
        raise RuntimeError("model exploded")


class SlowCRS:
    def __init__(self):
        self.release = threading.Event()

    def respond(self, dialogue):
        self.release.wait(5)
        dialogue.add_agent("late write into the snapshot")
        return "too late", []


def test_turn_appends_user_and_agent():
    crs = EchoCRS()
    d = Dialogue(crs_id="echo")
    reply = DialogueRunner(crs).user_turn(d, "  hello  ")
    assert [u.role for u in d.utterances] == [Role.USER, Role.AGENT]
    assert d.utterances[0].text == "hello"
    assert reply.text == "You said: hello"
    assert reply.items[0].title == "Heat (1995)"
    assert crs.seen == [1]


@pytest.mark.parametrize("text", ["", "   ", None])
def test_empty_message_is_refused_and_nothing_is_added(text):
    d = Dialogue(crs_id="echo")
    with pytest.raises(MessageRejected, match="type a message"):
        DialogueRunner(EchoCRS()).user_turn(d, text)
    assert d.utterances == []


def test_long_message_is_refused_with_the_limit_in_the_message():
    d = Dialogue(crs_id="echo")
    with pytest.raises(MessageRejected, match="limit is 10"):
        DialogueRunner(EchoCRS(), max_message_chars=10).user_turn(d, "x" * 11)
    assert d.utterances == []


def test_crs_error_is_recorded_politely_not_swallowed():
    d = Dialogue(crs_id="broken")
    reply = DialogueRunner(BrokenCRS()).user_turn(d, "hi")
    assert reply.text == POLITE_ERROR
    assert "model exploded" in reply.error
    assert d.errors() == [reply.error]


def test_timeout_is_recorded_and_late_answer_cannot_touch_dialogue():
    crs = SlowCRS()
    d = Dialogue(crs_id="slow")
    started = time.monotonic()
    reply = DialogueRunner(crs, turn_timeout_s=0.2).user_turn(d, "hi")
    assert time.monotonic() - started < 2
    assert reply.text == POLITE_TIMEOUT and reply.error.startswith("timeout")
    crs.release.set()
    time.sleep(0.1)
    assert len(d.utterances) == 2


def test_max_turns_ends_the_dialogue():
    d = Dialogue(crs_id="echo")
    runner = DialogueRunner(EchoCRS(), max_turns=2)
    runner.user_turn(d, "one")
    assert not d.ended
    runner.user_turn(d, "two")
    assert d.ended and d.end_reason == "max_turns"
    with pytest.raises(DialogueEnded):
        runner.user_turn(d, "three")


class ScriptedSimulator:
    def __init__(self, actions):
        self.actions = list(actions)

    def next_turn(self, dialogue):
        return self.actions.pop(0)


def test_simulated_run_stops_on_explicit_stop_with_sentiment():
    d = Dialogue(crs_id="echo")
    d.user.kind = UserKind.SIMULATOR
    sim = ScriptedSimulator([UserTurn("hi"), UserTurn("more"), StopDialogue("found one", "satisfied", "great")])
    DialogueRunner(EchoCRS()).run_simulated(d, sim)
    assert d.num_turns == 2
    assert d.feedback.sentiment == "satisfied" and d.feedback.comment == "great"
    assert d.end_reason == "simulator_stop: found one"


def test_simulated_run_respects_max_turns_and_records_simulator_errors():
    d = Dialogue(crs_id="echo")
    DialogueRunner(EchoCRS(), max_turns=3).run_simulated(d, ScriptedSimulator([UserTurn("x")] * 10))
    assert d.num_turns == 3 and d.end_reason == "max_turns" and d.feedback is None

    class Exploding:
        def next_turn(self, dialogue):
            raise ValueError("no goal")

    d2 = Dialogue(crs_id="echo")
    DialogueRunner(EchoCRS()).run_simulated(d2, Exploding())
    assert d2.end_reason == "simulator_error"
    assert "no goal" in d2.metadata["errors"][0]
