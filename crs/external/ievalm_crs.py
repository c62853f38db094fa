"""A system served by an iEvaLM-CRS model server (`kind: ievalm` in the systems file).

iEvaLM-CRS (and CRS Arena and UserSimCRS, which reuse it) serves KBRD, BARCOR, UniCRS and
ChatGPT behind a small Flask app:

    POST {url}/   {"context": ["earlier utterance", ...], "message": "the user's message"}
               -> {"response": "the system's reply"}
    GET  {url}/   -> "Model is running."

The context is plain strings, oldest first, starting at the user's first utterance (the
reference client drops a greeting the system said before it). The server keeps a little state
between turns of one conversation in its Flask session cookie, so each conversation here keeps
its own cookies and sends them back; one conversation's state never reaches another.

Replies carry no item list: the films a reply names are found in its text by the arena's one
title linker (`arena.titles.linking.find_mentions` with the system's catalog) and linked to
the catalog, so the reply check keeps them and the Recommended panel shows them.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from http.cookiejar import CookieJar, DefaultCookiePolicy
from http.cookies import CookieError, SimpleCookie
from typing import Optional

import httpx
from pydantic import SecretStr

from arena.catalogs.catalog import Catalog, CatalogItem
from arena.conversation.crs_interface import TOP_K_SHOWN
from arena.dialogue import Dialogue, RecommendedItem, Role, Utterance
from arena.titles.linking import find_mentions
from crs.external.contract import MAX_TEXT_CHARS, as_recommended
from crs.external.http_crs import FALLBACK_REPLY, HttpCRS, probe
from crs.reply_check import enforce_shown_titles

# Conversations whose server state (cookies) is kept; the oldest is forgotten first.
MAX_CONVERSATIONS = 4096


class _RefuseAll(DefaultCookiePolicy):
    """The shared HTTP client stores no cookies: state is kept per conversation instead."""

    def set_ok(self, cookie, request) -> bool:  # noqa: D102 - the policy's own hook
        return False


def ievalm_context(dialogue: Dialogue) -> tuple[list[str], str]:
    """(context, message) as the reference client sends them: the last user utterance is the
    message; the context is every earlier utterance from the user's first one on. Failed turns
    (the notice the arena showed instead of a reply) are not part of the conversation."""
    turns = [u for u in dialogue.utterances if u.error is None]
    if not turns or turns[-1].role != Role.USER:
        raise ValueError("the dialogue does not end with a user utterance")
    first_user = next(i for i, u in enumerate(turns) if u.role == Role.USER)
    return [u.text for u in turns[first_user:-1]], turns[-1].text


def items_named_in(text: str, catalog: Catalog) -> list[CatalogItem]:
    """The catalog items a reply names, in the order it names them (at most TOP_K_SHOWN)."""
    mentions = find_mentions(Utterance(role=Role.AGENT, text=text), linker=catalog)
    located = sorted((m for m in mentions if m.start >= 0), key=lambda m: m.start)
    items: list[CatalogItem] = []
    for mention in located:
        item = catalog.find_title(mention.title)
        # A mention read too widely ("... for you: 1: Alien (1979)") may still hold a title.
        found = [item] if item is not None else [i for i, _, _ in catalog.link_spans(
            text[mention.start:mention.end])]
        items.extend(i for i in found if i not in items)
    return items[:TOP_K_SHOWN]


class IEvaLMCRS(HttpCRS):
    """An iEvaLM-CRS model server as a `ConversationalRecommender`."""

    def __init__(self, name: str, url: str, catalog: Catalog, *, timeout_s: float = 30.0,
                 api_key: Optional[SecretStr] = None, transport: Optional[httpx.BaseTransport] = None):
        super().__init__(name, url, catalog, timeout_s=timeout_s, api_key=api_key, transport=transport)
        self._client.cookies = CookieJar(policy=_RefuseAll())
        self._state_lock = threading.Lock()
        self._cookies: OrderedDict[str, dict[str, str]] = OrderedDict()

    def __repr__(self) -> str:
        return f"IEvaLMCRS(name={self.name!r}, url={self.shown_url!r})"

    def respond(self, dialogue: Dialogue) -> tuple[str, list[RecommendedItem]]:
        context, message = ievalm_context(dialogue)
        headers = {}
        cookies = self._conversation_cookies(dialogue.dialogue_id)
        if cookies:
            headers["cookie"] = "; ".join(f"{k}={v}" for k, v in cookies.items())
        body, response_headers = self._exchange("/", {"context": context, "message": message}, headers)
        reply = body.get("response") if isinstance(body, dict) else None
        if not isinstance(reply, str):
            raise self._fault("malformed", 'the reply is not {"response": "..."}')
        if len(reply) > MAX_TEXT_CHARS:
            raise self._fault("oversized", f"reply longer than {MAX_TEXT_CHARS} characters")
        self._keep_cookies(dialogue.dialogue_id, response_headers)
        self._record(None)
        shown = items_named_in(reply, self.catalog)
        text = enforce_shown_titles(reply.strip(), shown, self.catalog, FALLBACK_REPLY)
        return text, as_recommended(shown)

    # -- per-conversation server state ------------------------------------------------------
    def _conversation_cookies(self, dialogue_id: str) -> dict[str, str]:
        with self._state_lock:
            cookies = self._cookies.get(dialogue_id)
            if cookies is None:
                return {}
            self._cookies.move_to_end(dialogue_id)
            return dict(cookies)

    def _keep_cookies(self, dialogue_id: str, headers: httpx.Headers) -> None:
        found: dict[str, str] = {}
        for line in headers.get_list("set-cookie"):
            jar = SimpleCookie()
            try:
                jar.load(line)
            except CookieError:
                continue  # a cookie the server cannot have meant for us; its state is lost
            found.update({name: morsel.value for name, morsel in jar.items()})
        if not found:
            return
        with self._state_lock:
            kept = self._cookies.setdefault(dialogue_id, {})
            kept.update(found)
            self._cookies.move_to_end(dialogue_id)
            while len(self._cookies) > MAX_CONVERSATIONS:
                self._cookies.popitem(last=False)

    # -- availability -------------------------------------------------------------------
    def probe(self) -> Optional[str]:
        """Why the server cannot be reached now, or None: `GET /` must answer 2xx."""
        return probe(self._client, self.url + "/", self.shown_url, strict=True)
