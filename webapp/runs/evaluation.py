"""Simulated evaluation runs: many simulated dialogues with chosen systems, in the background.

Shared by the app's Evaluate tab and `python -m simulators run`. A run is
N dialogues per system with one simulator kind; dialogues run concurrently
on a thread pool (the LLM client bounds concurrent LLM calls on its own).
Every dialogue is stored, including those that failed: a failure is
recorded on the dialogue (`metadata["errors"]`, utterance errors), never
dropped. The run's status lives in the store (`save_run`), so a reloaded
page, or another process, sees the same progress; runs can be cancelled.
A run is held under a lease in the store (`arena.store.run_leases`, the rules
of `arena.store.jobs`) that its process renews every `LEASE_TICK_S` (a job on
the process's scheduler, `arena.store.jobs_scheduler`): a cancel asked on any app process
reaches the owner at its next renewal, and a run whose lease expired (its
process died) shows as interrupted and is resumed by exactly one process: the
app's processes look for such runs every `Settings.run_resume_s`
(`keep_resuming`), so a run whose process was killed goes on within
`run_lease_s + run_resume_s` (35 s by default), from the dialogues it had
stored. A run's state and dialogues are stored only while its process holds
the lease (`Store.save_owned_run`, `Store.save_run_dialogue`); an owner that
finds its lease gone (it stalled, and another process resumed the run) stops
its dialogues, makes no more LLM calls for them, and stores nothing more. A
Ray worker, which runs dialogues of another process's run, asks the store
before each LLM call whether that process still holds the run, so its
dialogues stop paying as soon as the run is taken over.
Dialogues under way are listed in the status (`active`: system, index,
turns so far, when they started and last took a turn), so a long dialogue
shows signs of life before it finishes (threads engine; a Ray task reports
only when its dialogue is done).

Dialogue `i` of a run with seed `s` uses the simulator seed `s * 1_000_003 + i`
for every system, so all systems meet the same simulated users.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
import traceback
import uuid
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable, Iterator, Optional

from arena.runtime.config import Settings
from arena.runtime.distributed import ENGINES
from arena.dialogue import Dialogue, UserInfo, UserKind
from arena.llm import LLMClient
from arena.llm.call_guard import calls_wanted_while
from arena.conversation.runner import DialogueRunner
from arena.conversation.simulator_interface import Simulator, SimulatorAction, StopDialogue
from arena.store import Store
from arena.store.jobs_scheduler import Periodic
from arena.store.run_leases import RUN_LEASE_S
from arena.store.statements import now_key
from crs.registry import CRSRegistry
from evaluators.acts.intent_readers import intent_reader
from simulators import build_simulator, catalog_view, resolve_kind
from webapp.runs.resuming import ResumesInterruptedRuns
from webapp.runs.scorer import BackgroundScorer

log = logging.getLogger(__name__)

HEARTBEAT_S = 10.0
LEASE_TICK_S = 1.0  # how often the owner renews its lease and looks for a cancel asked elsewhere
SAVE_EVERY_S = 1.0  # progress is written at most this often (status changes always)
STALE_AFTER_S = 120.0  # a running run not heard from for this long was interrupted
FINAL_STATES = ("finished", "cancelled", "failed", "interrupted")
MAX_DIALOGUES_PER_SYSTEM = 1000
MAX_CONCURRENCY = 64


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def dialogue_seed(run_seed: int, index: int) -> int:
    return int(run_seed) * 1_000_003 + int(index)


def rating_options(settings: Any) -> dict[str, Any]:
    """Simulator options that make it fill the aspect form (the configured form, else the shipped one)."""
    form = getattr(settings, "rating_form", None)
    return {"rate_aspects": True, **({"rating_form": str(form)} if form else {})}


@dataclass
class RunConfig:
    systems: list[str]
    simulator: str
    n_dialogues: int = 10  # per system
    max_turns: int = 10
    seed: int = 0
    concurrency: int = 4
    options: dict[str, Any] = field(default_factory=dict)  # passed to the simulator factory (e.g. nlg)

    def validate(self) -> "RunConfig":
        self.simulator = resolve_kind(self.simulator)
        self.systems = [s.strip() for s in self.systems if s and s.strip()]
        if not self.systems:
            raise ValueError("choose at least one system")
        if len(set(self.systems)) != len(self.systems):
            raise ValueError("a system is listed twice")
        if not 1 <= int(self.n_dialogues) <= MAX_DIALOGUES_PER_SYSTEM:
            raise ValueError(f"the number of dialogues must be between 1 and {MAX_DIALOGUES_PER_SYSTEM}")
        if not 1 <= int(self.max_turns) <= 100:
            raise ValueError("max turns must be between 1 and 100")
        if not 1 <= int(self.concurrency) <= MAX_CONCURRENCY:
            raise ValueError(f"concurrency must be between 1 and {MAX_CONCURRENCY}")
        self.n_dialogues, self.max_turns = int(self.n_dialogues), int(self.max_turns)
        self.seed, self.concurrency = int(self.seed), int(self.concurrency)
        return self

    @property
    def total(self) -> int:
        return self.n_dialogues * len(self.systems)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "RunConfig":
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})


class _Cancellable:
    """Wraps a simulator so that a cancelled run ends its dialogues at the next turn."""

    def __init__(self, simulator: Simulator, cancelled: threading.Event):
        self.simulator = simulator
        self.cancelled = cancelled

    def next_turn(self, dialogue: Dialogue) -> SimulatorAction:
        if self.cancelled.is_set():
            return StopDialogue("run cancelled")
        return self.simulator.next_turn(dialogue)


def dialogue_summary(dialogue: Dialogue) -> dict[str, Any]:
    """One row of the live table of finished dialogues."""
    meta = dialogue.metadata
    errors = list(meta.get("errors") or []) + dialogue.errors()
    row: dict[str, Any] = {
        "dialogue_id": dialogue.dialogue_id,
        "system": dialogue.crs_id,
        "index": meta.get("run_index"),
        "turns": dialogue.num_turns,
        "end": dialogue.end_reason or "",
        "feedback": dialogue.feedback.sentiment if dialogue.feedback else "",
        "recommended": len(dialogue.recommended_items()),
        "errors": len(errors),
        "error": errors[0][:300] if errors else "",
    }
    if meta.get("recall"):
        row["recall@10"] = round(max(r.get("recall@10", 0.0) for r in meta["recall"]), 4)
    if meta.get("preference_coverage"):
        row["pc"] = round(meta["preference_coverage"][-1]["pc"], 4)
    return row


class RunManager(ResumesInterruptedRuns):
    def __init__(
        self,
        *,
        store: Store,
        registry: CRSRegistry,
        llm: Optional[LLMClient],
        settings: Settings,
        scorer: Optional[BackgroundScorer] = None,
        simulator_factory: Optional[Callable[..., Any]] = None,
        catalog_for: Optional[Callable[[str], Any]] = None,
        engine: str = "threads",
        ray_address: Optional[str] = None,
        worker_recipe: Optional[Callable[[], "RunManager"]] = None,
        task_cpus: float = 1.0,
    ):
        """`engine="ray"` runs each dialogue as a Ray task on the cluster at `ray_address` (a local
        Ray when None); each worker builds its own run manager (systems, simulators, store) with
        `worker_recipe`, a picklable callable (the app's is `webapp.runs.workers.WorkerRecipe`).
        `Services.run_manager` builds one from the app's services."""
        if engine not in ENGINES:
            raise ValueError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
        if engine == "ray" and worker_recipe is None:
            raise ValueError("engine 'ray' needs a worker_recipe: how each worker builds its run manager")
        self.store = store
        self.registry = registry
        self.llm = llm
        self.settings = settings
        self.scorer = scorer
        self.build_simulator = simulator_factory or functools.partial(
            build_simulator, intent_readers=intent_reader, movielens_cache_dir=settings.cache_dir)
        self.catalog_for = catalog_for or catalog_view
        self.engine, self.ray_address, self.task_cpus = engine, ray_address, task_cpus
        self.worker_recipe = worker_recipe
        self._lock = threading.Lock()
        self._cancel: dict[str, threading.Event] = {}
        self._threads: dict[str, threading.Thread] = {}
        self._states: dict[str, dict[str, Any]] = {}
        self._saved_at: dict[str, float] = {}
        self._save_lock = threading.Lock()
        self.lease_s = float(getattr(settings, "run_lease_s", RUN_LEASE_S))
        self._leased_until: dict[str, float] = {}  # run -> (monotonic) end of the lease last renewed
        self._beat_at: dict[str, float] = {}  # run -> (monotonic) when its lease keeper last saved progress
        self._lost: set[str] = set()  # runs another process took over from this one
        self._not_resumable: set[str] = set()  # runs this process cannot run (told once in the log)
        self._resumer: Optional[Periodic] = None

    # -- starting and stopping ---------------------------------------------------
    def check(self, config: RunConfig) -> RunConfig:
        """Validate a configuration and that every system can run here."""
        config.validate()
        for name in config.systems:
            problem = self.registry.problem(name)
            if problem is not None:
                raise ValueError(str(problem))
        return config

    def start(self, config: Optional[RunConfig], run_id: Optional[str] = None, *, resume: bool = False) -> str:
        """Start a run in a background thread; returns its id at once.

        With `resume`, `run_id` names an interrupted run: its stored
        configuration is used and dialogues already stored are not run again.
        """
        config, skip = self._begin(config, run_id, resume)
        run_id = run_id or f"run-{uuid.uuid4().hex[:12]}"
        self._create(run_id, config, skip, resume)
        thread = threading.Thread(target=self._execute, args=(run_id, config, None, skip), daemon=True,
                                  name=f"eval-{run_id}")
        with self._lock:
            self._threads[run_id] = thread
        thread.start()
        return run_id

    def run(self, config: Optional[RunConfig], *, run_id: Optional[str] = None, resume: bool = False,
            on_dialogue: Optional[Callable[[Dialogue, dict[str, Any]], None]] = None) -> dict[str, Any]:
        """Run in the calling thread (the command line); returns the final state."""
        config, skip = self._begin(config, run_id, resume)
        run_id = run_id or f"run-{uuid.uuid4().hex[:12]}"
        self._create(run_id, config, skip, resume)
        self._execute(run_id, config, on_dialogue, skip)
        return self.status(run_id)

    def _begin(self, config: Optional[RunConfig], run_id: Optional[str],
               resume: bool) -> tuple[RunConfig, dict[str, Dialogue]]:
        """The configuration to run and, when resuming, the run's dialogues already stored."""
        if not resume:
            if config is None:
                raise ValueError("a new run needs a configuration")
            return self.check(config), {}
        state = self.store.get_run(run_id) if run_id else None
        if state is None:
            raise ValueError(f"no run {run_id!r} to resume")
        held = self.store.run_lease(run_id)
        if self.is_active(run_id) or mark_stale(state, held[1] if held else None)["status"] in (
                "queued", "running", "cancelling"):
            raise ValueError(f"run {run_id} is still running")
        config = self.check(RunConfig.from_dict(state["config"]))  # before claiming: this process can run it
        if not self.store.claim_run(run_id, self.lease_s):  # another process resumed it first
            raise ValueError(f"run {run_id} is still running")
        # Read after the claim: from now on only this process stores the run's dialogues.
        ids = [run_dialogue_id(run_id, system, i) for system, i in _jobs(config)]
        done = self.store.dialogue_ids(ids)
        return config, {i: d for i in sorted(done) if (d := self.store.get_dialogue(i)) is not None}

    def cancel(self, run_id: str) -> bool:
        """Ask a run to stop, in this process or another; running dialogues end at their next turn.
        False when the run is not going on anywhere (or is being cancelled already here)."""
        with self._lock:
            event = self._cancel.get(run_id) if run_id in self._states else None
        if event is None:  # another process's run: its owner reads the request at its next renewal
            return self.store.request_run_cancel(run_id)
        if event.is_set():
            return False
        event.set()
        self._update(run_id, status="cancelling")
        return True

    def wait(self, run_id: str, timeout: Optional[float] = None) -> bool:
        with self._lock:
            thread = self._threads.get(run_id)
        if thread is not None:
            thread.join(timeout)
            return not thread.is_alive()
        return True

    def is_active(self, run_id: str) -> bool:
        with self._lock:
            thread = self._threads.get(run_id)
        return thread is not None and thread.is_alive()

    # -- reading ------------------------------------------------------------------
    def status(self, run_id: str) -> Optional[dict[str, Any]]:
        with self._lock:
            live = self._states.get(run_id)
            if live is not None:
                return _copy(live)
        state = self.store.get_run(run_id)
        return self._stored_status(run_id, state) if state is not None else None

    def _stored_status(self, run_id: str, state: dict[str, Any]) -> dict[str, Any]:
        """A run of another process (or of none) as the store has it, with the cancel asked of it."""
        held = self.store.run_lease(run_id)
        lease, asked = (held[1], held[2]) if held is not None else (None, False)
        state = mark_stale(state, lease)
        if asked and state.get("status") in ("queued", "running"):
            state["status"] = "cancelling"
        return state

    def list_runs(self, limit: int = 50) -> list[dict[str, Any]]:
        out = []
        for run_id, state in self.store.list_runs()[:limit]:
            with self._lock:
                live = self._states.get(run_id)
                live = _copy(live) if live is not None else None
            out.append(live or self._stored_status(run_id, state))
        return out

    # -- internals ---------------------------------------------------------------------
    def _create(self, run_id: str, config: RunConfig, stored: dict[str, Dialogue],
                resumed: bool = False) -> None:
        rows = [dialogue_summary(d) for d in stored.values()]
        state = {
            "run_id": run_id, "config": asdict(config), "status": "queued", "total": config.total,
            "done": len(rows), "failed": sum(1 for r in rows if r["errors"]), "created_at": _now(),
            "started_at": None, "finished_at": None, "heartbeat": time.time(), "error": None,
            "dialogues": rows, "active": {}, "simulator_model": self._model_label(config),
        }
        previous = self.store.get_run(run_id) if resumed else None
        if previous:
            state.update(created_at=previous.get("created_at"), resumed_at=_now())
        with self._lock:
            self._states[run_id] = state
            self._cancel[run_id] = threading.Event()
            self._saved_at[run_id] = time.time()
            self._leased_until[run_id] = time.monotonic() + self.lease_s
            self._lost.discard(run_id)
        if resumed:  # claimed already (`_begin`)
            self.store.save_owned_run(run_id, _copy(state))
        else:
            self.store.save_run(run_id, _copy(state))
            self.store.claim_run(run_id, self.lease_s)

    def _model_label(self, config: RunConfig) -> str:
        if config.simulator == "abus" and config.options.get("nlg") == "template":
            return "template"
        return self.llm.describe() if self.llm is not None else "template"

    def _update(self, run_id: str, **changes: Any) -> None:
        """Change the live state; write it to the store when the status changes, else at most every SAVE_EVERY_S."""
        with self._save_lock:  # snapshots reach the store in the order they were taken
            with self._lock:
                state = self._states.get(run_id)
                if state is None:
                    return
                if state["status"] == "cancelling" and changes.get("status") == "running":
                    changes.pop("status")
                now = time.time()
                state.update(changes, heartbeat=now)
                if "status" not in changes and now - self._saved_at.get(run_id, 0.0) < SAVE_EVERY_S:
                    return
                self._saved_at[run_id] = now
                snapshot = _copy(state)
                if run_id in self._lost:  # another process's run now (or soon): nothing more from here
                    return
            if not self.store.save_owned_run(run_id, snapshot):
                self._lose(run_id)

    def _lose(self, run_id: str) -> None:
        """Another process took the run over, or this one could not renew its lease in time (then whoever
        resumes the run takes it over): stop its dialogues here; this process stores nothing more of it."""
        with self._lock:
            if run_id in self._lost or run_id not in self._states:
                return
            self._lost.add(run_id)
            event = self._cancel.get(run_id)
        log.warning("run %s: this process's lease ran out (the run is resumed by whichever process takes it "
                    "over); stopping here, storing nothing more", run_id)
        if event is not None:
            event.set()

    def _lease_check(self, run_id: str, owner: Optional[str]) -> Callable[[], bool]:
        """What a dialogue of the run asks before each LLM call: whether the run is still its owner's.
        The process running the run knows from its own renewals (`_still_ours`); a Ray worker runs
        dialogues of another process's run and holds no lease of its own, so it asks the store
        (`_held_by`) whether `owner` still holds the run."""
        with self._lock:
            runs_here = run_id in self._states
        if runs_here or owner is None or owner == self.store.owner_id:
            return functools.partial(self._still_ours, run_id)
        return functools.partial(self._held_by, run_id, owner)

    def _held_by(self, run_id: str, owner: str) -> bool:
        """Whether `owner` holds the run under a live lease, as the store has it now (one read: an LLM call
        costs far more). Once another process took the run over, the stored result would be discarded
        (`Store.save_run_dialogue`), so the worker's further LLM calls would be paid for nothing."""
        try:
            return self.store.run_held_by(run_id, owner)
        except Exception as exc:  # the store is away for a moment: the write is checked again when storing
            log.warning("run %s: could not read its lease before an LLM call: %s", run_id, exc)
            return True

    def _still_ours(self, run_id: str) -> bool:
        """Whether this process still holds the run, as far as its last renewal tells (no database read: it
        is asked before every LLM call of the run's dialogues)."""
        with self._lock:
            until = self._leased_until.get(run_id, float("inf"))
            return run_id not in self._lost and time.monotonic() < until

    def _execute(self, run_id: str, config: RunConfig, on_dialogue: Optional[Callable],
                 skip: Optional[dict[str, Dialogue]] = None) -> None:
        with self._lock:
            cancelled = self._cancel[run_id]
        self._update(run_id, status="running", started_at=_now())
        with self._lock:
            self._beat_at[run_id] = time.monotonic()
        # The first renewal comes at once, not a tick later: a resumed run claimed its lease before reading
        # its stored dialogues, and that time already counts against the lease. A tick that raised is retried
        # at the next tick, not after the scheduler's default wait, which can be longer than a short lease.
        beat = Periodic(f"run-lease-{run_id}", functools.partial(self._heartbeat, run_id),
                        retry_s=self._tick_s).start(0.0)
        jobs = [(system, i) for system, i in _jobs(config)
                if run_dialogue_id(run_id, system, i) not in (skip or {})]
        try:
            finished = self._on_ray if self.engine == "ray" else self._on_threads
            for dialogue in finished(run_id, config, jobs, cancelled):
                if dialogue is None:
                    continue
                row = dialogue_summary(dialogue)
                with self._lock:
                    state = self._states[run_id]
                    state["active"].pop(dialogue.dialogue_id, None)
                    state["done"] += 1
                    state["failed"] += 1 if row["errors"] else 0
                    state["dialogues"].append(row)
                self._update(run_id)
                if on_dialogue is not None:
                    on_dialogue(dialogue, row)
            final = "cancelled" if cancelled.is_set() else "finished"
            self._update(run_id, status=final, finished_at=_now(), active={})
        except Exception as exc:  # a bug in the run loop itself: the run fails visibly
            log.exception("evaluation run %s failed", run_id)
            self._update(run_id, status="failed", finished_at=_now(), error=_describe(exc), active={})
        finally:
            # A renewal in flight must land before the release below, or it would hold the ended run
            # under a live lease and a resume would be refused as "still running" until it ran out.
            beat.cancel(wait=True, timeout=self.lease_s)
            with self._save_lock, self._lock:
                self._states.pop(run_id, None)
                self._saved_at.pop(run_id, None)
                self._cancel.pop(run_id, None)
                self._leased_until.pop(run_id, None)
                self._beat_at.pop(run_id, None)
                lost = run_id in self._lost
                self._lost.discard(run_id)
            try:
                if not lost:  # a lost run is not released: its lease runs out and a live process resumes it
                    self.store.release_run(run_id)
            except Exception:  # the lease then simply expires
                log.exception("could not release the lease of run %s", run_id)

    def _on_threads(self, run_id: str, config: RunConfig, jobs: list[tuple[str, int]],
                    cancelled: threading.Event) -> Iterator[Optional[Dialogue]]:
        with ThreadPoolExecutor(max_workers=config.concurrency, thread_name_prefix=f"sim-{run_id[-6:]}") as pool:
            futures = [pool.submit(self._job, run_id, config, system, i, cancelled, self.store.owner_id)
                       for system, i in jobs]
            for future in as_completed(futures):
                yield future.result()

    def _on_ray(self, run_id: str, config: RunConfig, jobs: list[tuple[str, int]],
                cancelled: threading.Event) -> Iterator[Optional[Dialogue]]:
        """Each dialogue a Ray task that stores its dialogue itself; scoring is queued here."""
        from arena.runtime import distributed
        distributed.connect(self.ray_address)
        recipe = self.worker_recipe
        owner = self.store.owner_id  # each worker stores its dialogue only while this process holds the run
        items = [(recipe, run_id, asdict(config), system, i, owner) for system, i in jobs]
        for item, dialogue, error in distributed.map_unordered(
                simulate_in_worker, items, max_in_flight=config.concurrency, task_cpus=self.task_cpus,
                stop=cancelled.is_set):
            if error is not None:
                dialogue = self._worker_lost(run_id, config, item[3], item[4], error)
            if dialogue is not None:
                self._queue_scoring(dialogue)
            yield dialogue

    def _worker_lost(self, run_id: str, config: RunConfig, system: str, index: int,
                     error: BaseException) -> Optional[Dialogue]:
        """A dialogue whose task failed on every try: the stored copy if it got that far, else kept with its
        error (None when the run is no longer this process's)."""
        stored = self.store.get_dialogue(run_dialogue_id(run_id, system, index))
        if stored is not None:
            return stored
        dialogue = self._new_dialogue(run_id, config, system, index)
        dialogue.metadata.setdefault("errors", []).append(f"run: worker lost: {_describe(error)}")
        dialogue.end("error")
        return dialogue if self.store.save_run_dialogue(dialogue, run_id) else None

    @property
    def _tick_s(self) -> float:
        return min(LEASE_TICK_S, self.lease_s / 3)  # a lease survives two late renewals

    def _heartbeat(self, run_id: str) -> Optional[float]:
        """One tick of the run's lease keeper, a job on the process's scheduler: renew the lease, take up a
        cancel asked by any process, and save progress every HEARTBEAT_S. Returns the wait before the next
        tick; None once the run is over here or another process holds it."""
        with self._lock:
            if run_id not in self._states:
                return None
            cancelled = self._cancel.get(run_id)
            beat = self._beat_at.get(run_id, 0.0)
        renewed_at = time.monotonic()
        try:
            asked = self.store.renew_run_lease(run_id, self.lease_s)
        except Exception as exc:  # the store is away for a moment: the lease holds for a while
            log.warning("could not renew the lease of run %s: %s", run_id, exc)
            asked = False
        else:
            if asked is None:  # another process holds the run now
                self._lose(run_id)
                return None
            with self._lock:
                self._leased_until[run_id] = renewed_at + self.lease_s
        if asked and cancelled is not None and not cancelled.is_set():
            log.info("run %s: cancelled from another process", run_id)
            self.cancel(run_id)
        if time.monotonic() - beat >= HEARTBEAT_S:
            with self._lock:
                self._beat_at[run_id] = time.monotonic()
            self._update(run_id)
        return self._tick_s

    def _job(self, run_id: str, config: RunConfig, system: str, index: int,
             cancelled: threading.Event, owner: Optional[str] = None) -> Optional[Dialogue]:
        """Run and store one dialogue of the run held by `owner`; None when it was not stored (the run was
        cancelled before it began, or another process took the run over)."""
        still_ours = self._lease_check(run_id, owner)
        with calls_wanted_while(still_ours, f"run {run_id}"):
            dialogue = self._simulate(run_id, config, system, index, cancelled)
        if dialogue is not None and not still_ours():
            # This process could not renew its lease in time: whoever resumes the run redoes the dialogue.
            self._lose(run_id)
            return None
        if dialogue is None or not self._persist(dialogue, run_id, owner):
            return None
        return dialogue

    def _simulate(self, run_id: str, config: RunConfig, system: str, index: int,
                  cancelled: threading.Event) -> Optional[Dialogue]:
        if cancelled.is_set():
            return None  # never started: nothing to keep
        dialogue = self._new_dialogue(run_id, config, system, index)
        seed = dialogue_seed(config.seed, index)
        simulator = None
        try:
            crs = self.registry.get(system)
            dataset = getattr(self.registry.spec(system), "dataset", None) or "redial"
            simulator = self.build_simulator(
                config.simulator, catalog=self.catalog_for(dataset), seed=seed, llm=self.llm, **config.options
            )
            simulator.attach(dialogue)
            dialogue.metadata.update(run_id=run_id, run_index=index)
            runner = DialogueRunner(
                crs,
                max_turns=config.max_turns,
                turn_timeout_s=self.settings.turn_timeout_s,
                max_message_chars=self.settings.max_message_chars,
                on_turn=lambda d: self._progress(run_id, d),
            )
            self._progress(run_id, dialogue)
            runner.run_simulated(dialogue, _Cancellable(simulator, cancelled))
            if cancelled.is_set() and dialogue.end_reason == "simulator_stop: run cancelled":
                dialogue.metadata["cancelled"] = True
                simulator.observe(dialogue)
            else:
                simulator.finalize(dialogue)
        except Exception as exc:  # anything else: keep the dialogue with its error
            dialogue.metadata.setdefault("errors", []).append(f"run: {_describe(exc)}")
            dialogue.end("error")
        return dialogue

    def _progress(self, run_id: str, dialogue: Dialogue) -> None:
        """A dialogue of the run started or took a turn: its row among the dialogues under way."""
        now = time.time()
        with self._lock:
            state = self._states.get(run_id)
            if state is None:  # a Ray worker's manager, or a run already over
                return
            entry = state["active"].setdefault(dialogue.dialogue_id, {
                "system": dialogue.crs_id, "index": dialogue.metadata.get("run_index"), "started": now})
            entry.update(turns=dialogue.num_turns, updated=now)
        self._update(run_id)

    @staticmethod
    def _new_dialogue(run_id: str, config: RunConfig, system: str, index: int) -> Dialogue:
        # The id is fixed by the run, system and index: a retried or resumed dialogue replaces its own row.
        seed = dialogue_seed(config.seed, index)
        return Dialogue(
            dialogue_id=run_dialogue_id(run_id, system, index),
            crs_id=system,
            user=UserInfo(kind=UserKind.SIMULATOR, id=f"sim-{config.simulator}-{seed}", simulator=config.simulator,
                          details={"seed": seed}),
            metadata={"source": "simulation", "run_id": run_id, "run_index": index},
        )

    def simulate_one(self, run_id: str, config: RunConfig, system: str, index: int,
                     owner: Optional[str] = None) -> Optional[Dialogue]:
        """One dialogue of a run, stored while `owner` (the process running the run) holds it (what a Ray
        task does); None when not stored."""
        return self._job(run_id, config, system, index, threading.Event(), owner)

    def _persist(self, dialogue: Dialogue, run_id: str, owner: Optional[str]) -> bool:
        """Store the dialogue only while the run is still `owner`'s, then queue its scoring."""
        if not self.store.save_run_dialogue(dialogue, run_id, owner):
            return False
        self._queue_scoring(dialogue)
        return True

    def _queue_scoring(self, dialogue: Dialogue) -> None:
        """Every finished dialogue enters the store's durable scoring queue: this process's scorer when it
        has one, else a queued job that any process running scorers (the public app, `score --db`) takes."""
        if not dialogue.utterances:
            return
        try:
            if self.scorer is not None:
                self.scorer.submit(dialogue.dialogue_id)
            else:
                self.store.enqueue_scoring([dialogue.dialogue_id])
        except Exception:  # scoring must never fail a run
            log.exception("could not queue scoring for %s", dialogue.dialogue_id)


def run_dialogue_id(run_id: str, system: str, index: int) -> str:
    return f"{run_id}-{system}-{index:04d}"


def _jobs(config: RunConfig) -> list[tuple[str, int]]:
    return [(system, i) for i in range(config.n_dialogues) for system in config.systems]


_WORKER_MANAGERS: dict[str, "RunManager"] = {}
_WORKER_LOCK = threading.Lock()


def simulate_in_worker(recipe: Callable[[], "RunManager"], run_id: str, config: dict[str, Any], system: str,
                       index: int, owner: Optional[str] = None) -> Optional[Dialogue]:
    """The Ray task: build this worker's run manager once per recipe, run one dialogue, store it.

    Recipes are told apart by their repr (a frozen dataclass's repr is its fields): each task
    receives a fresh copy of the recipe, and a class defined in a script cannot be pickled again.
    """
    key = repr(recipe)
    with _WORKER_LOCK:
        manager = _WORKER_MANAGERS.get(key)
        if manager is None:
            manager = _WORKER_MANAGERS[key] = recipe()
    return manager.simulate_one(run_id, RunConfig.from_dict(config), system, index, owner)


def _describe(exc: BaseException) -> str:
    return "".join(traceback.format_exception_only(type(exc), exc)).strip()[:2000]


def _copy(state: dict[str, Any]) -> dict[str, Any]:
    out = dict(state)
    out["dialogues"] = list(state.get("dialogues") or [])
    out["active"] = {k: dict(v) for k, v in (state.get("active") or {}).items()}
    return out


def mark_stale(state: dict[str, Any], lease: Optional[str] = None) -> dict[str, Any]:
    """A run the store says is running but whose process stopped renewing its `lease` (the time key it
    held until; for a run stored without one, whose process stopped updating it) was interrupted."""
    state = dict(state)
    if state.get("status") in ("queued", "running", "cancelling"):
        if lease is not None:
            expired = lease < now_key()
        else:
            expired = time.time() - float(state.get("heartbeat") or 0) > STALE_AFTER_S
        if expired:
            state["status"] = "interrupted"
            state["active"] = {}  # nobody is running them any more
    return state
