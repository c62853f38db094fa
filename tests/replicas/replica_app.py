"""One app replica in its own process, for the replica tests: the app's services on a shared database,
driven step by step through the same session functions the Chat and Battle tabs call.

    python replica_app.py DB_URL NAME [--scorer-delay S] [--workers N] [--runs] [--reply-delay S]

Reads one JSON command a line on stdin and answers one JSON line on stdout.
The replica keeps what a browser page would keep on the server (the page's
conversation, per user) in its own memory, exactly as the app's per-process
state does; what the tests check is that nothing of that memory decides what
is stored. With `--scorer-delay` the replica runs the app's background scorer
(the store's queue, leases and all) with an act annotator whose every LLM call
takes that long, so jobs are still running when a test kills the process.
With `--runs` the replica holds an evaluation run manager (simulated seekers
and a slow system, scripted LLM) that looks for interrupted runs to resume,
as the app's serving processes do (`webapp.serve.main`). With `--reply-delay` every
reply of the Chat and Battle systems takes that long, so a message sent to two
replicas at once is being answered on both at the same time.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from typing import Any, Optional

from arena.runtime.config import Settings
from arena.dialogue import Dialogue
from arena.llm import FakeProvider, LLMClient, RetryPolicy
from arena.store import Store
from crs.registry import CRSRegistry
from evaluators.acts.llm import LLMActAnnotator
from tests.acts.test_acts_scoring import keyword_llm
from webapp.runs.evaluation import RunConfig, RunManager
from webapp.runs.scorer import BackgroundScorer
from webapp.services import Services
from webapp.sessions import battle, chat, participants, study
from webapp.sessions.refusal import Refusal
from webapp.sessions.turn_step import CHANGED_ELSEWHERE

from battle_support import FakeCatalogCRS, fake_spec
from tests.study.study_support import pid
from sim_fakes import AttributeCRS, SlowCRS, fake_llm, question_nlu, simulator_responder, spec

SYSTEMS = ["alpha", "bravo"]


def build(db: str, scorer_delay: Optional[float], workers: int, reply_delay: float = 0.0) -> Services:
    settings = Settings.from_env(db_path=db, llm_provider="fake", max_turns=8, min_user_turns=1, min_battle_s=0.0,
                        burst_votes=10_000, burst_labels=10_000, max_rated_per_user=10_000,
                        max_rated_per_ip=10_000)
    store = Store(db)
    scorer = None
    if scorer_delay is not None:
        def slow_judge(request: Any) -> str:
            time.sleep(scorer_delay)
            return keyword_llm(request)

        judge = LLMClient(FakeProvider(slow_judge), retry=RetryPolicy(max_retries=0, base_delay_s=0.01))
        scorer = BackgroundScorer(store, ["rdl", "sr"], judge, settings=settings, workers=workers, poll_s=0.2,
                                  annotator=LLMActAnnotator(judge, use_catalog=False))
        scorer.resume()  # what the app does on start
    return Services(settings=settings, store=store,
                    llm=LLMClient(FakeProvider(default="ok"), retry=RetryPolicy(base_delay_s=0.01)),
                    registry=CRSRegistry([fake_spec(FakeCatalogCRS(s, delay_s=reply_delay))
                                          for s in SYSTEMS]),
                    scorer=scorer)


def texts(dialogue: Optional[Dialogue]) -> Optional[list[str]]:
    return None if dialogue is None else [u.text for u in dialogue.utterances]


def run_manager(services: Services) -> RunManager:
    """Evaluation runs of one slow system with LLM-simulated seekers; it resumes other replicas' runs."""
    from simulators import build_simulator, catalog_view

    slow = SlowCRS(AttributeCRS(catalog_view("redial")), 0.05)
    manager = RunManager(store=services.store, registry=CRSRegistry([spec("slow", slow)]),
                         llm=fake_llm(simulator_responder()), settings=services.settings,
                         simulator_factory=lambda kind, **kw: build_simulator(kind, nlu=question_nlu, **kw))
    manager.keep_resuming(services.settings.run_resume_s)  # what every serving process does
    return manager


