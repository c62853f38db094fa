"""The last step of every reply: it may name only the items it shows.

`named_titles` finds what a reply presents as a title: catalog titles the
linker recognises (exactly or misspelt) and spans written the way titles are
written ("Title (Year)", quoted or emphasised capitalised phrases), whether
the catalog knows them or not. `enforce_shown_titles` is the one check every
system runs before answering: sentences that name a title which is not among
the shown items are dropped, and every shown title the reply keeps is written
as its catalog label, so the year in the text is the catalog's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Optional, Sequence

from rapidfuzz import fuzz

from arena.catalogs.catalog import Catalog, CatalogItem, person_label
from arena.titles.phrases import FUNCTION_WORDS, normalize

_QUOTED = re.compile(r"[\"“]([A-Z0-9][^\"“”\n]{0,80}?)[\"”]")
_EMPHASISED = re.compile(r"(\*\*|\*|__)([A-Z0-9][^*_\n]{0,80}?)\1")
_YEAR_IN_BRACKETS = re.compile(r"\s*\((\d{4})\)")
_WORD_BEFORE = re.compile(r"([\w'’&:!.,–-]+)\s*$")
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"”')\]]*\s+|\n+")
_LIST_MARK = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s*")
TITLE_JOINERS = frozenset("of the a an and in on to for at with from vs my your our is".split())


@dataclass(frozen=True)
class NamedTitle:
    """A span of the reply presented as a title, and the catalog item it names (None: unknown)."""

    start: int
    end: int
    text: str
    item: Optional[CatalogItem]


def title_like_spans(text: str) -> list[tuple[int, int]]:
    """Spans written as titles: quoted or emphasised capitalised phrases, and the
    capitalised words before a year in brackets ("Blade Runner (1982)")."""
    spans = [(m.start(), m.end()) for m in _QUOTED.finditer(text)]
    spans += [(m.start(), m.end()) for m in _EMPHASISED.finditer(text)]
    for match in _YEAR_IN_BRACKETS.finditer(text):
        start = _title_start_before(text, match.start())
        if start is not None:
            spans.append((start, match.end()))
    return spans


def _title_start_before(text: str, end: int) -> Optional[int]:
    """Where the run of title words ending at `end` starts: capitalised words or
    numbers, with short joining words between them ("Return of the Jedi")."""
    start, position, words = None, end, 0
    while words < 12:
        match = _WORD_BEFORE.search(text[:position])
        if match is None:
            break
        word = match.group(1).strip(".,:!")
        if not word:
            break
        if word[0].isupper() or word[0].isdigit():
            start = match.start(1)
        elif word.lower() not in TITLE_JOINERS:
            break
        if match.group(1)[-1] in ".,!" and start != match.start(1):
            break  # a sentence or clause ended before this title
        position, words = match.start(1), words + 1
        if text[:position].rstrip()[-1:] in (".", "!", "?", "\n", ":", ";", ","):
            break
    return start


def named_titles(
    text: str, catalog: Catalog, resolve=None, prefer: Sequence[CatalogItem] = ()
) -> list[NamedTitle]:
    """Every title the text names, in order, non-overlapping.

    `resolve(span_text) -> CatalogItem | None` links a title-like span the
    linker did not recognise (e.g. fuzzy and embedding matching); without it
    such spans are looked up with `Catalog.find_title`. When a title is shared
    by several items (two films called "Dark City"), an item of `prefer` wins.
    """
    by_title = {normalize(item.title): item for item in prefer}

    def preferred(item: Optional[CatalogItem]) -> Optional[CatalogItem]:
        return by_title.get(normalize(item.title), item) if item is not None else None

    found = [NamedTitle(offset + s, offset + e, text[offset + s:offset + e], preferred(item))
             for offset, line in _lines(text) for item, s, e in catalog.link_spans(line)]
    taken = [(t.start, t.end) for t in found]
    for start, end in sorted(title_like_spans(text)):
        if any(start < e and s < end for s, e in taken):
            continue
        span = text[start:end].strip("\"“”*_ ")
        if not span or _is_not_a_title(span, catalog):
            continue
        item = preferred(resolve(span) if resolve is not None else catalog.find_title(span))
        found.append(NamedTitle(start, end, text[start:end], item))
        taken.append((start, end))
    return sorted(found, key=lambda t: t.start)


def _lines(text: str) -> list[tuple[int, str]]:
    """(offset, line) of each line: a title never runs across a line break ("... and Iron Man.\n2. The
    Avengers" names Iron Man, not Iron Man 2)."""
    out, offset = [], 0
    for line in text.split("\n"):
        out.append((offset, line))
        offset += len(line) + 1
    return out


def _is_not_a_title(span: str, catalog: Catalog) -> bool:
    """Quoted words that are a person, a genre or a plain word are not titles."""
    if _YEAR_IN_BRACKETS.search(span):
        return False
    words = span.split()
    if len(words) == 1 and words[0].lower() in FUNCTION_WORDS:
        return True
    return catalog.is_person_or_attribute(span)


def sentence_spans(text: str, keep_together: Iterable[tuple[int, int]] = ()) -> list[tuple[int, int]]:
    """(start, end) of each sentence or line; never splits inside `keep_together`
    (a title such as "Mr. Deeds" or "E.T. the Extra-Terrestrial") nor after a list number."""
    protected = list(keep_together)
    cuts = [0]
    for match in _SENTENCE_END.finditer(text):
        if any(s < match.start() < e for s, e in protected):
            continue
        if _LIST_MARK.fullmatch(text[cuts[-1] : match.start()]):
            continue  # "2. Title ..." is one sentence, not "2." and "Title ..."
        cuts.append(match.end())
    cuts.append(len(text))
    return [(a, b) for a, b in zip(cuts, cuts[1:]) if text[a:b].strip()]


def drop_sentences(text: str, bad: Sequence[tuple[int, int]], keep_together=()) -> str:
    """The text without the sentences that overlap any `bad` span."""
    kept = []
    for start, end in sentence_spans(text, keep_together):
        if not any(s < end and start < e for s, e in bad):
            kept.append(text[start:end])
        elif "\n" in text[start:end]:
            kept.append("\n")  # the line break after a dropped sentence stays
    return _tidy("".join(kept))


def replace_spans(text: str, replacements: Sequence[tuple[int, int, str]]) -> str:
    for start, end, new in sorted(replacements, reverse=True):
        text = text[:start] + new + text[end:]
    return text


def _tidy(text: str) -> str:
    lines = [re.sub(r"[ \t]+", " ", line).strip() for line in text.splitlines()]
    lines = [line for line in lines if line and not _LIST_MARK.fullmatch(line)]
    return "\n".join(lines).strip()


def enforce_shown_titles(
    text: str, shown: Sequence[CatalogItem], catalog: Catalog, fallback: str = "",
    unlinked_titles: Sequence[str] = (),
) -> str:
    """The reply without any sentence naming a title it does not show; shown titles
    written as their catalog labels. Every system's reply passes through here.

    `unlinked_titles` are items the reply shows that no catalog entry matches (an external
    system's own items, shown as plain text): naming them is naming a shown item.
    When nothing is left, `fallback` is returned (callers pass a sentence that
    names no title)."""
    shown_ids = {item.item_id for item in shown}
    also_shown = {_bare_key(title) for title in unlinked_titles}

    def is_bad(t: NamedTitle) -> bool:
        if t.item is not None and t.item.item_id in shown_ids:
            return False
        return _bare_key(t.text) not in also_shown

    titles = _outside_facts(named_titles(text, catalog, prefer=shown), text, shown)
    bad = [(t.start, t.end) for t in titles if is_bad(t)] + withheld_facts(text, shown)
    if bad:
        text = drop_sentences(text, bad, keep_together=[(t.start, t.end) for t in titles])
        titles = _outside_facts(named_titles(text, catalog, prefer=shown), text, shown)
    # A title inside a quoted plot is the catalog's own wording ("inspired by Superman's selfless act"):
    # written as a label it would read "inspired by Superman (1978) selfless act".
    plots = plot_spans(text, shown)
    labels = [
        (t.start + _list_mark_length(text[t.start:t.end]), t.end, _label_span(text, t))
        for t in titles
        if t.item is not None and t.item.item_id in shown_ids and _written_as_title(t)
        and not any(a <= t.start and t.end <= b for a, b in plots)
    ]
    text = _tidy(replace_spans(text, labels))
    return text or fallback


def withheld_facts(text: str, shown: Sequence[CatalogItem]) -> list[tuple[int, int]]:
    """Where a sentence naming a shown item states a value the catalog check withheld from it (a
    remake's director for the original, a second film's cast: `CatalogItem.withheld_values`), unless
    the value is still a fact of a shown item. Such a sentence is dropped like one naming an unshown
    title, so no reply states a fact the check flagged, whoever wrote it."""
    known = {normalize(person_label(v)) for item in shown
             for v in (*item.genres, *(n for names in item.people.values() for n in names))}
    spans = []
    sentences = sentence_spans(text)
    for item in shown:
        values = {person_label(v) for values in item.withheld_values.values() for v in values}
        # a short title ("It", "Up") only as written, or every "it" would name it
        flags = re.IGNORECASE if len(item.title) > 4 else 0
        title = re.compile(r"(?<!\w)" + re.escape(item.title) + r"(?!\w)", flags)
        for value in values:
            if len(value) < 3 or normalize(value) in known:
                continue
            for match in re.finditer(r"(?<!\w)" + re.escape(value) + r"(?!\w)", text, re.IGNORECASE):
                sentence = next(((a, b) for a, b in sentences if a <= match.start() < b), None)
                if sentence is not None and title.search(text[sentence[0]:sentence[1]]):
                    spans.append((match.start(), match.end()))
    return spans


def fact_spans(text: str, shown: Sequence[CatalogItem]) -> list[tuple[int, int]]:
    """Where the text states a shown item's catalog facts: its people's names, its genres and its
    plot. A title found inside one ("Emma" in "Emma Stone") is a fact, not a title."""
    spans = []
    for item in shown:
        facts = [n for names in item.people.values() for n in names] + list(item.genres)
        for fact in facts:
            if len(fact) < 3:
                continue
            for match in re.finditer(r"(?<!\w)" + re.escape(fact) + r"(?!\w)", text, re.IGNORECASE):
                spans.append((match.start(), match.end()))
    return spans + plot_spans(text, shown)


def plot_spans(text: str, shown: Sequence[CatalogItem]) -> list[tuple[int, int]]:
    """Where the text quotes a shown item's catalog plot (to the end of its line)."""
    spans = []
    for item in shown:
        plot = item.plot.strip()
        if len(plot) >= 40:
            start = text.find(plot[:40])
            if start >= 0:
                end = text.find("\n", start)
                spans.append((start, len(text) if end < 0 else end))
    return spans


def _outside_facts(titles: list[NamedTitle], text: str, shown: Sequence[CatalogItem]) -> list[NamedTitle]:
    """The titles that are not part of a shown item's stated facts (a shown title always counts)."""
    facts = fact_spans(text, shown)
    if not facts:
        return titles
    shown_ids = {item.item_id for item in shown}
    return [t for t in titles if (t.item is not None and t.item.item_id in shown_ids)
            or not any(s <= t.start and t.end <= e for s, e in facts)]


def _bare_key(title: str) -> str:
    """A written title without its year, quotes or emphasis, normalised for comparison."""
    return normalize(_YEAR_IN_BRACKETS.sub("", title).strip("\"“”*_ "))


def _written_as_title(title: NamedTitle) -> bool:
    """Rewrite a title written with a year (which may be wrong) or misspelt; a correct bare
    title, an alias, or a phrase of a plot that happens to match stays as written."""
    bare = _YEAR_IN_BRACKETS.sub("", title.text).strip("\"“”*_ ")
    similarity = fuzz.ratio(normalize(bare), normalize(title.item.title))
    has_year = bare != title.text.strip("\"“”*_ ")
    return similarity >= 85 and (has_year or similarity < 100)


def _list_mark_length(span: str) -> int:
    """A list number the title's span took in ("2. Zoolander 2"): it stays when the label goes in."""
    mark = _LIST_MARK.match(span)
    return mark.end() if mark and mark.end() < len(span) and span[:mark.end()].strip()[:1].isdigit() else 0


def _label_span(text: str, title: NamedTitle) -> str:
    """The catalog label, keeping the quotes or emphasis the reply put around the title."""
    raw = text[title.start + _list_mark_length(text[title.start : title.end]) : title.end]
    lead = raw[: len(raw) - len(raw.lstrip("\"“*_"))]
    trail = raw[len(raw.rstrip("\"”*_")) :]
    return f"{lead}{title.item.label}{trail}"


def unshown_titles(text: str, shown: Sequence[CatalogItem], catalog: Catalog) -> list[NamedTitle]:
    """The titles `text` names that are not among `shown` (empty for a valid reply)."""
    shown_ids = {item.item_id for item in shown}
    return [t for t in named_titles(text, catalog, prefer=shown) if t.item is None or t.item.item_id not in shown_ids]
