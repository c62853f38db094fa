"""Malformed calls to Gradio's HTTP API, drawn from a seeded generator.

Each call is what a careless client or a scanner sends to the public mounts
(`/` and `/study`): unknown function ids and endpoint names, missing or extra
inputs, values of the wrong type, numbers JSON cannot hold (`1e999999`), bodies
that are not JSON, uploads without files, file paths outside the app, event ids
nobody issued, a radio's or dropdown's value that is not one of its choices, event
streams for sessions nobody opened. `malformed_calls(config, n, seed)` returns `n` of them for an app
whose `/config` is `config`; `send(client, call)` sends one and returns the
status code. The same seed gives the same calls.
"""

from __future__ import annotations

import json
import random
import secrets
from dataclasses import dataclass, field
from typing import Any, Optional

MOUNTS = ("", "/study")
API = "/gradio_api"


@dataclass
class Call:
    method: str
    path: str
    body: Optional[bytes] = None
    headers: dict[str, str] = field(default_factory=dict)
    params: dict[str, str] = field(default_factory=dict)
    kind: str = ""  # what the call is meant to try, where a test checks it on its own

    def __str__(self) -> str:
        body = "" if self.body is None else f" {self.body[:120]!r}"
        return f"{self.method} {self.path} {self.params or ''}{body}"


def _json(value: Any) -> bytes:
    return json.dumps(value).encode()


BAD_VALUES: list[Any] = [
    None, "", "x" * 5000, 0, -1, 2 ** 70, 3.5, True, [], [[[]]], {}, {"value": 1}, {"path": "/etc/passwd"},
    {"__type__": "update"}, ["a", 1, None], "\u0000", "<script>alert(1)</script>",
]
# Written as raw JSON text: the parser reads them as infinity or NaN, which JSON cannot write back.
RAW_NUMBERS = ["1e999999", "-1e999999", "NaN", "Infinity", "1" * 5000]


def _raw_with_number(fields: dict[str, Any], key: str, rng: random.Random) -> bytes:
    text = json.dumps({**fields, key: "@@"})
    return text.replace('"@@"', rng.choice(RAW_NUMBERS)).encode()


