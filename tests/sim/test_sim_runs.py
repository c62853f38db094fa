import threading
import time

import pytest
from sim_fakes import AttributeCRS, BrokenCRS, SlowCRS, fake_llm, question_nlu, simulator_responder, spec

from arena.runtime.config import Settings
from arena.dialogue import UserKind
from webapp.runs.evaluation import RunConfig, RunManager, dialogue_seed, mark_stale
from arena.store import Store
from arena.conversation.crs_interface import ConversationalRecommender
from crs.registry import CRSRegistry
from simulators import build_simulator


class RecordingScorer:
    def __init__(self):
        self.submitted = []

    def submit(self, dialogue_id):
        self.submitted.append(dialogue_id)


def abus_factory(kind, **kwargs):
    return build_simulator(kind, nlu=question_nlu, **kwargs)


@pytest.fixture
def make_manager(tmp_path, view):
    def make(systems, llm=None, scorer=None, factory=abus_factory):
        store = Store(tmp_path / "arena.sqlite3")
        registry = CRSRegistry([spec(name, crs) for name, crs in systems.items()])
        settings = Settings(db_path=tmp_path / "arena.sqlite3", turn_timeout_s=10)
        return RunManager(store=store, registry=registry, llm=llm or fake_llm(simulator_responder()),
                          settings=settings, scorer=scorer, simulator_factory=factory)
    return make


def test_background_run_stores_every_dialogue_as_simulated_and_queues_scoring(make_manager, view):
    scorer = RecordingScorer()
    manager = make_manager({"A": AttributeCRS(view), "B": AttributeCRS(view, ask_first=False)}, scorer=scorer)
    run_id = manager.start(RunConfig(systems=["A", "B"], simulator="llm_us", n_dialogues=3, max_turns=4,
                                     seed=5, concurrency=3))
    assert manager.wait(run_id, timeout=60)
    state = manager.status(run_id)
    assert state["status"] == "finished" and state["done"] == state["total"] == 6 and state["failed"] == 0
    stored = manager.store.list_dialogues()
    assert len(stored) == 6 and sorted(scorer.submitted) == sorted(d.dialogue_id for d in stored)
    for d in stored:
        assert d.user.kind == UserKind.SIMULATOR and d.user.simulator == "llm_us"
        assert d.metadata["run_id"] == run_id and d.ended and d.feedback is not None
        assert d.user.details["seed"] == dialogue_seed(5, d.metadata["run_index"])
    # the same simulated users meet both systems
    goals = {(d.crs_id, d.metadata["run_index"]): d.user.details["profile"]["goal"] for d in stored}
    assert all(goals[("A", i)] == goals[("B", i)] for i in range(3))
    # a fresh manager (a reloaded page, another process) reads the same state from the store
    again = make_manager({"A": AttributeCRS(view)}).status(run_id)
    assert again["status"] == "finished" and len(again["dialogues"]) == 6


def test_failing_dialogues_are_kept_with_their_errors(make_manager, view):
    manager = make_manager({"ok": AttributeCRS(view), "broken": BrokenCRS()})
    final = manager.run(RunConfig(systems=["ok", "broken"], simulator="abus", n_dialogues=2, max_turns=3,
                                  options={"nlg": "template"}))
    assert final["status"] == "finished" and final["done"] == 4 and final["failed"] == 2
    broken = manager.store.list_dialogues(crs_id="broken")
    assert len(broken) == 2
    for d in broken:
        assert d.agent_turns() and all("model crashed" in (u.error or "") for u in d.agent_turns())
    rows = [r for r in final["dialogues"] if r["system"] == "broken"]
    assert all(r["errors"] and "model crashed" in r["error"] for r in rows)


def test_llm_failures_end_the_dialogue_but_it_is_stored(make_manager, view):
    from arena.llm import TransientLLMError

    llm = fake_llm(lambda request: TransientLLMError("HTTP 503"), max_retries=1)
    manager = make_manager({"A": AttributeCRS(view)}, llm=llm)
    final = manager.run(RunConfig(systems=["A"], simulator="llm_us", n_dialogues=3, max_turns=3))
    assert final["done"] == 3 and final["failed"] == 3
    for d in manager.store.list_dialogues():
        assert d.end_reason == "simulator_error" and "failed after 2 attempts" in d.metadata["errors"][0]


