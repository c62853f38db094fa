"""An hourly bound on what automatic scoring may spend at the LLM endpoint.

A probe made one chat turn plus "Satisfied" cost 58 endpoint calls when the
judge's answers were unreadable, and nothing bounded the spend per hour.
`HourlyBudget` counts provider calls in a moving one-hour window (a
`limits` moving-window limiter over its in-memory storage);
`BudgetedProvider` wraps the scoring client's provider so that every call
(each transient retry included) spends one, and a call past the budget fails
at once with an `LLMError` saying so, which the scorers store as *unscored*.
When the budget is first spent in a window, one WARNING line says so
(`ARENA_SCORING_BUDGET`); the background scorer then takes no new job until
calls age out of the window.

The budget is per process, as the setting always meant: each replica's
scorer spends its own. `limits` could share one window between replicas only
through Redis, Memcached or MongoDB, none of which the arena runs (its stores
are SQLite and PostgreSQL), so memory storage is the one that fits.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from typing import Any

from limits import RateLimitItemPerSecond
from limits.storage import MemoryStorage
from limits.strategies import MovingWindowRateLimiter

from arena.llm.types import LLMError

log = logging.getLogger(__name__)

WINDOW_S = 3600.0


class BudgetSpent(LLMError):
    """The hourly scoring budget is spent; the call was not made."""


class HourlyBudget:
    """At most `limit` calls in any `window_s` seconds (whole seconds: the limiter's unit)."""

    def __init__(self, limit: int, *, window_s: float = WINDOW_S):
        self.limit = limit
        self.window_s = max(1, math.ceil(window_s))
        self._item = RateLimitItemPerSecond(limit, self.window_s) if limit > 0 else None
        self._limiter = MovingWindowRateLimiter(MemoryStorage())
        self._lock = threading.Lock()  # makes "spend, else announce once" one step
        self._announced = False

    def _has_room(self) -> bool:
        return self._item is not None and self._limiter.test(self._item)

    def try_spend(self) -> bool:
        """Spend one call if the window has room; False (and one log line per spell) when it has none."""
        with self._lock:
            if self._item is not None and self._limiter.hit(self._item):
                self._announced = False
                return True
            if not self._announced:
                self._announced = True
                log.warning("scoring budget reached: %d endpoint calls in the last hour (ARENA_SCORING_BUDGET); "
                            "scoring waits until calls age out of the window", self.limit)
            return False

    def exhausted(self) -> bool:
        with self._lock:
            room = self._has_room()
            if room:
                self._announced = False
            return not room

    def seconds_until_free(self) -> float:
        with self._lock:
            if self._has_room() or self._item is None:
                return 0.0
            reset_at = self._limiter.get_window_stats(self._item).reset_time
            return max(0.0, reset_at - time.time())


class BudgetedProvider:
    """A provider whose every call spends one from `budget` (forwarding everything else)."""

    def __init__(self, provider: Any, budget: HourlyBudget):
        self._provider = provider
        self.budget = budget

    def complete(self, request: Any, timeout_s: float) -> Any:
        if not self.budget.try_spend():
            raise BudgetSpent(f"scoring budget of {self.budget.limit} endpoint calls per hour reached")
        return self._provider.complete(request, timeout_s)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._provider, name)


def budgeted_client(client: Any, limit: int, *, window_s: float = WINDOW_S) -> Any:
    """A client for scoring: the same provider, model, cache and concurrency slots as `client`, its
    provider calls bounded by an `HourlyBudget` of `limit` per window."""
    from arena.llm.client import LLMClient

    scoring = LLMClient(BudgetedProvider(client.provider, HourlyBudget(limit, window_s=window_s)),
                        model=client.model, timeout_s=client.timeout_s, retry=client.retry,
                        concurrency=client.concurrency, cache=client.cache)
    scoring._slots = client._slots  # one bound on parallel calls for chat and scoring together
    return scoring


def budget_of(client: Any) -> Any:
    """The `HourlyBudget` behind a client made by `budgeted_client`, or None."""
    return getattr(getattr(client, "provider", None), "budget", None)
