"""What a dialogue so far says about the request, read once per call.

The signals score catalog items from this: the user's and the system's texts,
the catalog items each side named (with whether the user liked, rejected or had
seen them), the knowledge-graph entities the user named (people, genres, years)
and the words the user ruled out ("not too gory", "no horror").

Negation and "seen it" are read per clause by `arena.reading.scope`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Optional, Sequence

from arena.catalogs.catalog import Catalog, CatalogItem
from arena.reading.scope import SEEN_CUE, clause_bounds, negated_before, negated_phrases, without_negations

@dataclass(frozen=True)
class ItemMention:
    item: CatalogItem
    age: int  # utterances between this one and the end of the dialogue (0 = the last one)
    by_user: bool
    negative: bool  # the user rejected or disliked it
    seen: bool  # the user said they have seen it


@dataclass(frozen=True)
class EntityMention:
    entity_id: int
    age: int
    negative: bool


@dataclass
class RequestContext:
    """The dialogue so far as the signals see it. `texts` are oldest first."""

    texts: list[str]
    from_user: list[bool]
    items: list[ItemMention] = field(default_factory=list)
    entities: list[EntityMention] = field(default_factory=list)
    negated_phrases: list[str] = field(default_factory=list)
    shown_ids: set[str] = field(default_factory=set)  # items the system showed in earlier turns
    # The texts with the titles they name blanked: live, a title's words ("River" of "Wind River") say
    # nothing of what else is wanted, and matched as plain words they bring lookalike titles ("Mystic
    # River"); the titles themselves reach the signals as `items`. The offline protocol, where a named
    # title's sequel is a fair answer, keeps the words (`titles_as_words`).
    untitled: list[str] = field(default_factory=list)
    titles_as_words: bool = True

    @property
    def user_texts(self) -> list[tuple[int, str]]:
        """(age, text) of every user utterance, oldest first, less what negations rule out
        (those words score separately, see `negated_phrases`)."""
        n = len(self.texts)
        return [(n - 1 - i, without_negations(t)) for i, (t, u) in enumerate(zip(self.texts, self.from_user)) if u]

    @property
    def user_words(self) -> list[tuple[int, str]]:
        """`user_texts`, without the titles they name unless `titles_as_words`."""
        blanked = not self.titles_as_words and len(self.untitled) == len(self.texts)
        texts = self.untitled if blanked else self.texts
        n = len(texts)
        return [(n - 1 - i, without_negations(t)) for i, (t, u) in enumerate(zip(texts, self.from_user)) if u]

    def rejected_ids(self) -> set[str]:
        return {m.item.item_id for m in self.items if m.by_user and (m.negative or m.seen)}


def read_context(
    catalog: Catalog,
    texts: Sequence[str],
    from_user: Sequence[bool],
    shown: Sequence[Sequence[str]] = (),
) -> RequestContext:
    """Read the dialogue: `texts[i]` was said by the user when `from_user[i]`;
    `shown[i]` are the ids of the items the system showed with utterance i (if any)."""
    texts = [t or "" for t in texts]
    ctx = RequestContext(list(texts), [bool(u) for u in from_user])
    n = len(texts)
    last_offered: list[CatalogItem] = []
    for index, (text, is_user) in enumerate(zip(texts, ctx.from_user)):
        age = n - 1 - index
        linked, entities = _links(catalog, text)
        ctx.untitled.append(_blanked(text, [(start, end) for _, start, end in linked]))
        shown_here = list(shown[index]) if index < len(shown) else []
        if not is_user:
            ctx.shown_ids.update(shown_here)
            offered = [item for item, _, _ in linked]
            offered += [catalog.get(i) for i in shown_here if catalog.get(i) is not None]
            last_offered = offered
            for item, _, _ in linked:
                ctx.items.append(ItemMention(item, age, by_user=False, negative=False, seen=False))
            continue
        for item, start, _ in linked:
            c_start, c_end = clause_bounds(text, start)
            seen = bool(SEEN_CUE.search(text[c_start:c_end]))
            ctx.items.append(ItemMention(item, age, True, negated_before(text, start), seen))
        if not linked and SEEN_CUE.search(text) and last_offered:
            # "I've seen that one": the titles the system just offered.
            for item in last_offered:
                ctx.items.append(ItemMention(item, age, True, negative=False, seen=True))
        for name, entity_id in entities:
            if catalog.by_entity_id(entity_id) is not None and catalog.entity_kinds.get(entity_id) == "item":
                continue  # items come through `link_spans` with their negation
            where = _find(text, name)
            negative = where is not None and negated_before(text, where)
            ctx.entities.append(EntityMention(int(entity_id), age, negative))
        ctx.negated_phrases.extend(negated_phrases(text))
    return ctx


@lru_cache(maxsize=8192)
def _links(catalog: Catalog, text: str) -> tuple[tuple, tuple]:
    """Titles (with spans) and graph entities linked in one utterance; a live dialogue repeats
    its earlier utterances on every call, so each is linked once."""
    return tuple(catalog.link_spans(text)), tuple(catalog.link_entities(text))


def _blanked(text: str, spans: Sequence[tuple[int, int]]) -> str:
    for start, end in sorted(spans, reverse=True):
        text = text[:start] + " " * (end - start) + text[end:]
    return text


def _find(text: str, name: str) -> Optional[int]:
    where = text.lower().find(name.lower())
    return where if where >= 0 else None
