"""The JSON contract between the arena and a CRS served over HTTP (docs/bring-your-own-crs.md).

    POST {url}/respond    {"contract": "1", "system": NAME, "dialogue": <Dialogue JSON>}
                       -> {"text": "...", "items": ["catalog id or title", {"id": ..., "title": ...}, ...]}
    POST {url}/recommend  same request plus "k"  -> {"items": [...]}   (optional: a full ranking, for recall)
    GET  {url}/health                            -> {"status": "ok", ...}   (optional)

A server may also stream its answer (`application/x-ndjson`, one JSON object a line, or
`text/event-stream`, `data: {...}` events): each piece's `text` is appended and the last `items`
given count. The arena shows the reply once it is complete.

`items` are best first. Each is a catalog id, a title, or an object with either or both; the
arena links them to its catalog (an id first, then the title through the one title linker) and
keeps an item it cannot link as plain text, flagged by an id starting with `UNLINKED_PREFIX`.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Optional, Sequence, Union

from pydantic import BaseModel, ConfigDict, Field

from arena.catalogs.catalog import Catalog, CatalogItem
from arena.conversation.crs_interface import TOP_K_KEPT
from arena.dialogue import Dialogue, RecommendedItem, UserInfo
from crs.title_matching import TitleMatcher

CONTRACT_VERSION = "1"
# Limits on what a system may send back: a reply longer than this is a fault, not something to show.
MAX_RESPONSE_BYTES = 512 * 1024
MAX_TEXT_CHARS = 4000
MAX_ITEMS = TOP_K_KEPT
MAX_TITLE_CHARS = 300
# An item no catalog entry matches: shown as its title, recorded with this id prefix.
UNLINKED_PREFIX = "unlinked:"


class ItemRef(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: Optional[str] = None
    title: Optional[str] = Field(None, max_length=MAX_TITLE_CHARS)


class RespondRequest(BaseModel):
    contract: str = CONTRACT_VERSION
    system: str = ""
    dialogue: Dialogue
    k: Optional[int] = Field(None, ge=1, le=MAX_ITEMS)  # /recommend only: how many items to rank


class RespondResponse(BaseModel):
    model_config = ConfigDict(extra="ignore")

    text: str = Field(max_length=MAX_TEXT_CHARS)
    items: list[Union[ItemRef, str]] = Field(default_factory=list, max_length=MAX_ITEMS)


class RankingResponse(BaseModel):
    model_config = ConfigDict(extra="ignore")

    items: list[Union[ItemRef, str]] = Field(default_factory=list, max_length=MAX_ITEMS)


STREAM_TYPES = ("application/x-ndjson", "application/jsonl", "text/event-stream")


def is_stream(content_type: str) -> bool:
    return content_type.split(";", 1)[0].strip().lower() in STREAM_TYPES


def join_stream(raw: bytes) -> dict[str, Any]:
    """One answer from streamed pieces (JSON lines or server-sent `data:` events); ValueError when
    a piece is not a JSON object."""
    text, items = [], None
    for line in raw.decode("utf-8").splitlines():
        line = line.strip()
        if line.startswith("data:"):
            line = line[5:].strip()
        elif line.startswith(("event:", "id:", "retry:", ":")):
            continue
        if not line or line == "[DONE]":
            continue
        piece = json.loads(line)
        if not isinstance(piece, dict):
            raise ValueError("a streamed piece is not a JSON object")
        text.append(str(piece.get("text") or ""))
        if piece.get("items") is not None:
            items = piece["items"]
    return {"text": "".join(text), "items": items or []}


def shared_dialogue(dialogue: Dialogue) -> dict[str, Any]:
    """The dialogue as sent to a server: the conversation only. Who the user is (a person's
    pseudonymous id, a simulator's goal and target items, which would let a system game a run),
    the battle it belongs to, feedback, scores and ratings stay in the arena."""
    shared = dialogue.model_copy(update={
        "user": UserInfo(kind=dialogue.user.kind, id="anonymous"),
        "metadata": {}, "feedback": None, "scores": {}, "ratings": [],
    })
    data = shared.model_dump(mode="json")
    for utterance in data["utterances"]:
        utterance["ratings"] = []
    return data


def item_refs(items: Sequence[RecommendedItem]) -> list[dict[str, str]]:
    """A system's items as the contract sends them (both id and title, so any arena can link them)."""
    return [{"id": item.item_id, "title": item.title} for item in items]


def is_unlinked(item: RecommendedItem) -> bool:
    return item.item_id.startswith(UNLINKED_PREFIX)


def unlinked_item(title: str) -> RecommendedItem:
    digest = hashlib.sha1(title.encode("utf-8")).hexdigest()[:12]
    return RecommendedItem(item_id=f"{UNLINKED_PREFIX}{digest}", title=title)


class ItemLinker:
    """Returned items to catalog items: an id the catalog has, else the title through the
    arena's title matcher (exact, aliases, then fuzzy); else an unlinked item."""

    def __init__(self, catalog: Catalog):
        self.catalog = catalog
        self.matcher = TitleMatcher(catalog)  # no embedding model: linking stays cheap and offline

    def link(self, raw: Sequence[Union[ItemRef, str]]) -> list[Union[CatalogItem, RecommendedItem]]:
        """Catalog items where linked, unlinked `RecommendedItem`s where not; order kept, repeats dropped."""
        linked: list[Union[CatalogItem, RecommendedItem]] = []
        seen: set[str] = set()
        for ref in raw:
            ref = ItemRef(id=ref, title=ref) if isinstance(ref, str) else ref
            item = self._find(ref)
            if item is None:
                title = " ".join((ref.title or ref.id or "").split())
                if not title:
                    continue
                item = unlinked_item(title)
            key = item.item_id
            if key not in seen:
                seen.add(key)
                linked.append(item)
        return linked

    def _find(self, ref: ItemRef) -> Optional[CatalogItem]:
        if ref.id:
            item = self.catalog.get(str(ref.id).strip())
            if item is not None:
                return item
        if ref.title and ref.title.strip():
            return self.matcher.match(ref.title)
        return None


def as_recommended(items: Sequence[Any]) -> list[RecommendedItem]:
    return [i.to_recommended() if isinstance(i, CatalogItem) else i for i in items]
