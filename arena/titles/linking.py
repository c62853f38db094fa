"""Finding the movie titles an utterance mentions (TITLE slot values of dialogue acts, among others).

Three sources, most trusted first: the items a CRS attached to its reply
(`Utterance.items`), numbered lists ("1: X 2: Y", "1. X"), and "Title (Year)"
mentions as ReDial-trained systems and IARD write them. A catalog, when one is
given, adds mentions written without a year (`Catalog.link`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional, Protocol

from arena.catalogs.catalog import Catalog, CatalogItem, load_catalog
from arena.dialogue import Utterance
from arena.titles.names import clean_title, title_key, years_in_parens


@dataclass(frozen=True)
class Mention:
    title: str
    start: int = -1  # character offsets into the utterance text; -1 if not located
    end: int = -1
    source: str = "text"  # items | list | year | catalog

    def slot(self) -> list[Any]:
        if self.start >= 0:
            return ["TITLE", self.title, self.start, self.end]
        return ["TITLE", self.title]


class TitleLinker(Protocol):
    def link_spans(self, text: str) -> list[tuple[CatalogItem, int, int]]:
        """(item with a `label`, start, end) for every title mentioned in `text`."""

    # Linkers key caches of the utterances they linked (evaluators.acts.features).
    def __hash__(self) -> int: ...


class CatalogLinker:
    """Links titles against the shipped catalogs (arena.catalogs.catalog), loaded on first use."""

    def __init__(self, names: tuple[str, ...] = ("redial", "opendialkg")):
        self.names = names
        self._catalogs: Optional[list[Catalog]] = None

    def _load(self) -> list[Catalog]:
        if self._catalogs is None:
            self._catalogs = [load_catalog(name) for name in self.names]
        return self._catalogs

    def link_spans(self, text: str) -> list[tuple[CatalogItem, int, int]]:
        spans: list[tuple[CatalogItem, int, int]] = []
        for catalog in self._load():
            spans.extend(catalog.link_spans(text))
        return spans

    def is_person_or_attribute(self, phrase: str) -> bool:
        return any(catalog.is_person_or_attribute(phrase) for catalog in self._load())

    def exact_title(self, phrase: str) -> Optional[CatalogItem]:
        for catalog in self._load():
            item = catalog.exact_title(phrase)
            if item is not None:
                return item
        return None


_shared_linker: Optional[CatalogLinker] = None


def shared_linker() -> CatalogLinker:
    """One catalog linker per process (the catalogs take seconds to index)."""
    global _shared_linker
    if _shared_linker is None:
        _shared_linker = CatalogLinker()
    return _shared_linker


# "1: X", "1. X", "1) X", "#1 X" at the start or after whitespace; not "10 Things".
_LIST_MARKER = re.compile(r"(?:(?<=\s)|^)#?(\d{1,2})\s*[:.)]\s+(?=\S)")
# Words that may sit in lower case inside a title ("Lord of the Rings").
_CONNECTORS = {
    "of", "the", "a", "an", "and", "in", "on", "to", "for", "with", "at", "from", "by",
    "&", "-", "–", "vs", "vs.", "de", "la", "le", "du", "von", "is", "are", "be", "my", "me",
    "you", "your", "who", "what", "not", "no", "into", "up", "out", "all",
}
_MAX_TITLE_WORDS = 10
_STARTERS = {
    "try", "watch", "see", "check", "maybe", "perhaps", "also", "or", "and", "but", "how", "what", "have",
    "did", "do", "you", "i", "if", "then", "so", "yes", "no", "well", "oh", "sure", "recommend", "suggest",
    "consider", "enjoy", "loved", "liked", "like", "about", "seen", "watched", "hi", "hello", "ok", "okay",
}
_LIST_TOKEN = re.compile(r"#?\d{1,2}[:.)]")
_ABBREVIATION = re.compile(r"[A-Z]\.|vs\.|Mr\.|Mrs\.|Dr\.|St\.|Jr\.")
# IARD repeats linked mentions as "Title (2012) <Title (2012)>".
_ANGLE_DUPLICATE = re.compile(r"<[^<>]{1,120}>")


def _title_before(text: str, end: int) -> Optional[tuple[int, str]]:
    """Walk back from a "(Year)" to the start of the title words before it."""
    tokens = list(re.finditer(r"\S+", text[:end]))
    start = None
    for k in range(len(tokens) - 1, max(-1, len(tokens) - 1 - _MAX_TITLE_WORDS), -1):
        word, offset = tokens[k].group(), tokens[k].start()
        if _LIST_TOKEN.fullmatch(word):
            break
        if k < len(tokens) - 1 and re.search(r"[.!?;,…]$", word) and not _ABBREVIATION.fullmatch(word):
            break
        lead = re.match(r"^[.…!?\"'“”‘’(]+", word)
        if lead:
            word, offset = word[lead.end():], offset + lead.end()
        if word[:1].isupper() or word[:1].isdigit():
            start = offset
            if lead and re.match(r"[.…!?]", lead.group()):
                break  # "...The Princess Diaries": the dots end the previous sentence
        elif word.lower() in _CONNECTORS:
            continue
        else:
            break
    if start is None:
        return None
    # "Try Heat (1995)": a sentence-opening verb or adverb is not part of the title.
    first = re.match(r"(\S+)\s+(?=\S)", text[start:end])
    if first and first.group(1).lower().strip(",") in _STARTERS:
        start += first.end()
    return start, text[start:end]


def year_mentions(text: str) -> list[Mention]:
    out: list[Mention] = []
    for m in years_in_parens(text):
        found = _title_before(text, m.start())
        if not found:
            continue
        start, raw = found
        title = clean_title(raw)
        if title:
            out.append(Mention(title=f"{title} ({m.group(1)})", start=start, end=m.end(), source="year"))
    return out


def list_mentions(text: str) -> list[Mention]:
    """Items of a numbered list written in one line or several."""
    markers = list(_LIST_MARKER.finditer(text))
    numbers = [int(m.group(1)) for m in markers]
    # A list counts when it starts at 1 and counts up; stray "2." in prose does not.
    if not markers or numbers[0] != 1:
        return []
    kept = [markers[0]]
    for m, n in zip(markers[1:], numbers[1:]):
        if n == int(kept[-1].group(1)) + 1:
            kept.append(m)
    out: list[Mention] = []
    for i, m in enumerate(kept):
        seg_end = kept[i + 1].start() if i + 1 < len(kept) else len(text)
        segment = text[m.end():seg_end]
        year = next(years_in_parens(segment), None)
        if year:
            cut = year.end()
        else:
            stop = re.search(r"(?<=[a-z0-9)\]])[.!?](?:\s|$)|\n| - | – |: ", segment)
            cut = stop.start() if stop else len(segment.rstrip())
        raw = segment[:cut].rstrip()
        title = clean_title(raw)
        if not title or len(title.split()) > 12:
            continue
        label = f"{title} ({year.group(1)})" if year else title
        out.append(Mention(title=label, start=m.end(), end=m.end() + len(raw), source="list"))
    return out


def find_mentions(utterance: Utterance, linker: Optional[TitleLinker] = None) -> list[Mention]:
    """Every title mention, deduplicated by normalised title, in text order."""
    text = _ANGLE_DUPLICATE.sub(lambda m: " " * len(m.group()), utterance.text)
    found: list[Mention] = []
    for item in utterance.items:
        title = item.title.strip()
        if title:
            pos = text.find(clean_title(title)) if clean_title(title) else -1
            end = pos + len(clean_title(title)) if pos >= 0 else -1
            found.append(Mention(title=title, start=pos, end=end, source="items"))
    found.extend(list_mentions(text))
    found.extend(year_mentions(text))
    if linker is not None:
        try:
            linked = linker.link_spans(text)
        except Exception:  # a catalog problem must not stop annotation
            linked = []
        for catalog_item, start, end in linked:
            found.append(Mention(title=catalog_item.label, start=start, end=end, source="catalog"))
    return _dedupe(found)


_SOURCE_RANK = {"items": 0, "list": 1, "catalog": 2, "year": 3, "text": 4}


def _dedupe(mentions: list[Mention]) -> list[Mention]:
    """One mention per title; a located mention overlapping a more trusted one is dropped."""
    located = sorted((m for m in mentions if m.start >= 0),
                     key=lambda m: (_SOURCE_RANK.get(m.source, 9), -(m.end - m.start), m.start))
    kept: list[Mention] = []
    for m in located:
        if not any(k.start < m.end and m.start < k.end for k in kept):
            kept.append(m)
    kept.extend(m for m in mentions if m.start < 0)
    by_key: dict[str, Mention] = {}
    for m in sorted(kept, key=lambda m: (m.start < 0, m.start)):
        k = title_key(m.title)
        if k and k not in by_key:
            by_key[k] = m
    return list(by_key.values())


def mask_titles(text: str, mentions: list[Mention], placeholder: str = "MOVIE") -> str:
    """Text with located mentions replaced, so a classifier sees "I loved MOVIE"."""
    text = _ANGLE_DUPLICATE.sub("", text) if not mentions else text
    spans = sorted((m.start, m.end) for m in mentions if m.start >= 0 and m.end > m.start)
    out, last = [], 0
    for start, end in spans:
        if start < last:
            continue
        out.append(text[last:start])
        out.append(placeholder)
        last = end
    out.append(text[last:])
    masked = "".join(out)
    masked = _ANGLE_DUPLICATE.sub("", masked)
    return re.sub(r"\s+", " ", masked).strip()
