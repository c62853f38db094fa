"""The one turn loop, used by the chat UI (a person types) and by simulators.

A turn is: the user's utterance is appended, the CRS is asked for a reply
under a time limit, and the reply (or the error, as an agent utterance with
`error` set and a polite text) is appended. Errors are recorded on the
dialogue, never swallowed. The dialogue ends at `max_turns` user turns.
"""

from __future__ import annotations

import concurrent.futures
import contextvars
import functools
import traceback
from typing import Callable, Optional, Protocol

from arena.dialogue import SENTIMENTS, Dialogue, Feedback, RecommendedItem, Sentiment, Utterance
from arena.conversation.simulator_interface import Simulator, StopDialogue

POLITE_ERROR = "Sorry, I ran into a problem and cannot answer right now. Please try again."
POLITE_TIMEOUT = "Sorry, I took too long to answer. Please try again."


class Responder(Protocol):
    def respond(self, dialogue: Dialogue) -> tuple[str, list[RecommendedItem]]: ...


class DialogueEnded(RuntimeError):
    pass


class MessageRejected(ValueError):
    """User input refused before it reaches the CRS (empty, too long)."""


# One shared pool for CRS calls: a call that overruns its timeout keeps its
# worker until it returns, so the pool is sized generously.
@functools.lru_cache(maxsize=1)
def _pool() -> concurrent.futures.ThreadPoolExecutor:
    return concurrent.futures.ThreadPoolExecutor(max_workers=64, thread_name_prefix="crs")


def validate_message(text: Optional[str], max_chars: int) -> str:
    text = (text or "").strip()
    if not text:
        raise MessageRejected("Please type a message first.")
    if len(text) > max_chars:
        raise MessageRejected(
            f"Your message is {len(text):,} characters long; the limit is {max_chars:,}. "
            "Please shorten it."
        )
    return text


def finish_dialogue(dialogue: Dialogue, sentiment: Sentiment, comment: str = "") -> Dialogue:
    """End a dialogue with the user's verdict (satisfied or frustrated)."""
    dialogue.feedback = Feedback(sentiment=sentiment, comment=(comment or "").strip()[:5000])
    dialogue.end("feedback")
    return dialogue


class DialogueRunner:
    def __init__(
        self,
        crs: Responder,
        *,
        max_turns: int = 20,
        turn_timeout_s: float = 120.0,
        max_message_chars: int = 2000,
        on_turn: Optional[Callable[[Dialogue], None]] = None,
    ):
        self.crs = crs
        self.max_turns = max_turns
        self.turn_timeout_s = turn_timeout_s
        self.max_message_chars = max_message_chars
        self.on_turn = on_turn

    def turns_left(self, dialogue: Dialogue) -> int:
        return max(0, self.max_turns - dialogue.num_turns)

    def user_turn(self, dialogue: Dialogue, text: str) -> Utterance:
        """Append the user's message and the CRS reply; returns the reply."""
        if dialogue.ended:
            raise DialogueEnded("This conversation has ended; start a new one.")
        if self.turns_left(dialogue) == 0:
            raise DialogueEnded(f"This conversation reached its limit of {self.max_turns} turns.")
        text = validate_message(text, self.max_message_chars)
        details = getattr(self.crs, "dialogue_details", None)
        if callable(details):  # recorded before the reply, so a failed turn still says how the system ran
            dialogue.metadata.update(details())
        dialogue.add_user(text)
        reply = self._ask_crs(dialogue)
        if self.turns_left(dialogue) == 0:
            dialogue.end("max_turns")
        if self.on_turn is not None:
            self.on_turn(dialogue)
        return reply

    def _ask_crs(self, dialogue: Dialogue) -> Utterance:
        # The CRS sees a snapshot, so a late answer can never write into the dialogue.
        snapshot = dialogue.model_copy(deep=True)
        # Run in the caller's context, so a check on the caller's LLM calls (arena.llm.call_guard) holds
        # there too.
        future = _pool().submit(contextvars.copy_context().run, self.crs.respond, snapshot)
        try:
            text, items = future.result(timeout=self.turn_timeout_s)
        except concurrent.futures.TimeoutError:
            future.cancel()
            return dialogue.add_agent(
                POLITE_TIMEOUT, error=f"timeout: no reply within {self.turn_timeout_s:g} s"
            )
        except Exception as exc:  # any CRS failure becomes a recorded, polite turn
            detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            return dialogue.add_agent(POLITE_ERROR, error=detail[:2000])
        if not isinstance(text, str):
            return dialogue.add_agent(POLITE_ERROR, error=f"CRS returned {type(text).__name__}, not text")
        state = self.crs.state_for(snapshot) if hasattr(self.crs, "state_for") else None
        return dialogue.add_agent(text.strip() or "...", items=list(items or []), state=state)

    def finish(self, dialogue: Dialogue, sentiment: Sentiment, comment: str = "") -> Dialogue:
        return finish_dialogue(dialogue, sentiment, comment)

    def run_simulated(self, dialogue: Dialogue, simulator: Simulator) -> Dialogue:
        """Drive a whole dialogue with a simulator until it stops or turns run out."""
        while not dialogue.ended:
            if self.turns_left(dialogue) == 0:
                dialogue.end("max_turns")
                break
            try:
                action = simulator.next_turn(dialogue)
            except Exception as exc:
                detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
                dialogue.metadata.setdefault("errors", []).append(f"simulator: {detail[:2000]}")
                dialogue.end("simulator_error")
                break
            if isinstance(action, StopDialogue):
                sentiment = SENTIMENTS.get(action.sentiment)
                if sentiment is not None:
                    dialogue.feedback = Feedback(sentiment=sentiment, comment=action.comment)
                dialogue.end(f"simulator_stop: {action.reason}")
                break
            try:
                self.user_turn(dialogue, action.text)
            except MessageRejected as exc:
                dialogue.metadata.setdefault("errors", []).append(f"simulator message rejected: {exc}")
                dialogue.end("simulator_error")
        return dialogue
