"""Simulated runs on Ray (a local Ray with 2 CPUs): every dialogue a task, stored once, even when workers die."""

import time

import sqlalchemy as sa

from arena.runtime import distributed
from arena.store import Store
from arena.store import schema as t
from webapp.runs.evaluation import RunConfig, RunManager, run_dialogue_id

from ray_recipes import FakeRunRecipe, GatedRunRecipe

CONFIG = dict(systems=["A", "B"], simulator="abus", n_dialogues=3, max_turns=3, seed=7, concurrency=2,
              options={"nlg": "template"})


def _manager(recipe, engine="ray"):
    local = recipe()  # the driver's own manager: same store and systems as the workers build
    return RunManager(store=local.store, registry=local.registry, llm=local.llm, settings=local.settings,
                      simulator_factory=local.build_simulator, engine=engine, worker_recipe=recipe,
                      task_cpus=0.5)


def _run_ids(store, run_id):
    return sorted(d.dialogue_id for d in store.list_dialogues() if d.metadata.get("run_id") == run_id)


def test_ray_run_matches_the_thread_run(ray_local, tmp_path):
    recipe = FakeRunRecipe(str(tmp_path / "arena.sqlite3"))
    on_ray = _manager(recipe).run(RunConfig(**CONFIG), run_id="run-ray")
    on_threads = _manager(recipe, engine="threads").run(RunConfig(**CONFIG), run_id="run-threads")
    assert on_ray["status"] == on_threads["status"] == "finished"
    assert on_ray["done"] == on_ray["total"] == 6 and on_ray["failed"] == 0
    store = _manager(recipe).store
    expected = sorted(run_dialogue_id("run-ray", s, i) for s in "AB" for i in range(3))
    assert _run_ids(store, "run-ray") == expected
    # Same simulated users, same systems, same seeds: the same conversations on either engine.
    for system in "AB":
        for i in range(3):
            a = store.get_dialogue(run_dialogue_id("run-ray", system, i))
            b = store.get_dialogue(run_dialogue_id("run-threads", system, i))
            assert [u.text for u in a.utterances] == [u.text for u in b.utterances]


def test_a_worker_killed_mid_dialogue_is_retried_and_stored_once(ray_local, tmp_path):
    recipe = FakeRunRecipe(str(tmp_path / "arena.sqlite3"), str(tmp_path), die_on=(1,), die_times=1)
    final = _manager(recipe).run(RunConfig(**CONFIG), run_id="run-retry")
    assert list(tmp_path.glob("died-1-*")), "the worker never died: the test tested nothing"
    assert final["status"] == "finished" and final["done"] == 6 and final["failed"] == 0
    store = _manager(recipe, engine="threads").store
    assert len(_run_ids(store, "run-retry")) == 6 == store.count_dialogues()
    retried = store.get_dialogue(run_dialogue_id("run-retry", "A", 1))
    assert retried.ended and not retried.metadata.get("errors")


def test_a_dialogue_whose_worker_always_dies_is_kept_with_its_error(ray_local, tmp_path):
    recipe = FakeRunRecipe(str(tmp_path / "arena.sqlite3"), str(tmp_path), die_on=(2,), die_times=99)
    final = _manager(recipe).run(RunConfig(**CONFIG), run_id="run-lost")
    assert final["status"] == "finished" and final["done"] == 6 and final["failed"] == 1
    assert len(list(tmp_path.glob("died-2-*"))) == 1 + distributed.MAX_RETRIES
    store = _manager(recipe, engine="threads").store
    lost = store.get_dialogue(run_dialogue_id("run-lost", "A", 2))
    assert "worker lost" in lost.metadata["errors"][0] and lost.end_reason == "error"
    assert len(_run_ids(store, "run-lost")) == 6


def test_an_interrupted_run_resumes_without_redoing_stored_dialogues(ray_local, tmp_path):
    recipe = FakeRunRecipe(str(tmp_path / "arena.sqlite3"))
    manager = _manager(recipe)

    def interrupt(dialogue, row):
        raise RuntimeError("the driver went away")

    assert manager.run(RunConfig(**CONFIG), run_id="run-cut", on_dialogue=interrupt)["status"] == "failed"
    time.sleep(3)  # tasks already handed to Ray finish and store their dialogues
    before = {d.dialogue_id: d.created_at for d in manager.store.list_dialogues()}
    assert 1 <= len(before) < 6
    for engine in ("threads", "ray"):
        final = _manager(recipe, engine=engine).run(None, run_id="run-cut", resume=True)
        assert final["status"] == "finished" and final["done"] == final["total"] == 6
    after = {d.dialogue_id: d.created_at for d in manager.store.list_dialogues()}
    assert len(after) == 6 and all(after[i] == t for i, t in before.items())
    assert sorted(r["dialogue_id"] for r in final["dialogues"]) == sorted(after)


def test_ray_workers_make_no_llm_call_once_another_process_took_the_run_over(ray_local, tmp_path):
    """The driver's lease runs out while its Ray tasks are mid-dialogue and another process resumes the run:
    the tasks' dialogues make no further (paid) LLM call and store nothing, as the driver's own threads do."""
    gate = tmp_path / "gate"
    gate.mkdir()
    recipe = GatedRunRecipe(str(tmp_path / "arena.sqlite3"), str(gate))
    driver = _manager(recipe)
    run_id = driver.start(RunConfig(systems=["A"], simulator="llm_us", n_dialogues=4, max_turns=8,
                                    concurrency=2))
    deadline = time.monotonic() + 120
    while len(list(gate.glob("waiting-*"))) < 2:  # two tasks mid-dialogue, each after a paid LLM call
        assert time.monotonic() < deadline, "the Ray tasks never started their dialogues"
        time.sleep(0.1)
    resumer = Store(recipe.db)
    for _ in range(5):  # (a renewal of the driver's may come between the two statements: then again)
        with resumer.write() as conn:  # the driver stalled past its lease ...
            conn.execute(sa.update(t.runs).where(t.runs.c.run_id == run_id).values(lease_until="2000-01-01"))
        if resumer.claim_run(run_id):  # ... and another process took the run over
            break
    assert resumer.run_lease(run_id)[0] == resumer.owner_id
    calls = (gate / "calls").read_text().split()
    assert len(calls) >= 2
    (gate / "go").touch()
    assert driver.wait(run_id, timeout=120)
    assert (gate / "calls").read_text().split() == calls  # not one call after the takeover
    assert _run_ids(resumer, run_id) == []  # and nothing stored under the lost lease
    resumer.close()
