"""Malformed calls to Gradio's HTTP API against the real server, run as its own process: 300 calls drawn
from a seeded generator (`malformed_calls.py`: unknown function ids and endpoint names, missing inputs,
`1e999999`, bodies that are not JSON, uploads without files, file paths outside the app) each get an
answer below 500 with a one-line body, and the server's whole log holds no traceback and no error line.
The development route `dev/reload` answers 404 at once, and a real visitor's calls still work after."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).parent))

from malformed_calls import malformed_calls, send  # noqa: E402

from tests.support.asgi_server import free_port  # noqa: E402

pytestmark = pytest.mark.slow
CALLS = 300
SEED = 48


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """(base URL, the lines the server process has written so far)."""
    folder = tmp_path_factory.mktemp("malformed")
    port = free_port()
    process = subprocess.Popen([sys.executable, str(Path(__file__).with_name("fake_app_server.py")), str(port),
                                str(folder)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               env={**__import__("os").environ, "HF_HUB_OFFLINE": "1",
                                    "GRADIO_ANALYTICS_ENABLED": "False"})
    lines: list[str] = []
    ready = threading.Event()

    def read() -> None:
        for line in process.stdout:
            lines.append(line)
            if "READY" in line:
                ready.set()

    threading.Thread(target=read, daemon=True).start()
    try:
        assert ready.wait(300), "the server did not start:\n" + "".join(lines[-30:])
        yield f"http://127.0.0.1:{port}", lines
    finally:
        process.terminate()
        process.wait(30)


def _session_of(call) -> object:
    try:
        body = json.loads(call.body or b"")
    except ValueError:
        return None
    return body.get("session_hash") if isinstance(body, dict) else None


def test_malformed_calls_get_a_4xx_with_one_line_and_leave_no_traceback(server):
    url, lines = server
    started_at = len(lines)
    answers: dict[str, list[str]] = {}
    streams, outside = [], []  # (status, call) of the event streams and of the values outside the choices
    sessions_named: set = set()  # the sessions earlier calls named (one may have joined the queue)
    with httpx.Client(base_url=url, timeout=httpx.Timeout(20.0)) as client:
        config = client.get("/config").json()
        for call in malformed_calls(config, CALLS, SEED):
            status = send(client, call)
            answers.setdefault(str(status), []).append(str(call))
            if call.path.endswith("/queue/data") and call.params.get("session_hash", "-") not in sessions_named:
                streams.append((status, str(call)))
            sessions_named.add(_session_of(call) or "")
            if call.kind == "outside_choices":
                outside.append((status, str(call)))
    bad = {code: calls for code, calls in answers.items() if not code.isdigit() or int(code) >= 500}
    assert not bad, {code: calls[:5] for code, calls in bad.items()}
    # a stream for a session no call opened is refused, never a 200 carrying an error
    assert streams and all(isinstance(s, int) and 400 <= s < 500 for s, _ in streams), streams
    assert len(outside) >= 20 and not [c for s, c in outside if s != 422], [(s, c) for s, c in outside if s != 422]
    assert sum(len(c) for code, c in answers.items() if code.startswith("4")) >= CALLS * 0.8
    time.sleep(1)  # the last lines of the log
    log = lines[started_at:]
    assert not [line for line in log if "Traceback" in line], "".join(log)[-4000:]
    assert not [line for line in log if line.startswith(("ERROR", "CRITICAL"))], "".join(log)[-4000:]


def test_a_refusal_is_one_line_that_names_the_problem(server):
    url, _ = server
    with httpx.Client(base_url=url, timeout=20) as client:
        config = client.get("/config").json()
        chat_send = next(d for d in config["dependencies"] if d.get("api_name") == "chat_send")
        cases = [
            (b'{"data": [], "fn_index": 100000, "session_hash": "abc"}', 404, "No such function."),
            (b'{"data": [], "fn_index": %d, "session_hash": "abc"}' % chat_send["id"], 422, "list of"),
            (b'{"data": [1e999999], "fn_index": 0, "session_hash": "abc"}', 400, "numbers in range"),
            (b"[1, 2]", 400, "JSON object"),
        ]
        for body, status, words in cases:
            answer = client.post("/gradio_api/queue/join", content=body, headers={"content-type": "application/json"})
            assert answer.status_code == status and words in answer.json()["detail"], answer.text
            assert "\n" not in answer.text
        unknown = client.post("/gradio_api/call/no_such_endpoint", json={"data": []})
        assert unknown.status_code == 404 and unknown.json() == {"detail": "No such endpoint."}


def test_an_event_stream_needs_a_session_the_queue_holds(server):
    url, lines = server
    started_at = len(lines)
    with httpx.Client(base_url=url, timeout=20) as client:  # Gradio answered 200, an error inside the stream
        for mount in ("", "/study"):
            for params, status, words in [({"session_hash": "never-opened"}, 404, "No such session."),
                                          ({}, 400, "session id"), ({"session_hash": ""}, 400, "session id"),
                                          ({"session_hash": "x" * 300}, 400, "session id")]:
                answer = client.get(f"{mount}/gradio_api/queue/data", params=params)
                assert answer.status_code == status and words in answer.json()["detail"], answer.text
                assert answer.headers["content-type"] == "application/json" and "\n" not in answer.text
    time.sleep(0.5)
    assert not [line for line in lines[started_at:] if "Traceback" in line or line.startswith("ERROR")]


def test_a_value_outside_a_choice_inputs_choices_gets_a_422_line(server):
    url, lines = server
    started_at = len(lines)
    with httpx.Client(base_url=url, timeout=20) as client:
        config = client.get("/config").json()
        board = next(d for d in config["dependencies"] if d.get("api_name") == "leaderboard")
        kinds = {c["id"]: c for c in config["components"]}
        offered = [[choice[1] for choice in kinds[i]["props"]["choices"]] for i in board["inputs"]]
        # A checkbox group (or a multiple dropdown) takes a list of its choices; the others one choice.
        many = [kinds[i]["type"] == "checkboxgroup" or bool(kinds[i]["props"].get("multiselect"))
                for i in board["inputs"]]

        def first_of_each() -> list:
            return [[v[0]] if several else v[0] for v, several in zip(offered, many)]

        assert client.post("/gradio_api/run/leaderboard", json={"data": first_of_each()}).status_code == 200
        for position in range(len(offered)):  # Gradio answered 500 and logged a traceback
            data = first_of_each()
            data[position] = ["not-offered"] if many[position] else "not-offered"
            answer = client.post("/gradio_api/run/leaderboard", json={"data": data})
            assert answer.status_code == 422, answer.text
            assert answer.json() == {"detail": "A value is not one of its input's choices."}
            joined = client.post("/gradio_api/queue/join", json={"data": data, "fn_index": board["id"],
                                                                 "session_hash": "s-choices"})
            assert joined.status_code == 422, joined.text
    time.sleep(0.5)
    assert not [line for line in lines[started_at:] if "Traceback" in line or line.startswith("ERROR")]


def test_the_development_routes_are_off(server):
    url, _ = server
    with httpx.Client(base_url=url, timeout=5) as client:  # Gradio's own route held it open indefinitely
        for path in ("/gradio_api/dev/reload", "/study/gradio_api/dev/reload", "/admin/gradio_api/dev/reload",
                     "/gradio_api/vibe-code", "/study/gradio_api/proxy=%00", "/gradio_api/proxy=http://x"):
            started = time.monotonic()
            assert client.get(path).status_code == 404
            assert time.monotonic() - started < 5


def test_a_real_visitor_is_still_served(server):
    from gradio_client import Client

    url, _ = server
    client = Client(url + "/", verbose=False, httpx_kwargs={"timeout": 120})
    client.predict("alpha", api_name="/chat_start")
    chat = client.predict("a comedy from the nineties, please", api_name="/chat_send")[0]
    assert "comedy" in str(chat)
    study = Client(url + "/study/", verbose=False, httpx_kwargs={"timeout": 120})
    assert study.predict("no-such-study", "w1", "browser-1", api_name="/study_enter") is not None
