"""The study page served by the real app, driven over HTTP with gradio_client: quotas under concurrent
workers, resuming after a reload, a worker who tries twice, and the link on the public page."""

from __future__ import annotations

import threading
from collections import Counter

import httpx
import pytest

from arena.crowd.aspects import load_form
from arena.crowd.study import parse_study
from study_support import pid, publish, study_yaml
from tests.support.asgi_server import running
from webapp.one_port import STUDY_REDIRECT
from webapp.serve import build_app


NO_ASPECTS = [None] * len(load_form().dialogue)  # the aspect form's questions, left open


@pytest.fixture
def served(services):
    with running(build_app(services)) as url:
        yield url


def client(url: str):
    from gradio_client import Client

    return Client(url + "/study/", verbose=False, httpx_kwargs={"timeout": 120})


def shown(outputs) -> str:
    """Everything the page shows, as one text (the outputs of one call)."""
    return " ".join(str(o) for o in outputs)


def one_task(c, worker: str) -> str:
    """Enter, consent, start, chat, rate, submit; what the page shows at the end."""
    c.predict("pilot", pid(worker), f"browser-of-{worker}", api_name="/study_enter")
    c.predict(api_name="/study_consent")
    c.predict(api_name="/study_start")
    c.predict("a space movie please", api_name="/study_send_a")
    c.predict(api_name="/study_satisfied_a")
    return shown(c.predict(None, None, *NO_ASPECTS, api_name="/study_submit"))


def test_quotas_hold_under_concurrent_workers(services, served):
    publish(services, quota_per_cell=2, tasks_per_participant=1, new_workers_per_minute=20)
    pages: dict[str, str] = {}
    errors: list[BaseException] = []

    def work(worker: str) -> None:
        try:
            pages[worker] = one_task(client(served), worker)
        except BaseException as exc:  # reported below, with the worker
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(f"worker-{n}",)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    study = parse_study(study_yaml(quota_per_cell=2, tasks_per_participant=1))
    fill = services.store.cell_fill(study)
    assert {cell: n["done"] for cell, n in fill.items()} == {"alpha": 2, "beta": 2, "gamma": 2}
    assert all(n["reserved"] == 0 for n in fill.values())
    status = Counter(p.status for p in services.store.list_participants("pilot"))
    assert status["completed"] == 6
    full = [w for w, page in pages.items() if "CODE-7731" not in page]
    assert len(full) == 2 and all("full" in pages[w] or "held by other workers" in pages[w] for w in full)
    # A worker who came while every place was held waits on a step of their own; one who came after is
    # told at once (no row kept).
    assert all(p.data["step"] == "full" for p in services.store.list_participants("pilot") if p.status == "active")


def test_a_reload_resumes_and_a_second_attempt_cannot_complete_again(services, served):
    publish(services, tasks_per_participant=2)
    first = client(served)
    first.predict("pilot", pid("P-42"), "browser-1", api_name="/study_enter")
    first.predict(api_name="/study_consent")
    first.predict(api_name="/study_start")
    first.predict("robots in space", api_name="/study_send_a")
    # A reload: a new session with the same link finds the task, its conversation included.
    again = client(served)
    page = shown(again.predict("pilot", pid("P-42"), "browser-1", api_name="/study_enter"))
    assert "robots in space" in page and "Task 1 of 2" in page
    again.predict(api_name="/study_satisfied_a")
    again.predict(None, None, *NO_ASPECTS, api_name="/study_submit")
    assert "CODE-7731" in one_more_task(again)
    # Trying again (any session) shows the study as completed and hands out no task.
    third = client(served)
    page = shown(third.predict("pilot", pid("P-42"), "browser-1", api_name="/study_enter"))
    assert "already completed" in page
    third.predict(api_name="/study_start")
    (worker,) = services.store.list_participants("pilot")
    assert worker.status == "completed" and len(worker.data["served"]) == 2
    assert len(services.store.list_dialogues()) == 2


def one_more_task(c) -> str:
    c.predict("something funny", api_name="/study_send_a")
    c.predict(api_name="/study_frustrated_a")
    return shown(c.predict(None, None, *NO_ASPECTS, api_name="/study_submit"))


def test_the_open_arena_is_unchanged_and_study_links_go_to_the_study_page(services, served):
    assert httpx.get(served + "/", timeout=30).status_code == 200
    # The page's head sends `?study=` links on, query intact (the browser test follows one).
    assert httpx.get(served + "/config", timeout=30).json()["head"].startswith(STUDY_REDIRECT)  # then the page script
    assert httpx.get(served + "/study/", timeout=30).status_code == 200
    # Without the slash (as a link may be typed), the study page with the worker's query kept.
    query = f"study=pilot&PROLIFIC_PID={pid('W9')}&SESSION_ID={pid('S9')}"
    bare = httpx.get(f"{served}/study?{query}", timeout=30)
    assert bare.status_code == 308 and bare.headers["location"] == f"/study/?{query}"
    assert httpx.get(f"{served}/study", timeout=30, follow_redirects=True).url.path == "/study/"
    refused = shown(client(served).predict("nope", "w", "browser-1", api_name="/study_enter"))
    assert "no such study" in refused


def test_a_battle_study_through_the_page(services, served):
    publish(services, mode="battle", tasks_per_participant=1)
    c = client(served)
    c.predict("pilot", pid("B-7"), "browser-1", api_name="/study_enter")
    c.predict(api_name="/study_consent")
    page = shown(c.predict(api_name="/study_start"))
    assert "System A" in page and "System B" in page and "Chat with each system" in page
    for side in ("a", "b"):
        c.predict(f"a space movie, pane {side}", api_name=f"/study_send_{side}")
        c.predict(api_name=f"/study_frustrated_{side}")
    refused = shown(c.predict(None, None, *NO_ASPECTS, api_name="/study_submit"))
    assert "which system was better" in refused
    assert "CODE-7731" in shown(c.predict("tie", None, *NO_ASPECTS, api_name="/study_submit"))
    (vote,) = services.store.list_votes()
    assert (vote.choice, vote.study) == ("tie", "pilot")