class Generator:
    def __init__(self, config: dict, seed: int):
        self.rng = random.Random(seed)
        self.deps = config.get("dependencies", [])
        self.names = [d["api_name"] for d in self.deps if d.get("api_name")]
        self.fn_ids = [d.get("id", i) for i, d in enumerate(self.deps)]
        kinds = {c["id"]: c.get("type") for c in config.get("components", [])}
        chosen = ("radio", "dropdown", "checkboxgroup")
        self.choice_inputs = [(d.get("id", i), d, [n for n, c in enumerate(d["inputs"]) if kinds.get(c) in chosen])
                              for i, d in enumerate(self.deps)]
        self.choice_inputs = [entry for entry in self.choice_inputs if entry[2]]
        self.kinds = kinds

    def session(self) -> str:
        return self.rng.choice([secrets.token_hex(5), "", "../../etc", "x" * 300, "ü" * 10])

    def data(self, dep: Optional[dict]) -> Any:
        rng = self.rng
        width = len(dep["inputs"]) if dep else rng.randint(0, 4)
        shape = rng.randrange(6)
        if shape == 0:  # missing inputs
            return [rng.choice(BAD_VALUES) for _ in range(max(0, width - 1 - rng.randrange(3)))]
        if shape == 1:  # too many
            return [rng.choice(BAD_VALUES) for _ in range(width + 1 + rng.randrange(3))]
        if shape == 2:
            return rng.choice(["not a list", 7, {"a": 1}, None])
        return [rng.choice(BAD_VALUES) for _ in range(width)]  # the right width, wrong values

    def queue_join(self, mount: str) -> Call:
        rng = self.rng
        dep_index = rng.randrange(len(self.deps)) if self.deps else None
        dep = self.deps[dep_index] if dep_index is not None else None
        fn = rng.choice([self.fn_ids[dep_index] if dep is not None else 0, 10 ** 6, -1, "0", None, 1.5, [1]])
        fields = {"data": self.data(dep), "fn_index": fn, "session_hash": self.session(),
                  "event_data": rng.choice([None, {}, "x", [1]]), "trigger_id": rng.choice([None, -5, "t", 10 ** 9])}
        for key in rng.sample(list(fields), rng.randrange(3)):  # some fields left out
            del fields[key]
        if rng.random() < 0.25:
            body = _raw_with_number(fields, rng.choice(["fn_index", "trigger_id", "data"]), rng)
        else:
            body = _json(fields)
        return Call("POST", f"{mount}{API}/queue/join", body, {"content-type": "application/json"})

    def named(self, mount: str) -> Call:
        rng = self.rng
        name = rng.choice(self.names + ["predict", "no_such_fn", "../config", "x" * 200, "%00"])
        route = rng.choice(["run", "api", "call", "call/v2"])
        dep = next((d for d in self.deps if d.get("api_name") == name), None)
        if route == "call/v2":
            payload: Any = rng.choice([{}, {"x": 1}, {"message": rng.choice(BAD_VALUES)}, []])
        else:
            payload = rng.choice([{"data": self.data(dep)}, {}, {"data": self.data(dep), "session_hash": self.session()},
                                  [], "text"])
        if rng.random() < 0.2 and isinstance(payload, dict):
            body = _raw_with_number(payload, "data", rng)
        else:
            body = _json(payload)
        return Call("POST", f"{mount}{API}/{route}/{name}", body, {"content-type": "application/json"})

    def event_stream(self, mount: str) -> Call:
        rng = self.rng
        name = rng.choice(self.names + ["nope"])
        return rng.choice([
            Call("GET", f"{mount}{API}/call/{name}/{secrets.token_hex(8)}"),
            Call("GET", f"{mount}{API}/queue/data", params={"session_hash": self.session()}),
            Call("GET", f"{mount}{API}/queue/data"),
            Call("GET", f"{mount}{API}/heartbeat/{secrets.token_hex(4)}"),
            Call("POST", f"{mount}{API}/stream/{secrets.token_hex(4)}", _json({"data": 1})),
            Call("POST", f"{mount}{API}/stream/{secrets.token_hex(4)}/close", b"{}"),
        ])

    def outside_choices(self, mount: str) -> Call:
        """A plain value (or a list of them for a checkbox group) that is none of a choice input's choices,
        the other inputs left empty: the right shape, a value the page never offers. (Sent to the mount the
        generator's config describes, whatever `mount` is.)"""
        rng = self.rng
        if not self.choice_inputs:
            return self.queue_join(mount)
        fn, dep, positions = rng.choice(self.choice_inputs)
        data: list[Any] = [None] * len(dep["inputs"])
        position = rng.choice(positions)
        value = rng.choice(["not-a-choice", "<b>x</b>", 987654, -3, 2.5, "ALPHA", " alpha"])
        data[position] = [value] if self.kinds.get(dep["inputs"][position]) == "checkboxgroup" else value
        public = dep.get("api_name") and dep.get("api_visibility", "public") != "private"
        if public and rng.random() < 0.4:
            return Call("POST", f"{API}/run/{dep['api_name']}", _json({"data": data}),
                        {"content-type": "application/json"}, kind="outside_choices")
        body = {"data": data, "fn_index": fn, "session_hash": secrets.token_hex(5)}
        return Call("POST", f"{API}/queue/join", _json(body), {"content-type": "application/json"},
                    kind="outside_choices")

    def not_json(self, mount: str) -> Call:
        rng = self.rng
        path = rng.choice(["queue/join", "run/predict", "cancel", "reset", "call/chat_send", "call/v2/chat_send"])
        body = rng.choice([b"", b"{", b"\xff\xfe", b"null", b"[1,2]", b"\"s\"", b"{\"data\": [" * 60,
                           b"1e999999", b'{"session_hash": 1e999999}'])
        ctype = rng.choice(["application/json", "text/plain", "application/x-www-form-urlencoded"])
        return Call("POST", f"{mount}{API}/{path}", body, {"content-type": ctype})

    def upload(self, mount: str) -> Call:
        rng = self.rng
        choice = rng.randrange(4)
        if choice == 0:
            return Call("POST", f"{mount}{API}/upload", b"not multipart", {"content-type": "text/plain"})
        if choice == 1:
            boundary = "b0undary"
            body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"other\"\r\n\r\nx\r\n--{boundary}--\r\n"
                    ).encode()
            return Call("POST", f"{mount}{API}/upload", body,
                        {"content-type": f"multipart/form-data; boundary={boundary}"}, {"upload_id": self.session()})
        if choice == 2:
            return Call("POST", f"{mount}{API}/upload", b"--x\r\nbroken",
                        {"content-type": "multipart/form-data; boundary=x"})
        return Call("GET", f"{mount}{API}/upload_progress", params=rng.choice([{}, {"upload_id": self.session()}]))

    def files_and_info(self, mount: str) -> Call:
        rng = self.rng
        target = rng.choice(["/etc/passwd", "..%2F..%2Fetc%2Fpasswd", "%00", "C:\\boot.ini", "x" * 400,
                             "http://127.0.0.1:1/x", "/tmp", ""])
        return rng.choice([
            Call("GET", f"{mount}{API}/file={target}"),
            Call("HEAD", f"{mount}{API}/file={target}"),
            Call("GET", f"{mount}{API}/file/{target}"),
            Call("GET", f"{mount}{API}/proxy={target}"),
            Call("GET", f"{mount}{API}/info", params=rng.choice([{}, {"all_endpoints": "maybe"}, {"page": "x"}])),
            Call("GET", f"{mount}{API}/openapi.json"),
            Call("GET", f"{mount}/config", params=rng.choice([{}, {"deep_link": self.session()}])),
            Call("GET", f"{mount}{API}/deep_link", params={"deep_link": self.session()}),
            Call("GET", f"{mount}{API}/dev/reload"),
            Call("GET", f"{mount}{API}/monitoring/{secrets.token_hex(4)}"),
            Call("GET", f"{mount}{API}/startup-events"),
            Call("GET", f"{mount}/pwa_icon/{rng.choice(['abc', '-1', '99999'])}"),
            Call("POST", f"{mount}{API}/cancel", _json(rng.choice([{}, {"session_hash": 1}, {"fn_index": "x"}]))),
            Call("POST", f"{mount}{API}/reset", _json(rng.choice([{}, {"event_id": None}, []]))),
            Call("POST", f"{mount}{API}/process_recording", b"x", {"content-type": "text/plain"}),
            Call("POST", f"{mount}{API}/vibe-edit", _json({"prompt": "x"})),
            Call("GET", f"{mount}{API}/vibe-code"),
        ])

    def one(self) -> Call:
        mount = self.rng.choice(MOUNTS)
        kind = self.rng.choices([self.queue_join, self.named, self.event_stream, self.not_json, self.upload,
                                 self.files_and_info, self.outside_choices], weights=[5, 4, 2, 2, 2, 3, 3])[0]
        return kind(mount)


def malformed_calls(config: dict, n: int, seed: int = 0) -> list[Call]:
    generator = Generator(config, seed)
    return [generator.one() for _ in range(n)]


def send(client: Any, call: Call) -> int | str:
    """Send `call` with an httpx client; the status code, or "timeout" / "dropped" when no whole answer came
    (an event stream counts as answered at its first bytes)."""
    import httpx

    request = client.build_request(call.method, call.path, content=call.body, headers=call.headers,
                                   params=call.params)
    response = None
    try:
        response = client.send(request, stream=True)
        for _ in response.iter_bytes():
            if response.headers.get("content-type", "").startswith("text/event-stream"):
                break
        return response.status_code
    except httpx.TimeoutException:
        return "timeout"
    except httpx.TransportError:  # the server dropped the connection without a whole answer
        return "dropped"
    finally:
        if response is not None:
            response.close()
