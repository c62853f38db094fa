"""Everything a session needs, built once per process and passed to the UI.

The Gradio layer receives one `Services` object; nothing in the UI is a
module-level global. Tests build their own `Services` with a fake LLM and
fake systems.

Besides the settings, store, LLM, systems and scorer, a `Services` holds the
per-process state of the participant sessions and their protection (the turn
guard, the battle book, the pair scheduler, the vote and label limiters, the
origin salt, the session identities) and the evaluation run manager. None of it
is the only copy of anything: every session step is checked against the store
(webapp.sessions.turn_step), so several processes may share one database. Each is a typed attribute made on
first use, once per `Services`: several need the store, some start threads,
and a test that never opens a battle should not build a scheduler.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable, Optional, TypeVar

from arena.catalogs import retrieval
from arena.runtime.config import Settings
from arena.dialogue import Dialogue
from arena.llm import LLMClient, build_client
from arena.llm.budget import budgeted_client
from arena.conversation.runner import DialogueRunner
from arena.store import Store
from arena.conversation.crs_interface import CRSSpec
from crs.registry import CRSRegistry
from webapp.runs.scorer import BackgroundScorer

if TYPE_CHECKING:  # the session and protection modules import this one
    from webapp.protection.identity import SessionIdentities
    from webapp.protection.label_limits import LabelGuard
    from webapp.protection.vote_limits import VoteLimiter
    from webapp.runs.evaluation import RunManager
    from webapp.sessions.battle_state import BattleBook
    from webapp.sessions.pairing import SharedPairScheduler
    from webapp.sessions.turn_guard import TurnGuard
    from webapp.sessions.turns_in_flight import TurnsInFlight
    from webapp.warm_start import WarmUp

T = TypeVar("T")

log = logging.getLogger(__name__)

UTILITY_METRICS = "acts,rdl,srrr,sr"
# CoRE needs a capable judge: by default it runs only when an endpoint is configured.
ALL_METRICS = UTILITY_METRICS + ",core"


def default_metrics(settings: Settings) -> str:
    return ALL_METRICS if settings.llm_provider == "openai" else UTILITY_METRICS


@dataclass
class Services:
    settings: Settings
    store: Store
    llm: LLMClient
    registry: CRSRegistry
    scorer: Optional[BackgroundScorer] = None
    # The models loading in the background after the server started (None: no warm-up, models load on
    # first use); a turn for a system still loading waits for it (webapp.sessions.warming).
    warming: Optional["WarmUp"] = None
    # The per-process parts below are made on first use (see `_once`); a test may set one beforehand.
    _parts: dict[str, object] = field(default_factory=dict, repr=False)
    _parts_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def _once(self, name: str, make: Callable[[], T]) -> T:
        """The part called `name`, made by `make` the first time; concurrent first uses get one object."""
        with self._parts_lock:
            if name not in self._parts:
                self._parts[name] = make()
            return self._parts[name]  # type: ignore[return-value]

    @property
    def turn_guard(self) -> "TurnGuard":
        """Serialises the steps of one browser session and recognises a message sent twice."""
        from webapp.sessions.turn_guard import TurnGuard
        return self._once("turn_guard", TurnGuard)

    @property
    def turns_in_flight(self) -> "TurnsInFlight":
        """The browser sessions whose turn is being answered, kept by the idle sweep when their page closed."""
        from webapp.sessions.turns_in_flight import TurnsInFlight
        return self._once("turns_in_flight", lambda: TurnsInFlight(2 * self.settings.turn_timeout_s))

    @property
    def battle_book(self) -> "BattleBook":
        """Each participant's current battle, so a reload resumes it."""
        from webapp.sessions.battle_state import BattleBook
        return self._once("battle_book", BattleBook)

    @property
    def pair_scheduler(self) -> "SharedPairScheduler":
        """Chooses a battle's two systems, counting battles stored or under way in any app process."""
        from webapp.sessions.pairing import SharedPairScheduler
        return self._once("pair_scheduler", lambda: SharedPairScheduler(self.store))

    @pair_scheduler.setter
    def pair_scheduler(self, scheduler: "SharedPairScheduler") -> None:
        with self._parts_lock:
            self._parts["pair_scheduler"] = scheduler

    @property
    def vote_limiter(self) -> "VoteLimiter":
        """Battles and votes per user and per network in a time window."""
        from webapp.protection.vote_limits import Limits, VoteLimiter
        return self._once("vote_limiter", lambda: VoteLimiter(Limits.from_settings(self.settings), self.store))

    @property
    def label_guard(self) -> "LabelGuard":
        """Limits on how fast a person labels dialogues, and the flag on labels that look careless."""
        from webapp.protection.label_limits import LabelGuard
        return self._once("label_guard", lambda: LabelGuard(self.settings, self.store))

    @property
    def identities(self) -> "SessionIdentities":
        """Who a browser session is (derived with the database's secret, so every process agrees)."""
        from webapp.protection.identity import IDENTITY_SECRET_KEY, SessionIdentities
        return self._once("identities",
                          lambda: SessionIdentities(self.store.get_or_create_secret(IDENTITY_SECRET_KEY)))

    @property
    def origin_salt(self) -> str:
        """The database's own secret that salts hashed user and network keys."""
        return self._once("origin_salt", lambda: self.store.get_or_create_secret("origin_salt"))

    @property
    def evaluation_runs(self) -> "RunManager":
        """Simulated evaluation runs started from the Evaluate tab, running in the background."""
        return self._once("evaluation_runs", self.run_manager)

    def run_manager(self, **options: Any) -> "RunManager":
        """A new run manager over these services' store, systems, LLM and scorer (`options`: the
        engine and its settings, see `RunManager`); the app's own is `evaluation_runs`."""
        from webapp.runs.evaluation import RunManager
        return RunManager(store=self.store, registry=self.registry, llm=self.llm, settings=self.settings,
                          scorer=self.scorer, **options)

    def runner_for(self, crs_name: str) -> DialogueRunner:
        return DialogueRunner(
            self.registry.get(crs_name),
            max_turns=self.settings.max_turns,
            turn_timeout_s=self.settings.turn_timeout_s,
            max_message_chars=self.settings.max_message_chars,
        )

    def dialogue_finished(self, dialogue: Dialogue, version: Optional[int] = None) -> None:
        """Persist an ended dialogue (over the stored `version` when given: `Store.save_dialogue_checked`)
        and queue its automatic scoring (in the store, so it survives a crash)."""
        if version is None:
            self.store.save_dialogue(dialogue)
        else:
            self.store.save_dialogue_checked(dialogue, version)
        try:
            if self.scorer is not None:
                self.scorer.submit(dialogue.dialogue_id)
            else:  # another process's workers will take it
                self.store.enqueue_scoring([dialogue.dialogue_id])
        except Exception:  # scoring must never break the conversation flow
            log.exception("could not queue scoring for %s", dialogue.dialogue_id)

    def close(self) -> None:
        with self._parts_lock:
            runs = self._parts.get("evaluation_runs")
        if runs is not None:
            runs.stop_resuming()
        if self.scorer is not None and hasattr(self.scorer, "shutdown"):
            self.scorer.shutdown()


