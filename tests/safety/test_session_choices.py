"""A choice input whose choices a handler sets per session (a study's attention check starts with none):
the API guard checks a value against the caller's session's choices, so a value the page offers that
session is taken and any other gets a 422 line, not Gradio's 500 and traceback."""

from __future__ import annotations

import json
import time

import gradio as gr
import httpx
import pytest
from fastapi import FastAPI

from tests.support.asgi_server import running
from webapp.protection.api_guard import ApiGuardMiddleware
from webapp.sessions.session_choices import OfferedChoices


def _app(offered: OfferedChoices) -> tuple[FastAPI, dict[str, int]]:
    with gr.Blocks() as blocks:
        check = gr.Radio(choices=[], label="attention check")
        answer = gr.Textbox()
        offer = gr.Button("offer")
        submit = gr.Button("submit")
        # the handler's choices are recorded under the caller's session, where the guard reads them
        offer.click(offered.offering(lambda: gr.Radio(choices=["red", "blue"]), check), None, check,
                    api_name="offer")
        submit.click(lambda picked: f"picked {picked}", check, answer, api_name="pick")
    app = gr.mount_gradio_app(FastAPI(), blocks, path="")
    offered.forget_on_unload(blocks)
    app.add_middleware(ApiGuardMiddleware, apps=[("", blocks)], offered=offered)
    config = blocks.get_config_file()
    ids = {d["api_name"]: d["id"] for d in config["dependencies"]}
    return app, ids


def _run(client: httpx.Client, fn: int, data: list, session: str) -> tuple[int, list]:
    """Join the queue and read the session's stream to the event's end: (join status, its messages)."""
    body = {"data": data, "fn_index": fn, "session_hash": session}
    joined = client.post("/gradio_api/queue/join", json=body)
    if joined.status_code != 200:
        return joined.status_code, []
    messages = []
    with client.stream("GET", "/gradio_api/queue/data", params={"session_hash": session}) as stream:
        for line in stream.iter_lines():
            if line.startswith("data: "):
                messages.append(json.loads(line[len("data: "):]))
                if messages[-1].get("msg") in ("process_completed", "close_stream"):
                    break
    return joined.status_code, messages


def test_a_value_is_checked_against_the_choices_of_the_callers_session():
    offered = OfferedChoices()
    app, ids = _app(offered)
    with running(app) as url, httpx.Client(base_url=url, timeout=30) as client:
        # before any update the radio offers nothing: every value is refused in one line
        refused = client.post("/gradio_api/queue/join",
                              json={"data": ["red"], "fn_index": ids["pick"], "session_hash": "first"})
        assert refused.status_code == 422
        assert refused.json() == {"detail": "A value is not one of its input's choices."}
        status, _ = _run(client, ids["offer"], [], "first")  # this session's radio now offers red and blue
        assert status == 200
        status, messages = _run(client, ids["pick"], ["red"], "first")
        done = [m for m in messages if m.get("msg") == "process_completed"]
        assert status == 200 and done and done[0]["success"], messages
        assert done[0]["output"]["data"] == ["picked red"]
        assert _run(client, ids["pick"], ["green"], "first")[0] == 422  # not offered, even to this session
        assert _run(client, ids["pick"], ["red"], "other")[0] == 422  # another session was offered nothing


def test_a_sessions_choices_go_after_its_time_to_live_and_when_its_page_closes():
    offered = OfferedChoices(ttl_s=0.5)
    app, ids = _app(offered)
    with running(app) as url, httpx.Client(base_url=url, timeout=30) as client:
        assert _run(client, ids["offer"], [], "idle")[0] == 200
        assert _run(client, ids["pick"], ["red"], "idle")[0] == 200
        assert len(offered) == 1
        time.sleep(0.7)  # idle past its time to live: the record is gone, and red is no longer offered
        assert len(offered) == 0
        assert _run(client, ids["pick"], ["red"], "idle")[0] == 422
        # a closed page (Gradio's public unload event, sent by the page's last heartbeat) is forgotten at once
        offered.configure(100, 3600)
        assert _run(client, ids["offer"], [], "closing")[0] == 200
        assert len(offered) == 1
        with client.stream("GET", "/gradio_api/heartbeat/closing") as beat:
            next(beat.iter_bytes(), None)
        deadline = time.monotonic() + 20
        while len(offered) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(offered) == 0


def test_offering_records_what_generators_and_handlers_with_args_give():
    offered = OfferedChoices()
    radio = gr.Radio(choices=[])
    other = gr.Textbox()

    def steps(text):
        yield gr.skip(), "typing"
        yield gr.update(choices=[("Red", "r"), text]), "done"

    def many(*args):
        return {radio: gr.Radio(choices=list(args))}

    request = type("Request", (), {"session_hash": "s1"})()
    list(offered.offering(steps, [radio, other])("g", request))
    assert offered.choices("s1", radio) == ["r", "g"]
    offered.offering(many, [radio], inputs=[other, other])("x", "y", request)
    assert offered.choices("s1", radio) == ["x", "y"]
    assert offered.choices("s2", radio) is None
    with pytest.raises(TypeError):
        offered.offering(many, [radio])
