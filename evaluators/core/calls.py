"""LLM calls with per-dialogue accounting and the retry-once rule.

`LLMClient.stats()` is process-wide; scoring several dialogues at once would
mix their numbers, so each dialogue keeps its own `CallLedger`.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence, TypeVar

from arena.llm import LLMClient, LLMError, LLMResponse, Message

T = TypeVar("T")


@dataclass
class CallLedger:
    calls: int = 0  # requests made (cache hits included)
    provider_calls: int = 0  # requests that reached the provider
    cache_hits: int = 0
    failures: int = 0
    unparsed: int = 0  # answers that could not be read
    prompt_tokens: int = 0  # of provider calls only: what re-scoring from cache does not cost
    completion_tokens: int = 0
    # Re-asks of an unreadable answer this dialogue may still make (None: no cap). A judge that only
    # writes unreadable answers once cost 58 calls for one short dialogue; the cap bounds that.
    retries_left: Optional[int] = None
    retries_refused: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def take_retry(self) -> bool:
        """Spend one retry of the dialogue's allowance; False when none is left."""
        with self._lock:
            if self.retries_left is None:
                return True
            if self.retries_left <= 0:
                self.retries_refused += 1
                return False
            self.retries_left -= 1
            return True

    def add(self, **deltas: int) -> None:
        with self._lock:
            for name, value in deltas.items():
                setattr(self, name, getattr(self, name) + value)

    def record(self, response: LLMResponse) -> None:
        if response.cached:
            self.add(calls=1, cache_hits=1)
        else:
            self.add(calls=1, provider_calls=1, prompt_tokens=response.prompt_tokens,
                     completion_tokens=response.completion_tokens)

    def as_dict(self) -> dict[str, int]:
        with self._lock:
            return {
                "calls": self.calls,
                "provider_calls": self.provider_calls,
                "cache_hits": self.cache_hits,
                "failures": self.failures,
                "unparsed": self.unparsed,
                "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens,
                "tokens": self.prompt_tokens + self.completion_tokens,
                "retries_refused": self.retries_refused,
            }


@dataclass
class Attempted:
    """What came of asking once (and maybe a second time)."""

    parsed: Any = None  # the parser's result, None when unreadable or failed
    text: str = ""  # the last answer's text
    attempts: int = 0
    error: Optional[str] = None


def ask_with_retry(
    client: LLMClient,
    messages: Sequence[Message],
    parse: Callable[[str], Optional[T]],
    repair_prompt: str,
    ledger: CallLedger,
    *,
    model: str,
    temperature: float,
    max_tokens: int,
    seed: Optional[int],
) -> Attempted:
    """Ask; if the answer cannot be parsed, ask once more (while the dialogue's `ledger` has retries
    left), then give up.

    The second request shows the model its unreadable answer and a short
    reminder of the format, with another seed. Its messages differ from the
    first request's, so it is not served the same cached answer, yet it is
    cached itself and re-scoring the dialogue still costs no calls.
    """
    outcome = Attempted()
    conversation = list(messages)
    for attempt in (1, 2):
        try:
            response = client.complete(
                conversation, model=model, temperature=temperature, max_tokens=max_tokens,
                seed=seed if attempt == 1 else (seed or 0) + attempt,
            )
        except LLMError as exc:
            ledger.add(calls=1, failures=1)
            outcome.error = f"LLM call failed: {exc}"
            return outcome
        ledger.record(response)
        outcome.attempts = attempt
        outcome.text = response.text
        outcome.parsed = parse(response.text)
        if outcome.parsed is not None:
            outcome.error = None
            return outcome
        ledger.add(unparsed=1)
        outcome.error = f"unreadable answer after {attempt} attempt(s)"
        if attempt == 1 and not ledger.take_retry():
            outcome.error += " (no retries left for this dialogue)"
            return outcome
        conversation = list(messages) + [
            {"role": "assistant", "content": response.text[:4000]},
            {"role": "user", "content": repair_prompt},
        ]
    return outcome
