"""Warm start: the first page answers at once, and the models load behind it in the order a battle needs them.

Loading every model before serving made the first page wait 20 to 30 s; loading them on first use made
the first visitors wait as long, all at once. So the server starts answering first (`webapp.serve`
starts a `WarmUp` once a first page has been drawn for its visitor, its load event answered, or
`webapp.serve.USABLE_PAGE_GRACE_S` after its port accepts connections without one) and one background
thread loads, one model after the other with a progress line each:

1. the two systems likeliest to meet in the next battle (the pair scheduler's chances, from the stored
   battle counts), then the models their turns use (the in-process LLM when it is the provider, the act
   model ChatCRS's dialogue policy reads the user with);
2. the other systems a battle can draw, by their chance of being drawn;
3. the act model for the background scorer, when no system needed it earlier.

A visitor's turn for a system still loading does not load it a second time: the turn moves the system
(and what its turns use) to the front of the queue and waits for it, bounded (`webapp.sessions.warming`
says so in the pane). A model that fails to load is logged and left to fail, as before, on first use;
warming never stops the app from serving. `status()` is what the `/ready` and `/health` endpoints report.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from arena.store.jobs_scheduler import Periodic

# `services` below is a `webapp.services.Services` (not imported: that module holds a WarmUp).
Services = Any

log = logging.getLogger(__name__)

WAITING, LOADING, LOADED, FAILED = "waiting", "loading", "loaded", "failed"
ACT_MODEL = "act model"
FIRST_PAGE_GRACE_S = 3.0  # `WarmUp.start_soon`'s default grace


@dataclass
class Step:
    """One model to load: `system` names the CRS it is (None for a shared model); `needs` are the labels
    of the shared models that system's turns use."""

    label: str
    load: Callable[[], object]
    system: Optional[str] = None
    needs: tuple[str, ...] = ()
    state: str = WAITING
    seconds: Optional[float] = None
    error: str = ""
    done: threading.Event = field(default_factory=threading.Event, repr=False)


def draw_chances(services: Services, names: list[str]) -> dict[str, float]:
    """Each system's chance of being in the next battle, by the pair scheduler's weights over the stored
    battle counts (equal chances when they cannot be read)."""
    from webapp.sessions.pairing import pair_probabilities

    try:
        counts = services.store.pair_counts(user_kind="human")
    except Exception as exc:  # an unreadable store must not stop the warm-up: equal chances
        log.warning("warm start: battle counts unreadable, loading in the registry's order: %s", exc)
        counts = {}
    chances = {name: 0.0 for name in names}
    for (a, b), p in pair_probabilities(names, counts).items():
        chances[a] += p
        chances[b] += p
    return chances


def plan(services: Services) -> list[Step]:
    """The models to load, in the order a battle needs them (see the module doc)."""
    registry = services.registry
    drawable = registry.available()
    chances = draw_chances(services, drawable)
    # sorted() is stable: equal chances keep the registry's order
    systems = sorted(drawable, key=lambda name: -chances[name])
    shared: dict[str, Step] = {}
    provider = services.llm.provider
    # Looked up on the class: `engine` is a property that loads the model, and asking the instance
    # whether it has one loaded it (and converted it, minutes on a busy machine) before the first page.
    if services.settings.llm_provider == "local" and hasattr(type(provider), "engine"):
        llm_label = f"local LLM {services.settings.llm_model_name}"
        # `load` waits, here in the background, for a one-time conversion running in a child process
        load = getattr(provider, "load", None) or (lambda: provider.engine)
        shared[llm_label] = Step(llm_label, load)
    # ChatCRS's dialogue policy reads the user with the act model (webapp.services.default_specs), the
    # scorer annotates with it: one network, shared by the process.
    act_users = [name for name in systems if registry.spec(name).family == "chatcrs"]
    scorer = services.scorer
    if scorer is not None and hasattr(scorer, "load_annotator"):
        shared[ACT_MODEL] = Step(ACT_MODEL, scorer.load_annotator)
    elif act_users:
        shared[ACT_MODEL] = Step(ACT_MODEL, _load_act_model)

    def needs(name: str) -> tuple[str, ...]:
        uses = [label for label in shared if label != ACT_MODEL]  # every built-in system replies with the LLM
        if name in act_users and ACT_MODEL in shared:
            uses.append(ACT_MODEL)
        return tuple(uses)

    steps = [Step(f"system {name}", lambda name=name: registry.get(name), system=name, needs=needs(name))
             for name in systems]
    first_pair, rest = steps[:2], steps[2:]
    used_first = [step for label, step in shared.items() if any(label in s.needs for s in first_pair)]
    return first_pair + used_first + rest + [step for step in shared.values() if step not in used_first]


def _load_act_model() -> object:
    from evaluators.acts.intent_readers import OfflineIntentReader

    return OfflineIntentReader().annotator.model


