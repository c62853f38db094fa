"""A choice input whose choices a handler sets per session (a study's attention check starts with none):
the API guard checks a value against the caller's session's choices, so a value the page offers that
session is taken and any other gets a 422 line, not Gradio's 500 and traceback."""

from __future__ import annotations

import json

import gradio as gr
import httpx
from fastapi import FastAPI

from tests.support.asgi_server import running
from webapp.protection.api_guard import ApiGuardMiddleware


def _app() -> tuple[FastAPI, dict[str, int]]:
    with gr.Blocks() as blocks:
        check = gr.Radio(choices=[], label="attention check")
        answer = gr.Textbox()
        offer = gr.Button("offer")
        submit = gr.Button("submit")
        offer.click(lambda: gr.Radio(choices=["red", "blue"]), None, check, api_name="offer")
        submit.click(lambda picked: f"picked {picked}", check, answer, api_name="pick")
    app = gr.mount_gradio_app(FastAPI(), blocks, path="")
    app.add_middleware(ApiGuardMiddleware, apps=[("", blocks)])
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
    app, ids = _app()
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
