"""Run managers that Ray workers build for the Ray tests (module-level, so workers can import them)."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from arena.runtime.config import Settings
from arena.conversation.crs_interface import ConversationalRecommender
from arena.store import Store
from crs.registry import CRSRegistry
from simulators import build_simulator, catalog_view
from webapp.runs.evaluation import RunManager

from sim_fakes import AttributeCRS, fake_llm, question_nlu, simulator_responder, spec


def abus_factory(kind, **kwargs):
    return build_simulator(kind, nlu=question_nlu, **kwargs)


class DyingCRS(ConversationalRecommender):
    """Kills its whole worker process on its first reply in the chosen dialogues (as an OOM kill would).

    With `times=1` only the first attempt dies (a marker file remembers it);
    with a large `times` every attempt dies.
    """

    def __init__(self, inner: ConversationalRecommender, indexes: set[int], marker_dir: str, times: int):
        self.inner, self.indexes, self.marker_dir, self.times = inner, indexes, Path(marker_dir), times

    def respond(self, dialogue):
        index = dialogue.metadata.get("run_index")
        if index in self.indexes:
            deaths = len(list(self.marker_dir.glob(f"died-{index}-*")))
            if deaths < self.times:
                (self.marker_dir / f"died-{index}-{os.getpid()}").touch()
                os._exit(1)
        return self.inner.respond(dialogue)


@dataclass(frozen=True)
class FakeRunRecipe:
    db: str
    marker_dir: Optional[str] = None
    die_on: tuple[int, ...] = ()
    die_times: int = 1

    def __call__(self) -> RunManager:
        view = catalog_view("redial")
        first: ConversationalRecommender = AttributeCRS(view)
        if self.die_on:
            first = DyingCRS(first, set(self.die_on), self.marker_dir, self.die_times)
        registry = CRSRegistry([spec("A", first), spec("B", AttributeCRS(view, ask_first=False))])
        return RunManager(store=Store(self.db), registry=registry, llm=fake_llm(simulator_responder()),
                          settings=Settings(db_path=self.db, turn_timeout_s=30),
                          simulator_factory=abus_factory)


class FileGatedCRS(ConversationalRecommender):
    """Its first reply in each dialogue waits until the test writes `go` in `gate_dir`; `waiting-<index>`
    there says a dialogue got that far (the worker is another process: files are what both see)."""

    def __init__(self, inner: ConversationalRecommender, gate_dir: str):
        self.inner, self.gate_dir = inner, Path(gate_dir)

    def respond(self, dialogue):
        if dialogue.num_turns == 1:
            (self.gate_dir / f"waiting-{dialogue.metadata.get('run_index')}").touch()
            deadline = time.monotonic() + 120
            while not (self.gate_dir / "go").exists() and time.monotonic() < deadline:
                time.sleep(0.05)
        return self.inner.respond(dialogue)


def logged_calls(path: Path):
    """The simulators' scripted LLM, which writes the time of every call it answers to `path`."""
    responder = simulator_responder()

    def respond(request):
        with open(path, "a") as out:
            out.write(f"{time.time()}\n")
        return responder(request)
    return respond


@dataclass(frozen=True)
class GatedRunRecipe:
    """One system whose first reply waits at a gate, LLM-simulated seekers whose LLM calls are logged."""

    db: str
    gate_dir: str

    def __call__(self) -> RunManager:
        system = FileGatedCRS(AttributeCRS(catalog_view("redial")), self.gate_dir)
        return RunManager(store=Store(self.db), registry=CRSRegistry([spec("A", system)]),
                          llm=fake_llm(logged_calls(Path(self.gate_dir) / "calls")),
                          settings=Settings(db_path=self.db, turn_timeout_s=30),
                          simulator_factory=abus_factory)