def default_specs(settings: Settings, llm: LLMClient) -> list[CRSSpec]:
    """ChatCRS, CRB-CRS and the neural systems (see `crs.systems`); ChatCRS reads the user's act
    with the learnt act model (its rules when the model cannot be loaded)."""
    from crs.systems import system_specs
    from evaluators.acts.intent_readers import UserActReader

    return system_specs(settings, llm, act_reader=UserActReader())


def build_scorer(settings: Settings, store: Store, llm: LLMClient,
                 metrics: Optional[str] = None) -> Optional[BackgroundScorer]:
    """The durable background scorer, with the settings (so the act annotator follows the endpoint)."""
    if metrics is None:
        metrics = settings.score_metrics or default_metrics(settings)
    names = [m.strip() for m in metrics.split(",") if m.strip()]
    if not names:
        return None
    if settings.scoring_budget:  # scoring's endpoint calls bounded per hour (ARENA_SCORING_BUDGET)
        llm = budgeted_client(llm, settings.scoring_budget)
    return BackgroundScorer(store, names, llm, settings=settings, workers=settings.scorer_workers)


def build_services(
    settings: Optional[Settings] = None,
    *,
    llm: Optional[LLMClient] = None,
    specs: Optional[Iterable[CRSSpec]] = None,
    metrics: Optional[str] = None,
    run_scorer: bool = True,
) -> Services:
    """Everything the app needs. With `run_scorer` (the public app) scoring workers start and resume
    the stored queue; without (the researcher app) finished dialogues are only queued in the store."""
    settings = settings or Settings.from_env()
    retrieval.use_device(settings.device)
    store = Store(settings.db_path)
    llm = llm or build_client(settings)
    registry = CRSRegistry(specs if specs is not None else default_specs(settings, llm))
    scorer = build_scorer(settings, store, llm, metrics) if run_scorer else None
    if scorer is not None:
        scorer.resume()
    return Services(settings=settings, store=store, llm=llm, registry=registry, scorer=scorer)
