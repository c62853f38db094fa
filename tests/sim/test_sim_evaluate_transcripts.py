"""The Evaluate tab lists a finished run's dialogues with their stored scores and opens a transcript."""

import pytest
from sim_fakes import AttributeCRS, fake_llm, simulator_responder, spec

from arena.runtime.config import Settings
from arena.dialogue import Score
from arena.store import Store
from crs.registry import CRSRegistry
from webapp.services import Services
from webapp.ui import evaluate_tab


@pytest.fixture
def services(tmp_path, view):
    settings = Settings(db_path=tmp_path / "arena.sqlite3", max_turns=6)
    s = Services(settings=settings, store=Store(settings.db_path), llm=fake_llm(simulator_responder()),
                 registry=CRSRegistry([spec("attr", AttributeCRS(view))]))
    yield s
    s.close()


def test_a_finished_runs_dialogues_show_their_scores_and_open_as_transcripts(services):
    manager = services.evaluation_runs
    run_id = evaluate_tab.start_run(manager, ["attr"], "llm_us", 2, 3, 5, 2, False)
    assert manager.wait(run_id, 60)
    state = manager.status(run_id)
    first = state["dialogues"][0]["dialogue_id"]
    services.store.save_scores(first, {"rdl": Score(value=0.25, scorer="rdl", version="1"),
                                       "sr": Score(value=None, scorer="sr", version="1", error="no acts")})
    rows = evaluate_tab.table_rows(state, evaluate_tab.run_scores(services, state))
    by_id = {row[evaluate_tab.SHOWN_COLUMNS.index("dialogue_id")]: row[-1] for row in rows}
    assert by_id[first] == "rdl 0.25 · sr unscored"
    assert set(by_id.values()) - {by_id[first]} == {"not scored yet"}
    text = evaluate_tab.transcript_markdown(services, first)
    lines = text.splitlines()
    assert any(line.startswith("**User:** ") for line in lines) and any(line.startswith("**System:** ")
                                                                        for line in lines)
    # Each speaker on a line of its own, with a blank line between turns (Markdown would join them otherwise).
    speakers = [n for n, line in enumerate(lines) if line.startswith(("**User:**", "**System:**"))]
    assert all(lines[n - 1] == "" or lines[n - 1].startswith("_") or lines[n - 1].startswith("  ")
               for n in speakers[1:])
    assert "Scores: rdl 0.25 · sr unscored" in text
    assert "Choose a dialogue" in evaluate_tab.transcript_markdown(services, "no-such-id")
    # A run under way lists no scores yet.
    assert evaluate_tab.run_scores(services, {**state, "status": "running"}) == {}


@pytest.mark.browser
@pytest.mark.slow
def test_the_evaluate_tab_reads_at_400_px_and_opens_a_transcript(services, browser):
    import socket

    import gradio as gr

    from tests.support.browser import PHONE, shoot

    manager = services.evaluation_runs
    run_id = evaluate_tab.start_run(manager, ["attr"], "llm_us", 2, 3, 5, 2, False)
    assert manager.wait(run_id, 60)
    state = manager.status(run_id)
    with gr.Blocks() as demo:
        evaluate_tab.build(services, page=demo)
    demo.queue()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    try:
        page = browser.page(PHONE)
        page.goto(f"http://127.0.0.1:{port}/", wait_until="load")
        page.locator("#evaluate-progress").get_by_text("finished").wait_for()
        header = page.locator("#evaluate-table th").filter(has_text="turns").first
        header.wait_for()
        assert header.bounding_box()["height"] < 60  # not one letter per line
        page.locator("#evaluate-dialogue textarea, #evaluate-dialogue input").first.fill(
            state["dialogues"][0]["dialogue_id"])
        page.locator("#evaluate-read").click()
        page.locator("#evaluate-transcript").get_by_text("User:").first.wait_for()
        shoot(page, browser.shots, "evaluate-transcript-400px")
    finally:
        demo.close()
