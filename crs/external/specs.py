"""Entries of the systems file as registry specs, the same kind the built-ins have, so an
external system is offered wherever a built-in is (Chat, Battle pairing, simulated runs, the
leaderboard, exports, `recall`).

Whether a server is up is asked again at most every `PROBE_TTL_S` seconds (the registry asks on
every draw and page), so a system that is down at start is shown as unavailable and joins once it
answers. Keys are read from the variable the entry names when the system loads and live only
inside its HTTP or LLM client.
"""

from __future__ import annotations

import threading
import time
from functools import partial
from pathlib import Path
from typing import Callable, Optional, Union

import httpx

from arena.catalogs.catalog import Catalog, load_catalog
from arena.runtime.config import Settings
from arena.conversation.crs_interface import ConversationalRecommender, CRSSpec, CRSUnavailable
from arena.runtime.imports import heavy_imports
from arena.llm import LLMClient, OpenAIProvider, RetryPolicy
from arena.llm.cache import ResponseCache
from arena.llm.redaction import redact_url
from crs.external.http_crs import HttpCRS, RankingHttpCRS, probe
from crs.external.ievalm_crs import IEvaLMCRS
from crs.external.systems_file import ChatCRSEntry, HttpEntry, IEvaLMEntry, read_systems_file

PROBE_TTL_S = 30.0

Entry = Union[HttpEntry, IEvaLMEntry, ChatCRSEntry]


class CachedProbe:
    """A server's reachability, asked at most once per `ttl_s` seconds."""

    def __init__(self, url: str, ask: Callable[[], Optional[str]], ttl_s: Optional[float] = None):
        self.url = url
        self._ask = ask
        self._ttl_s = ttl_s
        self._lock = threading.Lock()
        self._answer: Optional[str] = None
        self._asked_at: Optional[float] = None

    def __call__(self) -> Optional[str]:
        with self._lock:
            now = time.monotonic()
            ttl_s = PROBE_TTL_S if self._ttl_s is None else self._ttl_s
            if self._asked_at is None or now - self._asked_at >= ttl_s:
                self._answer, self._asked_at = self._ask(), now
            return self._answer


def _http_probe(url: str, path: str = "/health", strict: bool = False) -> Callable[[], Optional[str]]:
    def ask() -> Optional[str]:
        with httpx.Client(follow_redirects=False) as client:
            return probe(client, url.rstrip("/") + path, redact_url(url.rstrip("/")), strict=strict)
    return ask


def _key(entry: Entry, settings: Settings):
    return settings.secret_variable(entry.api_key_env) if entry.api_key_env else None


def _key_problem(name: str, entry: Entry, settings: Settings) -> Optional[CRSUnavailable]:
    if entry.api_key_env and _key(entry, settings) is None:
        return CRSUnavailable(name, f"its key variable {entry.api_key_env} is not set",
                              f"export {entry.api_key_env}=... before starting the arena")
    return None


# -- http ---------------------------------------------------------------------------------------
def _down_problem(name: str, reachable: CachedProbe, what: str, fix: str) -> Optional[CRSUnavailable]:
    down = reachable()
    return None if down is None else CRSUnavailable(name, f"{what} is down: {down}", f"{fix} at {reachable.url}")


def _http_check(entry: Union[HttpEntry, IEvaLMEntry], settings: Settings,
                reachable: CachedProbe) -> Optional[CRSUnavailable]:
    return (_key_problem(entry.name, entry, settings)
            or _down_problem(entry.name, reachable, "external system", "start its server"))


class _Loaded:
    """The one instance a spec loaded (for its health report)."""

    def __init__(self) -> None:
        self.instance: Optional[ConversationalRecommender] = None


def _http_load(entry: Union[HttpEntry, IEvaLMEntry], settings: Settings,
               catalog_loader: Callable[[str], Catalog], loaded: _Loaded) -> HttpCRS:
    key = _key(entry, settings)
    if isinstance(entry, IEvaLMEntry):
        kind = IEvaLMCRS
    else:
        kind = RankingHttpCRS if entry.ranking else HttpCRS
    crs = kind(entry.name, entry.url, catalog_loader(entry.dataset), timeout_s=entry.timeout_s, api_key=key)
    loaded.instance = crs
    return crs


def _http_health(loaded: _Loaded) -> str:
    crs = loaded.instance
    if not isinstance(crs, HttpCRS):
        return "not loaded yet"
    h = crs.health
    line = f"{h.state}: {h.calls} calls, {h.failures} failed"
    return f"{line}; last failure: {h.last_error}" if h.last_error else line


