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


def test_an_answer_cleared_leaves_the_choices_as_they_were():
    """The ratings' form opens with its answers cleared (`gr.Radio(value=None)`, no choices given): the
    session keeps the choices it had, so a valid rating is still taken."""
    offered = OfferedChoices()
    radio = gr.Radio(choices=[0, 1, 2])
    request = type("Request", (), {"session_hash": "s1"})()
    offered.offering(lambda: gr.Radio(value=None), radio)(request)
    offered.offering(lambda: gr.update(value=None), radio)(request)
    assert offered.choices("s1", radio) is None  # the page's own choices stand
    offered.offering(lambda: gr.Radio(choices=[("One", 1)]), radio)(request)
    offered.offering(lambda: gr.Radio(value=None), radio)(request)
    assert offered.choices("s1", radio) == [1]


def test_a_handler_taking_the_request_before_its_args_still_gets_it():
    """`fn(participant, request: gr.Request, *answers)` on an event of three inputs: Gradio fills the request,
    the rest are the answers (the battle's aspect ratings are wired so)."""
    import inspect

    offered = OfferedChoices()
    radio = gr.Radio(choices=[])
    seen = {}

    def rate(participant, request: gr.Request, *answers, side: str = "A"):
        seen.update(participant=participant, session=request.session_hash, answers=answers, side=side)
        return gr.update(choices=list(answers))

    wrapped = offered.offering(rate, radio, inputs=[radio, radio, radio])
    names = list(inspect.signature(wrapped).parameters)
    assert names == ["participant", "request", "input_0", "input_1", "offered_to"]
    request = type("Request", (), {"session_hash": "s1"})()
    wrapped("p", request, "x", "y", request)
    assert seen == {"participant": "p", "session": "s1", "answers": ("x", "y"), "side": "A"}
    assert offered.choices("s1", radio) == ["x", "y"]


def unrecorded_choice_events(blocks) -> list[str]:
    """Each event of `blocks` that updates a component whose values the guard checks against its choices
    without recording the choices it gives (not wrapped by `OFFERED.offering` for that output)."""
    from webapp.protection.api_guard import AppDescription
    from webapp.sessions.session_choices import records_choices_of

    checked = AppDescription(blocks).checked_choices()
    found = []
    for dep in blocks.fns.values():  # Gradio's events of these Blocks (a test may read Gradio's own)
        recorded = records_choices_of(dep.fn)
        missed = [o for o in dep.outputs if o._id in checked and not any(o is r for r in recorded)]
        if missed:
            name = dep.api_name or getattr(dep.fn, "__name__", "?")
            found.append(f"{name}: {', '.join(type(o).__name__ + ' ' + repr(o.label) for o in missed)}")
    return found


def test_every_event_that_updates_a_checked_choice_input_records_its_choices(tmp_path):
    """Any event that may set a radio's, a checkbox group's or a closed dropdown's choices is wrapped by
    `OFFERED.offering` with that output, on every page served (public, study, researcher): a handler that
    gave a session choices of its own without it would see a valid pick refused with a 422."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "battle"))
    from battle_support import FakeCatalogCRS, make_services

    from webapp.protection.admin_auth import admin_checker, hash_password
    from webapp.protection.api_guard import AppDescription
    from webapp.serve import build_app

    password = "a long enough password for the test"
    systems = [FakeCatalogCRS("alpha"), FakeCatalogCRS("beta")]
    services = make_services(tmp_path, systems, admin_users=("ada",),
                             admin_password_hash=hash_password(password, iterations=1000))
    try:
        app = build_app(services, admin_auth=admin_checker(services.settings))
        mounts = [r for r in app.routes if hasattr(getattr(r, "app", None), "get_blocks")]
        served = {r.path: r.app.get_blocks() for r in mounts}
        assert set(served) == {"", "/study", "/admin"}
        problems = [f"{path or '/'} {line}" for path, blocks in served.items()
                    for line in unrecorded_choice_events(blocks)]
        assert not problems, "events that set checked choices unrecorded:\n" + "\n".join(problems)
        # the scan saw something on each page: the ratings' radios, the study's checks, the researcher's lists
        assert all(AppDescription(blocks).checked_choices() for blocks in served.values())
    finally:
        services.store.close()


def test_an_event_left_unwrapped_is_found():
    offered = OfferedChoices()
    with gr.Blocks() as blocks:
        fixed = gr.Radio(choices=["a", "b"], label="fixed")
        given = gr.Dropdown(choices=[], label="given")
        free = gr.Dropdown(choices=[], allow_custom_value=True, label="free")
        note = gr.Textbox()
        wrapped, bare, other = gr.Button(), gr.Button(), gr.Button()
        wrapped.click(offered.offering(lambda: (gr.update(choices=["x"]), "ok"), [given, note]), None,
                      [given, note], api_name="wrapped")
        bare.click(lambda: gr.update(value="a"), None, fixed, api_name="bare")
        other.click(lambda: (gr.update(choices=["y"]), gr.update(choices=["z"])), None, [free, note],
                    api_name="free")
    assert unrecorded_choice_events(blocks) == ["bare: Radio 'fixed'"]


def test_a_rating_after_the_form_opened_passes_the_guard(tmp_path):
    """On the served app, behind the guard: the chat's verdict opens the ratings' form (its answers cleared
    by a wrapped handler), and the ratings sent next are taken, not refused as outside their choices."""
    import sys
    from pathlib import Path

    from gradio_client import Client

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "battle"))
    from battle_support import FakeCatalogCRS, make_services

    from webapp.serve import build_app

    services = make_services(tmp_path, [FakeCatalogCRS("alpha")])
    try:
        with running(build_app(services)) as url:
            client = Client(url + "/", verbose=False, httpx_kwargs={"timeout": 60})
            client.predict("alpha", api_name="/chat_start")
            client.predict("a space adventure please", api_name="/chat_send")
            client.predict("", api_name="/chat_satisfied")
            *_, note = client.predict(1, 2, None, 0, 3, api_name="/chat_aspects")
            client.close()
        assert note == "Thank you: 4 of 5 aspects rated and saved."
    finally:
        services.store.close()