class WarmUp:
    """The background loading of `steps`, in order, with its state for the readiness endpoints."""

    def __init__(self, steps: list[Step], *, report: Optional[Callable[[str], None]] = None):
        self._steps = list(steps)
        self._queue = list(steps)
        self._lock = threading.Lock()
        self._report = report or log.info
        self._job: Optional[Periodic] = None  # the loading, a one-off job on the process's scheduler
        self.started_at = time.monotonic()
        self.finished = threading.Event()
        if not self._steps:
            self.finished.set()

    @classmethod
    def for_services(cls, services: Services, *, report: Optional[Callable[[str], None]] = None) -> "WarmUp":
        return cls(plan(services), report=report)

    @property
    def steps(self) -> list[Step]:
        return list(self._steps)

    def start(self) -> "WarmUp":
        """Load in the background (once), a one-off job on the process's scheduler."""
        with self._lock:
            if self._job is None:
                self._job = Periodic("warm-up", self._load_all).start()
            else:  # waiting for the first page's grace, or running or done already (then nothing happens)
                self._job.wake()
        return self

    def start_soon(self, grace_s: float = FIRST_PAGE_GRACE_S) -> None:
        """Start in `grace_s` seconds at the latest; a first page drawn for its visitor starts it sooner
        (`webapp.sessions.warming.start_after_page`: the loading holds the interpreter a good part of the
        time, so a page loading while it runs waits for it)."""
        with self._lock:
            if self._job is None:
                self._job = Periodic("warm-up", self._load_all).start(grace_s)

    def _load_all(self) -> None:
        """The job: every step once (None: it does not run again)."""
        self.run()
        return None

    def _next(self) -> Optional[Step]:
        with self._lock:
            if not self._queue:
                return None
            step = self._queue.pop(0)
            step.state = LOADING
            return step

    def run(self) -> dict[str, float]:
        """Load every step in turn (in the calling thread); returns seconds per step that loaded."""
        total = len(self._steps)
        took: dict[str, float] = {}
        started_all = time.monotonic()
        i = 0
        while (step := self._next()) is not None:
            i += 1
            started = time.monotonic()
            try:
                step.load()
            except Exception as exc:  # it will fail (and say why) on first use instead
                step.state, step.error = FAILED, " ".join(str(exc).split())[:300]
                log.warning("warm start %d/%d: %s did not load: %s", i, total, step.label, exc)
            else:
                step.state, step.seconds = LOADED, time.monotonic() - started
                took[step.label] = step.seconds
                self._report(f"warm start {i}/{total}: {step.label} loaded in {step.seconds:.1f} s")
            step.done.set()
        took_all = time.monotonic() - started_all
        self._report(f"warm start done: {len(took)} of {total} models in {took_all:.1f} s")
        self.finished.set()
        return took

    def _for_system(self, system: str) -> list[Step]:
        """The steps a turn of `system` waits for: its own, then the shared models it uses."""
        own = [s for s in self._steps if s.system == system]
        if not own:
            return []
        return own + [s for s in self._steps if s.label in own[0].needs]

    def pending(self, system: str) -> bool:
        """Whether a turn of `system` would wait for this warm-up (it, or a model it uses, is still to load)."""
        return any(not s.done.is_set() for s in self._for_system(system))

    def hurry(self, system: str) -> None:
        """Move `system` and the models its turns use to the front of the queue: a visitor is waiting."""
        wanted = self._for_system(system)
        with self._lock:
            ahead = [s for s in wanted if s in self._queue]
            self._queue = ahead + [s for s in self._queue if s not in ahead]

    def wait_for(self, system: str, timeout_s: float) -> bool:
        """Wait (at most `timeout_s`) until `system` and what its turns use are loaded or failed; True when
        they are. The warm-up loads them next, if it has not begun them (and starts, if it has not)."""
        self.hurry(system)
        self.start()
        deadline = time.monotonic() + timeout_s
        for step in self._for_system(system):
            if not step.done.wait(max(0.0, deadline - time.monotonic())):
                return False
        return True

    @property
    def ready(self) -> bool:
        return self.finished.is_set()

    def status(self) -> dict[str, Any]:
        """Readiness as the endpoints report it: ready, and the models loaded, loading, waiting and failed."""
        with self._lock:
            by_state: dict[str, list[str]] = {LOADING: [], LOADED: [], FAILED: []}
            for step in self._steps:
                if step.state != WAITING:
                    by_state[step.state].append(step.label)
            waiting = [step.label for step in self._queue]  # in the order they will load
        return {"ready": self.ready, "loaded": by_state[LOADED], "loading": by_state[LOADING],
                "waiting": waiting, "failed": by_state[FAILED],
                "since_start_s": round(time.monotonic() - self.started_at, 1)}


def warm_up(services: Services, *, report: Optional[Callable[[str], None]] = None) -> dict[str, float]:
    """Load every model now, in the calling thread; returns seconds per step that loaded (failures are
    logged and left out)."""
    return WarmUp.for_services(services, report=report).run()


def readiness(services: Services) -> dict[str, Any]:
    """What `/ready` and `/health` report: with warm-up on, whether every model has loaded and which are
    still loading or waiting; with it off (`ARENA_WARM_START=0`, or the researcher app alone) the app is
    ready as soon as it serves, its models loading on first use."""
    warming = services.warming
    if warming is None:
        return {"ready": True, "warm_start": False}
    return {**warming.status(), "warm_start": True}
