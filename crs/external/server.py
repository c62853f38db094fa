"""The reference server of the HTTP contract: any system of the registry over HTTP
(`crs-arena serve-crs --crs NAME --port P`, also `python -m crs serve-crs`).

It is what a CRS researcher's own server has to do (docs/bring-your-own-crs.md) and the real
server the tests talk to. Each request carries the whole dialogue, so the server keeps no state
between turns; requests are answered on FastAPI's worker threads, several at once.

It also speaks iEvaLM-CRS's protocol (docs/protocols.md), so clients written for iEvaLM's
model servers (UserSimCRS's iEvaLM agent, CRS Arena-style front ends) can talk to any arena
system: `POST /` with `{"context": [...], "message": "..."}` answers `{"response": "..."}`
and `GET /` answers "Model is running.".
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Optional

from pydantic import BaseModel, ConfigDict, Field

from arena.conversation.crs_interface import TOP_K_KEPT, ConversationalRecommender
from arena.dialogue import Dialogue, UserInfo, UserKind
from crs.external.contract import CONTRACT_VERSION, MAX_TEXT_CHARS, RespondRequest, item_refs

log = logging.getLogger(__name__)

IEVALM_RUNNING = "Model is running."
# Bounds on what an iEvaLM-style request may carry (the whole conversation so far, as strings).
MAX_CONTEXT_UTTERANCES = 200


class IEvaLMRequest(BaseModel):
    """iEvaLM-CRS's request: the earlier utterances as strings, oldest first, and the user's message."""

    model_config = ConfigDict(extra="ignore")

    context: list[str] = Field(max_length=MAX_CONTEXT_UTTERANCES)
    message: str = Field(max_length=MAX_TEXT_CHARS)


def dialogue_from_ievalm(request: IEvaLMRequest, crs_id: str) -> Dialogue:
    """The conversation an iEvaLM-style request describes. Its context starts with the user and
    alternates; UserSimCRS's iEvaLM agent sends the message as the context's last entry as well,
    so a message repeating that last user entry is not taken for a second utterance."""
    context = list(request.context)
    if context and len(context) % 2 == 1 and context[-1] == request.message:
        context.pop()
    dialogue = Dialogue(crs_id=crs_id, user=UserInfo(kind=UserKind.HUMAN, id="anonymous"))
    for i, text in enumerate(context):
        if i % 2 == 0:
            dialogue.add_user(text)
        else:
            dialogue.add_agent(text, [])
    dialogue.add_user(request.message)
    return dialogue


def build_app(crs: ConversationalRecommender, name: str, dataset: str):
    """A FastAPI app answering POST /respond, POST /recommend (systems that rank) and GET /health."""
    from fastapi import FastAPI
    from fastapi.responses import JSONResponse, PlainTextResponse

    app = FastAPI(title=f"CRS Arena contract server: {name}", docs_url=None, redoc_url=None)
    ranks = callable(getattr(crs, "recommend", None))

    @app.get("/health")
    def health() -> dict[str, Any]:
        return {"status": "ok", "system": name, "dataset": dataset, "contract": CONTRACT_VERSION,
                "ranking": ranks}

    @app.post("/respond")
    def respond(request: RespondRequest):
        try:
            text, items = crs.respond(request.dialogue)
        except Exception as exc:  # the system's own failure is a 500 the arena records as a fault
            log.exception("%s failed to answer", name)
            return JSONResponse({"error": f"{type(exc).__name__} in {name}"}, status_code=500)
        return {"text": text, "items": item_refs(items)}

    @app.post("/recommend")
    def recommend(request: RespondRequest):
        if not ranks:
            return JSONResponse({"error": f"{name} does not rank items"}, status_code=404)
        try:
            items = crs.recommend(request.dialogue, request.k or TOP_K_KEPT)
        except Exception as exc:
            log.exception("%s failed to rank", name)
            return JSONResponse({"error": f"{type(exc).__name__} in {name}"}, status_code=500)
        return {"items": item_refs(items)}

    # -- iEvaLM-CRS's protocol ----------------------------------------------------------
    @app.get("/", response_class=PlainTextResponse)
    def ievalm_health() -> str:
        return IEVALM_RUNNING

    @app.post("/")
    def ievalm_respond(request: IEvaLMRequest):
        dialogue = dialogue_from_ievalm(request, name)
        try:
            text, _ = crs.respond(dialogue)
        except Exception as exc:
            log.exception("%s failed to answer", name)
            return JSONResponse({"error": f"{type(exc).__name__} in {name}"}, status_code=500)
        return {"response": text}

    return app


class ContractServer:
    """A running server (uvicorn on a thread): for tests and for embedding in other programs."""

    def __init__(self, app, host: str = "127.0.0.1", port: int = 0):
        import uvicorn

        config = uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False)
        self._server = uvicorn.Server(config)
        self._thread: Optional[threading.Thread] = None

    def start(self, timeout_s: float = 20.0) -> "ContractServer":
        self._thread = threading.Thread(target=self._server.run, name="crs-contract-server", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout_s
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the contract server did not start")
            time.sleep(0.02)
        return self

    @property
    def url(self) -> str:
        sockets = [s for server in self._server.servers for s in server.sockets]
        host, port = sockets[0].getsockname()[:2]
        return f"http://{host}:{port}"

    def stop(self) -> None:
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)

    def __enter__(self) -> "ContractServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def serve_forever(crs: ConversationalRecommender, name: str, dataset: str, host: str, port: int) -> None:
    import uvicorn

    uvicorn.run(build_app(crs, name, dataset), host=host, port=port, log_level="info")