def http_spec(entry: HttpEntry, settings: Settings,
              catalog_loader: Callable[[str], Catalog] = load_catalog) -> CRSSpec:
    reachable = CachedProbe(redact_url(entry.url), _http_probe(entry.url))
    loaded = _Loaded()
    return CRSSpec(
        name=entry.name,
        family="external-http",
        dataset=entry.dataset,
        description=entry.description or f"{entry.display_name}: an external system over HTTP",
        load=partial(_http_load, entry, settings, catalog_loader, loaded),
        check=partial(_http_check, entry, settings, reachable),
        live_check=True,
        display_name=entry.display_name,
        health=partial(_http_health, loaded),
    )


def ievalm_spec(entry: IEvaLMEntry, settings: Settings,
                catalog_loader: Callable[[str], Catalog] = load_catalog) -> CRSSpec:
    # iEvaLM's server answers GET / with "Model is running."; anything but a 2xx there (a 404
    # from some other server on the port, a redirect) is not that server.
    reachable = CachedProbe(redact_url(entry.url), _http_probe(entry.url, "/", strict=True))
    loaded = _Loaded()
    return CRSSpec(
        name=entry.name,
        family="external-ievalm",
        dataset=entry.dataset,
        description=entry.description or f"{entry.display_name}: an iEvaLM-CRS model server",
        load=partial(_http_load, entry, settings, catalog_loader, loaded),
        check=partial(_http_check, entry, settings, reachable),
        live_check=True,
        display_name=entry.display_name,
        health=partial(_http_health, loaded),
    )


# -- chatcrs ------------------------------------------------------------------------------------
def chatcrs_llm_client(entry: ChatCRSEntry, settings: Settings) -> LLMClient:
    """ChatCRS's own client: the entry's endpoint, model and key; retries, concurrency and the
    cache as the arena's settings say (the cache is keyed by endpoint and model)."""
    key = _key(entry, settings)
    provider = OpenAIProvider(entry.base_url, default_model=entry.model,
                              api_key=key.get_secret_value() if key is not None else None)
    return LLMClient(
        provider, model=entry.model, timeout_s=entry.timeout_s,
        retry=RetryPolicy(max_retries=settings.llm_max_retries), concurrency=settings.llm_concurrency,
        cache=ResponseCache(settings.cache_dir / "llm") if settings.llm_cache else None,
    )


def _chatcrs_check(entry: ChatCRSEntry, settings: Settings,
                   reachable: CachedProbe) -> Optional[CRSUnavailable]:
    with heavy_imports():
        from crs.chatcrs import chatcrs_problem

    return (chatcrs_problem(entry.name, entry.dataset) or _key_problem(entry.name, entry, settings)
            or _down_problem(entry.name, reachable, "its LLM endpoint", "start the server"))


def _chatcrs_load(entry: ChatCRSEntry, settings: Settings, catalog_loader: Callable[[str], Catalog]):
    with heavy_imports():
        from crs.chatcrs import load_chatcrs

    llm_factory = partial(chatcrs_llm_client, entry, settings)
    return load_chatcrs(entry.name, entry.dataset, llm_factory, settings.cache_dir,
                        catalog_loader=catalog_loader, embed_threads=settings.embed_threads,
                        prompt_path=entry.prompt_file, temperature=entry.temperature)


def chatcrs_spec(entry: ChatCRSEntry, settings: Settings,
                 catalog_loader: Callable[[str], Catalog] = load_catalog) -> CRSSpec:
    # OpenAI-compatible servers answer GET {base_url}/models; any answer but a 5xx means up.
    reachable = CachedProbe(redact_url(entry.base_url), _http_probe(entry.base_url, "/models"))
    return CRSSpec(
        name=entry.name,
        family="external-chatcrs",
        dataset=entry.dataset,
        description=entry.description or f"{entry.display_name}: ChatCRS on {entry.model}",
        load=partial(_chatcrs_load, entry, settings, catalog_loader),
        check=partial(_chatcrs_check, entry, settings, reachable),
        live_check=True,
        display_name=entry.display_name,
    )


def external_specs(settings: Settings, builtin_names: frozenset[str] = frozenset(),
                   catalog_loader: Callable[[str], Catalog] = load_catalog) -> list[CRSSpec]:
    """The systems of ARENA_SYSTEMS (none when it is unset); raises SystemsFileError."""
    if settings.systems_file is None:
        return []
    specs = []
    for entry in read_systems_file(Path(settings.systems_file), builtin_names):
        if isinstance(entry, HttpEntry):
            specs.append(http_spec(entry, settings, catalog_loader))
        elif isinstance(entry, IEvaLMEntry):
            specs.append(ievalm_spec(entry, settings, catalog_loader))
        else:
            specs.append(chatcrs_spec(entry, settings, catalog_loader))
    return specs
