"""Whether an LLM call about to go to the provider (and be paid for) is still wanted.

A scoring job or a run's dialogue is worked on under a lease (`arena.store`):
once another process has taken the work over, every further call of this
process is money spent on a result that will be thrown away. The worker sets
a check for the work it does (`calls_wanted_while`); `LLMClient` asks it before
each provider attempt and raises `CallNotWanted` when it says no. A cached
answer costs nothing and is still given.

The check lives in a context variable, so it follows the worker's thread;
`guarded_pool` makes thread pools whose threads carry it too (the act
annotator and the CoRE judges call the LLM from their own pools).
"""

from __future__ import annotations

import contextvars
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Callable, Iterator, Optional

from arena.llm.types import LLMError

_CHECK: contextvars.ContextVar[Optional[tuple[Callable[[], bool], str]]] = contextvars.ContextVar(
    "llm_call_wanted", default=None)


class CallNotWanted(LLMError):
    """The work this call was for is no longer this process's: the call was not made."""


@contextmanager
def calls_wanted_while(check: Callable[[], bool], what: str) -> Iterator[None]:
    """Within the block, an LLM call is made only while `check()` is true; `what` names the work."""
    token = _CHECK.set((check, what))
    try:
        yield
    finally:
        _CHECK.reset(token)


def check_call_wanted() -> None:
    """Raise `CallNotWanted` when the current work's check says the call is no longer wanted."""
    current = _CHECK.get()
    if current is not None and not current[0]():
        raise CallNotWanted(f"{current[1]} is no longer this process's work; LLM call not made")


def _adopt(context: contextvars.Context) -> None:
    for var, value in context.items():
        var.set(value)


def guarded_pool(**options) -> ThreadPoolExecutor:
    """A `ThreadPoolExecutor` whose threads carry the calling thread's check."""
    return ThreadPoolExecutor(initializer=_adopt, initargs=(contextvars.copy_context(),), **options)