def test_a_run_can_be_cancelled(make_manager, view):
    slow = SlowCRS(AttributeCRS(view), 0.05)
    manager = make_manager({"slow": slow})
    run_id = manager.start(RunConfig(systems=["slow"], simulator="llm_us", n_dialogues=40, max_turns=20,
                                     concurrency=2))
    assert slow.called.wait(10)
    assert manager.cancel(run_id)
    assert manager.wait(run_id, timeout=30)
    state = manager.status(run_id)
    assert state["status"] == "cancelled" and state["done"] < 40
    stored = manager.store.list_dialogues()
    assert len(stored) == state["done"]  # started dialogues are kept, unstarted ones never existed
    assert any(d.metadata.get("cancelled") for d in stored)
    assert not manager.cancel(run_id)


def test_configuration_is_checked(make_manager, view):
    manager = make_manager({"A": AttributeCRS(view)})
    for bad, message in [
        (RunConfig(systems=[], simulator="abus"), "at least one system"),
        (RunConfig(systems=["A"], simulator="nope"), "unknown simulator"),
        (RunConfig(systems=["A"], simulator="abus", n_dialogues=0), "number of dialogues"),
        (RunConfig(systems=["Z"], simulator="abus"), "unknown CRS"),
    ]:
        with pytest.raises((ValueError, KeyError), match=message):
            manager.start(bad)


def test_dialogues_under_way_show_their_turns_until_they_finish(make_manager, view):
    slow = SlowCRS(AttributeCRS(view), 0.3)
    manager = make_manager({"slow": slow})
    run_id = manager.start(RunConfig(systems=["slow"], simulator="abus", n_dialogues=1, max_turns=4,
                                     options={"nlg": "template"}))
    seen = []
    deadline = time.time() + 30
    while manager.is_active(run_id) and time.time() < deadline:
        active = (manager.status(run_id) or {}).get("active") or {}
        seen += [entry["turns"] for entry in active.values()]
        time.sleep(0.05)
    assert manager.wait(run_id, timeout=30)
    assert seen and max(seen) >= 2  # the row grew turn by turn while the dialogue ran
    final = manager.status(run_id)
    assert final["status"] == "finished" and final["active"] == {}
    assert manager.store.get_run(run_id)["active"] == {}  # the stored state says so too


def test_runs_of_a_dead_process_show_as_interrupted():
    state = {"status": "running", "heartbeat": time.time() - 3600, "active": {"d": {"turns": 3}}}
    assert mark_stale(state)["status"] == "interrupted" and mark_stale(state)["active"] == {}
    assert mark_stale({"status": "running", "heartbeat": time.time()})["status"] == "running"
    assert mark_stale({"status": "finished", "heartbeat": 0})["status"] == "finished"


def test_dialogues_run_concurrently(make_manager, view):
    active, peak, lock = [0], [0], threading.Lock()

    class Counting(ConversationalRecommender):
        def respond(self, dialogue):
            with lock:
                active[0] += 1
                peak[0] = max(peak[0], active[0])
            time.sleep(0.05)
            with lock:
                active[0] -= 1
            return "Which genre?", []

    manager = make_manager({"c": Counting()})
    final = manager.run(RunConfig(systems=["c"], simulator="abus", n_dialogues=8, max_turns=2, concurrency=8,
                                  options={"nlg": "template"}))
    assert final["done"] == 8 and peak[0] >= 4


def test_a_run_started_where_no_scorer_runs_is_scored_by_a_process_that_has_one(make_manager, view, tmp_path):
    """The researcher app has no scorer: its run's dialogues wait in the store's queue, and the public
    app's scorer (another process, here another Store on the same file) scores them."""
    from evaluators.acts.llm import LLMActAnnotator
    from tests.acts.test_acts_scoring import fake_client
    from webapp.runs.scorer import BackgroundScorer

    manager = make_manager({"A": AttributeCRS(view)})  # scorer=None, as in the researcher app
    final = manager.run(RunConfig(systems=["A"], simulator="abus", n_dialogues=3, max_turns=3,
                                  options={"nlg": "template"}))
    assert final["status"] == "finished" and final["done"] == 3
    assert manager.store.scoring_counts()["queued"] == 3
    public = Store(tmp_path / "arena.sqlite3")
    scorer = BackgroundScorer(public, ["rdl", "sr"], annotator=LLMActAnnotator(fake_client(), use_catalog=False),
                              poll_s=0.1)
    try:
        deadline = time.time() + 60
        while public.scoring_counts()["done"] < 3 and time.time() < deadline:
            time.sleep(0.1)
    finally:
        scorer.shutdown()
    assert public.scoring_counts()["done"] == 3
    assert all("rdl" in d.scores for d in public.list_dialogues())
