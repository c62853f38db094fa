import socket

import gradio as gr
import pytest
from sim_fakes import AttributeCRS, fake_llm, simulator_responder, spec

from arena.runtime.config import Settings
from webapp.services import Services
from arena.store import Store
from webapp.ui import evaluate_tab
from crs.registry import CRSRegistry


@pytest.fixture
def services(tmp_path, view):
    settings = Settings(db_path=tmp_path / "arena.sqlite3", max_turns=6)
    registry = CRSRegistry([spec("attr", AttributeCRS(view)), spec("attr2", AttributeCRS(view, ask_first=False))])
    s = Services(settings=settings, store=Store(settings.db_path), llm=fake_llm(simulator_responder()),
                 registry=registry)
    yield s
    s.close()


def wait_done(manager, run_id, timeout=60):
    assert manager.wait(run_id, timeout)
    return manager.status(run_id)


def test_tab_builds_and_starts_a_background_run(services):
    with gr.Blocks() as demo:
        evaluate_tab.build(services, page=demo)
    # The page offers the registry's systems and its Start button is wired to an event.
    systems = next(b for b in demo.blocks.values()
                   if isinstance(b, gr.CheckboxGroup) and b.label == "Systems")
    assert [value for _, value in systems.choices] == ["attr", "attr2"] and systems.value == ["attr"]
    start = next(b for b in demo.blocks.values() if getattr(b, "elem_id", None) == "evaluate-start")
    assert any((start._id, "click") in fn.targets for fn in demo.fns.values())
    manager = services.evaluation_runs
    assert services.evaluation_runs is manager  # one manager per process
    run_id = evaluate_tab.start_run(manager, ["attr", "attr2"], "llm_us", 2, 3, 11, 4, False)
    state = wait_done(manager, run_id)
    assert state["status"] == "finished"
    html = evaluate_tab.progress_html(state)
    assert 'value="4" max="4"' in html and "finished" in html and "llm_us" in html
    rows = evaluate_tab.table_rows(state)
    assert len(rows) == 4 and {r[0] for r in rows} == {"attr", "attr2"}
    assert evaluate_tab.run_choices(manager)[0][1] == run_id


def test_progress_text_is_escaped():
    html = evaluate_tab.progress_html({"status": "<b>x</b>", "total": 1, "done": 0, "config": {},
                                       "error": "<script>alert(1)</script>"})
    assert "<script>" not in html and "&lt;script&gt;" in html


def test_start_refuses_bad_input(services):
    manager = services.evaluation_runs
    with pytest.raises(gr.Error, match="at least one system"):
        evaluate_tab.start_run(manager, [], "llm_us", 2, 3, 0, 1, False)
    with pytest.raises(gr.Error, match="number of dialogues"):
        evaluate_tab.start_run(manager, ["attr"], "llm_us", 0, 3, 0, 1, False)


def test_through_the_running_app(services):
    from gradio_client import Client

    with gr.Blocks() as demo:
        evaluate_tab.build(services, page=demo)
    demo.queue()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    try:
        client = Client(f"http://127.0.0.1:{port}/", verbose=False)
        run_box, progress, table = client.predict(["attr"], "abus", 2, 2, 3, 2, False, api_name="/evaluate_start")
        run_id = run_box if isinstance(run_box, str) else run_box.get("value")
        manager = services.evaluation_runs
        assert wait_done(manager, run_id)["status"] == "finished"
        _, progress, table = client.predict(run_id, api_name="/evaluate_refresh")
        assert 'value="2" max="2"' in progress
        assert len(table["data"]) == 2
        stored = services.store.list_dialogues()
        assert {d.user.details["profile"]["nlu"] for d in stored} == {"LLM act annotator (fake:fake)"}
    finally:
        demo.close()


def test_a_run_can_have_the_simulated_users_fill_the_aspect_form(services):
    manager = services.evaluation_runs
    run_id = evaluate_tab.start_run(manager, ["attr"], "llm_us", 2, 3, 5, 2, False, True)
    assert wait_done(manager, run_id)["status"] == "finished"
    dialogues = services.store.list_dialogues()
    assert len(dialogues) == 2
    for d in dialogues:
        (rating,) = d.ratings
        # The scripted LLM answers the rating prompt with an ordinary message: every aspect stays unrated.
        assert rating.rater_kind.value == "simulator" and rating.prompt_version == "simulator_rating_v1"
        assert rating.values == {} and "no answer for understanding" in rating.error
    plain = evaluate_tab.start_run(manager, ["attr"], "llm_us", 1, 3, 6, 1, False)
    assert wait_done(manager, plain)["status"] == "finished"
    assert [d.ratings for d in services.store.list_dialogues() if d.metadata.get("run_id") == plain] == [[]]


def test_dialogues_under_way_are_listed_with_their_turns_and_times():
    now = 10_000.0
    state = {"status": "running", "total": 2, "done": 0, "config": {}, "active": {
        "d1": {"system": "<b>kbrd</b>", "index": 3, "turns": 1, "started": now - 840, "updated": now - 20}}}
    html = evaluate_tab.active_html(state, now=now)
    assert "Under way (1)" in html and "#3: 1 turn so far, running 14 min 00 s, last turn 20 s ago" in html
    assert "<b>kbrd" not in html and "&lt;b&gt;kbrd" in html
    assert evaluate_tab.active_html({"active": {}}) == ""
