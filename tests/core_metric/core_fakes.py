"""Scripted judges and debaters for the CoRE tests (fake LLM only in tests)."""

from __future__ import annotations

import re
import threading
import time
from typing import Callable, Optional, Union

from arena.dialogue import Dialogue, RecommendedItem
from arena.llm import FakeProvider, LLMClient, LLMRequest, RetryPolicy
from arena.llm.cache import ResponseCache
from evaluators.core.factors import FACTORS, ROLES

_FACTOR_NAMES = {f.name: f.key for f in FACTORS}
_ROLE_NAMES = {r.name: r.key for r in ROLES}


def sample_dialogue(**metadata) -> Dialogue:
    d = Dialogue(crs_id="unicrs_redial", metadata=dict(metadata))
    d.add_user("Hi! I'd like a scary movie for tonight, something like The Conjuring.")
    d.add_agent("You might enjoy Insidious, it is by the same director.",
                items=[RecommendedItem(item_id="m1", title="Insidious (2010)"),
                       RecommendedItem(item_id="m2", title="Sinister (2012)")])
    d.add_user("Seen it. Anything older?")
    d.add_agent("Try The Shining or The Exorcist, both classics.",
                items=[RecommendedItem(item_id="m3", title="The Shining (1980)"),
                       RecommendedItem(item_id="m1", title="Insidious (2010)")])
    d.add_user("Great, thanks!")
    return d


def system_text(request: LLMRequest) -> str:
    return request.messages[0][1]


def user_text(request: LLMRequest) -> str:
    return request.messages[1][1]


def factor_of(request: LLMRequest) -> Optional[str]:
    match = re.search(r"Factor under evaluation: (.+)", system_text(request))
    return _FACTOR_NAMES[match.group(1).strip()] if match else None


def role_of(request: LLMRequest) -> Optional[str]:
    match = re.search(r"YOUR ROLE: (.+?)\.", system_text(request))
    return _ROLE_NAMES[match.group(1).strip()] if match else None


def round_of(request: LLMRequest) -> int:
    return int(re.search(r"Round (\d+) of at most", user_text(request)).group(1))


def is_retry(request: LLMRequest) -> bool:
    return len(request.messages) > 2


Answer = Union[str, Exception]


class Script:
    """Answers by request kind: `judge(factor, model, retry)` and `debate(role, round, model)`."""

    def __init__(
        self,
        judge: Optional[Callable[[str, str, bool], Answer]] = None,
        debate: Optional[Callable[[str, int, str], Answer]] = None,
    ):
        self.judge = judge or (lambda factor, model, retry: f"The {factor} looks decent.\n<rating>3</rating>")
        self.debate = debate or (
            lambda role, rnd, model: f'{{"evaluator": "{role}", "statement": "fine", "score": 60}}'
        )

    def __call__(self, request: LLMRequest) -> Answer:
        factor = factor_of(request)
        if factor is not None:
            return self.judge(factor, request.model, is_retry(request))
        role = role_of(request)
        assert role is not None, "request is neither a judge nor a debate call"
        return self.debate(role, round_of(request), request.model)


class SleepyProvider:
    """A FakeProvider whose answers take `delay_s`, slept outside any lock.

    Tracks how many requests overlapped, overall and per kind (judge/debate).
    """

    name = "fake"

    def __init__(self, script: Callable[[LLMRequest], Answer], delay_s: float):
        self.inner = FakeProvider(script)
        self.default_model = self.inner.default_model
        self.delay_s = delay_s
        self.in_flight = {"all": 0, "judge": 0, "debate": 0}
        self.max_in_flight_by_kind = {"all": 0, "judge": 0, "debate": 0}
        self._lock = threading.Lock()

    @property
    def requests(self) -> list[LLMRequest]:
        return self.inner.requests

    @property
    def max_in_flight(self) -> int:
        return self.max_in_flight_by_kind["all"]

    def _move(self, kinds, step):
        with self._lock:
            for kind in kinds:
                self.in_flight[kind] += step
                self.max_in_flight_by_kind[kind] = max(self.max_in_flight_by_kind[kind], self.in_flight[kind])

    def complete(self, request, timeout_s):
        kinds = ("all", "debate" if role_of(request) else "judge")
        self._move(kinds, 1)
        try:
            time.sleep(self.delay_s)
            return self.inner.complete(request, timeout_s)
        finally:
            self._move(kinds, -1)


def make_client(script, *, cache_dir=None, concurrency: int = 16, provider=None) -> LLMClient:
    provider = provider or FakeProvider(script)
    cache = ResponseCache(cache_dir) if cache_dir is not None else None
    return LLMClient(provider, retry=RetryPolicy(base_delay_s=0.01), concurrency=concurrency, cache=cache)


def judge_requests(client: LLMClient) -> list[LLMRequest]:
    return [r for r in client.provider.requests if factor_of(r) is not None]


def debate_requests(client: LLMClient) -> list[LLMRequest]:
    return [r for r in client.provider.requests if role_of(r) is not None]
