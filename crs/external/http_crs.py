"""The arena's side of the HTTP contract: a `ConversationalRecommender` whose replies come from
a server (`crs.external.contract`).

Every way the server can fail a turn (no answer in time, a refused connection, a 4xx/5xx status,
a body that is not the contract's JSON, a reply over the size limits) raises `ExternalCRSError`,
which the runner records on the turn like any system failure: the participant reads a polite
notice, the dialogue keeps the error. Messages name the system and the fault, never the URL's
credentials or the key. `health` keeps each system's last outcome for the researcher pages.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from typing import Any, Optional

import httpx
from pydantic import SecretStr, ValidationError

from arena.catalogs.catalog import Catalog, CatalogItem
from arena.conversation.crs_interface import TOP_K_KEPT, TOP_K_SHOWN, ConversationalRecommender
from arena.dialogue import Dialogue, RecommendedItem
from arena.llm.redaction import redact_url
from crs.external.contract import (
    CONTRACT_VERSION,
    MAX_RESPONSE_BYTES,
    ItemLinker,
    RankingResponse,
    RespondResponse,
    as_recommended,
    is_stream,
    join_stream,
    shared_dialogue,
)
from crs.reply_check import enforce_shown_titles

HEALTH_TIMEOUT_S = 3.0
FALLBACK_REPLY = "Could you tell me a bit more about what you would like?"


class ExternalCRSError(RuntimeError):
    """A turn an external system failed to answer; `fault` is one of timeout, unreachable,
    http_status, malformed, oversized."""

    def __init__(self, system: str, fault: str, detail: str):
        self.system = system
        self.fault = fault
        super().__init__(f"external system {system} failed ({fault}): {detail}")


@dataclass
class Health:
    """The last outcome of a call to one external system (what the researcher pages show)."""

    calls: int = 0
    failures: int = 0
    last_ok_at: Optional[float] = None
    last_error: str = ""
    last_error_at: Optional[float] = None

    @property
    def state(self) -> str:
        if self.calls == 0:
            return "not called yet"
        failed_last = self.last_error_at is not None and (self.last_ok_at or 0) < self.last_error_at
        if failed_last:
            return "failing"
        return "ok"


class HttpCRS(ConversationalRecommender):
    def __init__(self, name: str, url: str, catalog: Catalog, *, timeout_s: float = 30.0,
                 api_key: Optional[SecretStr] = None, transport: Optional[httpx.BaseTransport] = None):
        self.name = name
        self.catalog = catalog
        self.url = url.rstrip("/")
        self.shown_url = redact_url(self.url)
        self.timeout_s = timeout_s
        self.linker = ItemLinker(catalog)
        self.health = Health()
        self._lock = threading.Lock()
        headers = {"accept": "application/json"}
        if api_key is not None:
            headers["authorization"] = f"Bearer {api_key.get_secret_value()}"
        self._secret = api_key.get_secret_value() if api_key is not None else None
        # No redirects: a key sent to the configured host must not follow a redirect elsewhere.
        self._client = httpx.Client(timeout=timeout_s, headers=headers, follow_redirects=False,
                                    transport=transport)

    def __repr__(self) -> str:
        return f"HttpCRS(name={self.name!r}, url={self.shown_url!r})"

    # -- the turn -----------------------------------------------------------------------
    def respond(self, dialogue: Dialogue) -> tuple[str, list[RecommendedItem]]:
        body = self._post("/respond", dialogue)
        try:
            answer = RespondResponse.model_validate(body)
        except ValidationError as exc:
            raise self._fault(_contract_fault(exc), _first_problem(exc)) from None
        self._record(None)
        items = self.linker.link(answer.items)[:TOP_K_SHOWN]
        shown = [i for i in items if isinstance(i, CatalogItem)]
        unlinked = [i.title for i in items if not isinstance(i, CatalogItem)]
        text = enforce_shown_titles(answer.text.strip(), shown, self.catalog, FALLBACK_REPLY,
                                    unlinked_titles=unlinked)
        return text, as_recommended(items)

    # -- transport ------------------------------------------------------------------------
    def _post(self, path: str, dialogue: Dialogue, **extra: Any) -> Any:
        payload = {"contract": CONTRACT_VERSION, "system": self.name,
                   "dialogue": shared_dialogue(dialogue), **extra}
        return self._exchange(path, payload)[0]

    def _exchange(self, path: str, payload: dict[str, Any],
                  headers: Optional[dict[str, str]] = None) -> tuple[Any, httpx.Headers]:
        """POST `payload` to `path`: the decoded JSON answer and the response's headers; every
        way the exchange can fail raises `ExternalCRSError`."""
        try:
            with self._client.stream("POST", self.url + path, json=payload, headers=headers) as response:
                raw = _read_limited(response)
                if raw is None:
                    raise self._fault("oversized", f"reply larger than {MAX_RESPONSE_BYTES:,} bytes")
                if response.status_code >= 300:
                    where = f"{self.shown_url}{path}"
                    raise self._fault("http_status", f"HTTP {response.status_code} from {where}")
                streamed = is_stream(response.headers.get("content-type", ""))
                response_headers = response.headers
        except httpx.TimeoutException:
            where = f"{self.shown_url}{path}"
            raise self._fault("timeout", f"no reply within {self.timeout_s:g} s from {where}") from None
        except httpx.TransportError as exc:
            raise self._fault("unreachable", f"{type(exc).__name__} at {self.shown_url}{path}") from None
        try:
            body = join_stream(raw) if streamed else json.loads(raw)
        except ValueError:
            raise self._fault("malformed", f"the reply from {self.shown_url}{path} is not JSON") from None
        return body, response_headers

    def _fault(self, fault: str, detail: str) -> ExternalCRSError:
        if self._secret:
            detail = detail.replace(self._secret, "[redacted]")
        error = ExternalCRSError(self.name, fault, detail)
        self._record(str(error))
        return error

    def _record(self, error: Optional[str]) -> None:
        with self._lock:
            now = time.time()
            self.health.calls += 1
            if error is None:
                self.health.last_ok_at = now
                return
            self.health.failures += 1
            self.health.last_error, self.health.last_error_at = error, now

    # -- availability -------------------------------------------------------------------
    def probe(self) -> Optional[str]:
        """Why the server cannot be reached now, or None (GET /health; any answer but a 5xx is alive)."""
        return probe(self._client, self.url + "/health", self.shown_url)

    def close(self) -> None:
        self._client.close()


def probe(client: httpx.Client, url: str, shown_url: str, *, strict: bool = False) -> Optional[str]:
    """Why `url` cannot be reached (GET), or None. Any answer but a 5xx means the server is up;
    with `strict`, only a 2xx does (for a health route the protocol defines, such as iEvaLM's
    `GET /`, where a 404 means something else is listening)."""
    try:
        response = client.get(url, timeout=HEALTH_TIMEOUT_S)
    except httpx.TimeoutException:
        return f"no answer from {shown_url} within {HEALTH_TIMEOUT_S:g} s"
    except httpx.TransportError as exc:
        return f"cannot reach {shown_url} ({type(exc).__name__})"
    if response.status_code >= 500 or (strict and not 200 <= response.status_code < 300):
        return f"{shown_url} answered HTTP {response.status_code}"
    return None


def _read_limited(response: httpx.Response) -> Optional[bytes]:
    """The body, or None when it is larger than the contract allows (read no further)."""
    declared = response.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > MAX_RESPONSE_BYTES:
        return None
    chunks, size = [], 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > MAX_RESPONSE_BYTES:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def _contract_fault(exc: ValidationError) -> str:
    too_long = any(e.get("type") in ("string_too_long", "too_long") for e in exc.errors())
    return "oversized" if too_long else "malformed"


def _first_problem(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error.get("loc", ())) or "the reply"
    return f"{where}: {error.get('msg', 'not the contract')}"[:300]


class RankingHttpCRS(HttpCRS):
    """A server that also ranks items (POST /recommend): `recall` can measure it."""

    def recommend(self, dialogue: Dialogue, k: int = TOP_K_KEPT) -> list[RecommendedItem]:
        """The server's ranking (POST /recommend), linked to the catalog; for `recall`."""
        body = self._post("/recommend", dialogue, k=k)
        try:
            answer = RankingResponse.model_validate(body)
        except ValidationError as exc:
            raise self._fault(_contract_fault(exc), _first_problem(exc)) from None
        self._record(None)
        return as_recommended(self.linker.link(answer.items)[:k])
