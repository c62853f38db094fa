"""The choices each browser session was given, recorded by the app itself.

A page may give one session choices no other session has (a study's attention check, whose options come
from the worker's study; the researcher pages' lists of runs and studies, which grow as they are used). The
API guard (`webapp.protection.api_guard`) refuses a value outside the caller's session's choices with a
422, as Gradio would only after a 500 and a traceback. It reads them here, where the handlers that give
them leave them: `OFFERED.offering(fn, outputs)` wraps a handler so that each choice update it returns
(`gr.update(choices=...)`, or a new `gr.Radio(choices=...)`) is recorded under the event's session
(`gr.Request.session_hash`), with no need to read Gradio's own per-session store.

The record is bounded: at most `max_sessions` sessions, each forgotten `ttl_s` after its last update (the
idle-session setting), when its page is closed (`Blocks.unload`, see `forget_on_unload`), or when the
idle sweep forgets it (`webapp.sessions.idle_sessions`).
"""

from __future__ import annotations

import inspect
import threading
import typing
import weakref
from typing import Any, Callable, Iterator, Optional, Sequence

import gradio as gr
from cachetools import TTLCache

CHOICE_COMPONENTS = (gr.Radio, gr.Dropdown, gr.CheckboxGroup)
DEFAULT_MAX_SESSIONS = 10_000
DEFAULT_TTL_S = 3600.0
_REQUEST = "offered_to"  # the parameter the wrapper adds, for Gradio to pass the event's request


def choice_values(choices: Sequence[Any]) -> list[Any]:
    """The values of `choices` as a client sends them: the value of a (label, value) pair, else the choice."""
    return [c[1] if isinstance(c, (tuple, list)) and len(c) == 2 else c for c in choices]


def _offered(value: Any) -> Optional[list[Any]]:
    """The choices an output value gives its component, or None when it leaves them as they were."""
    if isinstance(value, dict) and value.get("__type__") == "update":
        return choice_values(value["choices"]) if isinstance(value.get("choices"), (list, tuple)) else None
    if isinstance(value, CHOICE_COMPONENTS):
        # A component returned as an update sets only what it was given, and one built without choices
        # (`gr.Radio(value=None)`, an answer cleared) reads as none: it leaves the choices as they were.
        return choice_values(value.choices) if value.choices else None
    return None