class Replica:
    def __init__(self, services: Services, runs: Optional[RunManager] = None):
        self.services = services
        self.runs = runs
        self.pages: dict[str, Optional[Dialogue]] = {}  # user -> the Chat page's conversation
        self.battle_pages: dict[str, Optional[str]] = {}  # user -> the battle the Battle page shows
        self.study_pages: dict[str, dict] = {}  # worker -> what the study page drew of each conversation

    # -- Chat ------------------------------------------------------------------------------
    def chat_open(self, user: str) -> dict:
        """A page (re)loaded: the conversation under way, as `resumable` finds it."""
        self.pages[user] = chat.resumable(self.services, user)
        return {"turns": texts(self.pages[user])}

    def chat_send(self, user: str, text: str, message_id: Optional[str] = None, new: bool = False) -> dict:
        """The Chat tab's Send (`new`: on a page where "New conversation" was pressed first)."""
        page = None if new else self.pages.get(user)
        if page is None and not new:
            page = chat.resumable(self.services, user)
        if page is None:
            page, _ = chat.start_conversation(self.services, "alpha", user)
        dialogue, status = chat.send_message(self.services, page, text, session_key=user, message_id=message_id)
        self.pages[user] = dialogue
        return {"status": status, "turns": texts(dialogue), "id": dialogue.dialogue_id if dialogue else None}

    def chat_rate(self, user: str, sentiment: str) -> dict:
        dialogue, status = chat.give_feedback(self.services, self.pages.get(user), sentiment, "", session_key=user)
        self.pages[user] = dialogue
        return {"status": status, "turns": texts(dialogue)}

    def delete_own(self, user: str) -> dict:
        """The "Your data" panel's deletion (and what it forgets in this process)."""
        counts = participants.delete_own(self.services.store, user)
        self.services.battle_book.forget(user)
        self.services.turn_guard.forget(user)
        return {"deleted": counts}

    # -- Battle ----------------------------------------------------------------------------
    def battle_start(self, user: str) -> dict:
        session = battle.start_battle(self.services, user, battle.current(self.services, user))
        self.battle_pages[user] = session.battle_id
        return {"battle": session.battle_id}

    def battle_send(self, user: str, side: str, text: str) -> dict:
        """A message in one pane of the Battle page: a page behind the store (its battle voted, deleted or
        replaced elsewhere) gets the line and is drawn as the store has the battle now."""
        session = battle.current(self.services, user)
        if battle.page_behind(session, self.battle_pages.get(user)):
            self.battle_pages[user] = session.battle_id if session is not None else None
            return {"status": CHANGED_ELSEWHERE, **self.battle_view(user)}
        return {"status": battle.send(self.services, session, side, text)}

    def battle_rate(self, user: str, side: str, sentiment: str) -> dict:
        session = battle.current(self.services, user)
        return {"both": battle.rate(self.services, session, side, sentiment)}

    def battle_vote(self, user: str, choice: str) -> dict:
        session = battle.current(self.services, user)
        return {"vote": battle.vote(self.services, session, choice, "", user).vote_id}

    def battle_view(self, user: str) -> dict:
        session = battle.current(self.services, user)
        if session is None:
            return {"battle": None}
        return {"battle": session.battle_id, "sides": {s: texts(d) for s, d in session.dialogues.items()},
                "rated": {s: session.rated(s) for s in session.dialogues}}

    # -- Study ------------------------------------------------------------------------------
    def study_start(self, study_id: str, worker: str) -> dict:
        """A worker opens the study link (Prolific-format ids stand for the name `worker`), consents and
        presses Start, which takes the task's place."""
        found, p = study.enter(self.services, {"study": study_id, "PROLIFIC_PID": pid(worker)})
        study.consent(self.services, found, p)
        study.begin(self.services, found, p)
        p = self.services.store.get_participant(p.study_id, p.pseudonym)
        task = p.data.get("task") or {}
        return {"step": p.data.get("step"), "dialogues": sorted((task.get("dialogues") or {}).values()),
                "cell": task.get("cell"), "claim": task.get("claim")}

    def study_send(self, study_id: str, worker: str, text: str) -> dict:
        """The worker's message in their task's first conversation (the place was taken at Start)."""
        found, p = study.enter(self.services, {"study": study_id, "PROLIFIC_PID": pid(worker)})
        study.send(self.services, found, p, study.sides(found)[0], text)
        p = self.services.store.get_participant(p.study_id, p.pseudonym)
        self._draw_study(worker, p)
        task = p.data.get("task") or {}
        dialogues = study.task_dialogues(self.services, p).values()
        return {"claim": task.get("claim"), "cell": task.get("cell"),
                "turns": [u.text for d in dialogues for u in d.user_turns()]}

    def study_open(self, study_id: str, worker: str) -> dict:
        """The worker's study page (re)loaded: drawn from the store, as `webapp.ui.study_page` draws it."""
        _, p = study.enter(self.services, {"study": study_id, "PROLIFIC_PID": pid(worker)})
        return self._draw_study(worker, p)

    def study_rate(self, study_id: str, worker: str, sentiment: str) -> dict:
        """A verdict button of the task's first conversation, from the page as this replica last drew it;
        the page is drawn again afterwards, refused or not (as the study page's handlers do)."""
        found, p = study.enter(self.services, {"study": study_id, "PROLIFIC_PID": pid(worker)})
        side = study.sides(found)[0]
        try:
            study.rate(self.services, found, p, side, sentiment,
                       shown=self.study_pages.get(worker, {}).get(side))
        finally:
            self._draw_study(worker, self.services.store.get_participant(p.study_id, p.pseudonym))
        return {"verdicts": self.study_verdicts(worker)}

    def _draw_study(self, worker: str, p: Any) -> dict:
        dialogues = study.task_dialogues(self.services, p) if p.data.get("step") == "task" else {}
        self.study_pages[worker] = {side: study.PageView.of(d) for side, d in dialogues.items()}
        return {"verdicts": self.study_verdicts(worker)}

    def study_verdicts(self, worker: str) -> dict:
        return {side: view.verdict for side, view in self.study_pages.get(worker, {}).items()}

    # -- Evaluate -----------------------------------------------------------------------------
    def run_start(self, n_dialogues: int, concurrency: int = 2) -> dict:
        run_id = self.runs.start(RunConfig(systems=["slow"], simulator="llm_us", n_dialogues=n_dialogues,
                                           max_turns=10, concurrency=concurrency))
        return {"run": run_id}

    # -- the process ------------------------------------------------------------------------
    def owner(self) -> dict:
        return {"owner": self.services.store.owner_id}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("db")
    parser.add_argument("name")
    parser.add_argument("--scorer-delay", type=float, default=None)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--runs", action="store_true")
    parser.add_argument("--reply-delay", type=float, default=0.0)
    args = parser.parse_args()
    services = build(args.db, args.scorer_delay, args.workers, args.reply_delay)
    replica = Replica(services, run_manager(services) if args.runs else None)
    print(json.dumps({"ready": args.name, "owner": replica.services.store.owner_id}), flush=True)
    for line in sys.stdin:
        command = json.loads(line)
        op = command.pop("op")
        try:
            answer = getattr(replica, op)(**command)
        except Refusal as exc:
            answer = {"refused": exc.text}
        except Exception as exc:  # reported to the test, which fails with it
            answer = {"error": f"{type(exc).__name__}: {exc}", "trace": traceback.format_exc()}
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