def _positional_signature(fn: Callable[..., Any], inputs: Any) -> inspect.Signature:
    """`fn`'s signature, its `*args` (if any) written out as one parameter per input of the event left to it
    (the parameters before it take theirs, except those Gradio fills itself, such as a `gr.Request`)."""
    signature = inspect.signature(fn)
    params = list(signature.parameters.values())
    if not any(p.kind is p.VAR_POSITIONAL for p in params):
        return signature
    if inputs is None:
        raise TypeError("offering() needs the event's inputs to wrap a handler taking *args")
    count = len(inputs) if isinstance(inputs, (list, tuple)) else 1
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    hints = _type_hints(fn, signature)
    before = [p.replace(kind=kind) for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    filled = sum(1 for p in before if not _filled_by_gradio(hints.get(p.name, p.annotation)))
    if filled > count:
        raise TypeError(f"offering(): {fn} takes more inputs than the event's {count}")
    rest = [inspect.Parameter(f"input_{n}", kind) for n in range(count - filled)]
    return signature.replace(parameters=[*before, *rest])


def _filled_by_gradio(annotation: Any) -> bool:
    """Whether Gradio passes a parameter of this type itself (the request, an event's data)."""
    return isinstance(annotation, type) and issubclass(annotation, (gr.Request, gr.EventData))


def _type_hints(fn: Callable[..., Any], signature: inspect.Signature) -> dict[str, Any]:
    """`fn`'s parameter types, resolved (so that Gradio still sees its own `gr.Request` parameter, if any)."""
    try:
        hints = typing.get_type_hints(fn)
    except (NameError, TypeError):
        return {}
    return {name: hint for name, hint in hints.items() if name in signature.parameters}


def records_choices_of(fn: Any) -> tuple[Any, ...]:
    """The outputs whose choices `fn` records, when it is a handler wrapped by `offering`; else none."""
    outputs = getattr(fn, "offered_outputs", ())
    return outputs if isinstance(outputs, tuple) else ()


class OfferedChoices:
    """session hash -> {component: the values it takes in that session}, as the app's handlers set them."""

    def __init__(self, max_sessions: int = DEFAULT_MAX_SESSIONS, ttl_s: float = DEFAULT_TTL_S):
        self._lock = threading.Lock()
        self._sessions: TTLCache[str, dict[Any, list[Any]]] = TTLCache(maxsize=max_sessions, ttl=ttl_s)
        self._unloading: weakref.WeakSet[Any] = weakref.WeakSet()  # the Blocks that forget on unload

    def configure(self, max_sessions: int, ttl_s: float) -> None:
        """A new bound and time to live (the server's idle-session setting); what was recorded is kept."""
        with self._lock:
            kept = list(self._sessions.items())
            self._sessions = TTLCache(maxsize=max_sessions, ttl=ttl_s)
            for session, given in kept[-max_sessions:]:
                self._sessions[session] = given

    def record(self, session: str, component: Any, choices: Sequence[Any]) -> None:
        with self._lock:
            given = self._sessions.get(session, {})
            given[component] = list(choices)
            self._sessions[session] = given  # set again: the session's time to live starts anew

    def choices(self, session: Optional[str], component: Any) -> Optional[list[Any]]:
        """The values `component` was given in `session`; None when no handler gave it any there."""
        if not isinstance(session, str):
            return None
        with self._lock:
            given = self._sessions.get(session)
            return list(given[component]) if given is not None and component in given else None

    def forget(self, session: str) -> None:
        with self._lock:
            self._sessions.pop(session, None)

    def __len__(self) -> int:
        with self._lock:
            self._sessions.expire()
            return len(self._sessions)

    def _note(self, request: Any, outputs: Sequence[Any], returned: Any) -> None:
        session = getattr(request, "session_hash", None)
        if not isinstance(session, str):
            return
        if isinstance(returned, dict) and returned.get("__type__") is None:
            pairs = list(returned.items())  # {component: value}
        elif len(outputs) == 1:
            pairs = [(outputs[0], returned)]
        elif isinstance(returned, (list, tuple)):
            pairs = list(zip(outputs, returned))
        else:
            return
        for component, value in pairs:
            if isinstance(component, CHOICE_COMPONENTS):
                offered = _offered(value)
                if offered is not None:
                    self.record(session, component, offered)

    def offering(self, fn: Callable[..., Any], outputs: Any, inputs: Any = None) -> Callable[..., Any]:
        """`fn` as an event handler that records the choices it gives `outputs` under the event's session.
        Gradio passes the request to the parameter this adds; `fn` is called with its own inputs only. A
        `fn` taking `*args` needs the event's `inputs`, so that the request's place is known."""
        outs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
        if inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn):
            raise TypeError("offering() wraps plain functions and generators, not coroutines")
        signature = _positional_signature(fn, inputs)
        # A default, since `fn`'s own parameters may have one; Gradio fills it in all the same.
        added = inspect.Parameter(_REQUEST, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None,
                                  annotation=gr.Request)
        note = self._note

        if inspect.isgeneratorfunction(fn):
            def wrapped(*args: Any) -> Iterator[Any]:
                *inputs, request = args
                for returned in fn(*inputs):
                    note(request, outs, returned)
                    yield returned
        else:
            def wrapped(*args: Any) -> Any:  # type: ignore[misc]
                *inputs, request = args
                returned = fn(*inputs)
                note(request, outs, returned)
                return returned
        # Gradio reads a handler's parameters (and their types, for the request) from these two.
        params = [*signature.parameters.values(), added]
        wrapped.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
        wrapped.__annotations__ = {**_type_hints(fn, signature), _REQUEST: gr.Request}
        wrapped.__name__ = getattr(fn, "__name__", "handler")
        wrapped.__doc__ = getattr(fn, "__doc__", None)
        wrapped.offered_outputs = tuple(outs)  # type: ignore[attr-defined]  # what `records_choices_of` reads
        return wrapped

    def forget_on_unload(self, blocks: gr.Blocks) -> None:
        """Forget a session's choices when its page is closed (Gradio's public `unload` event); once per
        Blocks, however often they are served."""
        if blocks in self._unloading:
            return
        self._unloading.add(blocks)

        def unloaded(request: gr.Request) -> None:
            if request is not None and isinstance(request.session_hash, str):
                self.forget(request.session_hash)
        blocks.unload(unloaded)


# One record for the process: the session hashes of every app served are unique, and the components
# (the keys below them) belong to one app each.
OFFERED = OfferedChoices()
