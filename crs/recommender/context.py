"""What a dialogue so far says about the request, read once per call.

The signals score catalog items from this: the user's and the system's texts,
the catalog items each side named (with whether the user liked, rejected or had
seen them), the knowledge-graph entities the user named (people, genres, years)
and the words the user ruled out ("not too gory", "no horror").

Negation is read per clause: "I hated Cats, but loved Up" rejects Cats only.
A cue counts for what follows it in its clause ("not too gory" rules out
"gory"; "I've seen it" and "seen that one" mark the titles just offered as seen).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Optional, Sequence

from arena.catalog import Catalog, CatalogItem
from arena.titles.phrases import FUNCTION_WORDS, normalize

# A cue that turns what follows it in the clause into something unwanted.
NEGATION_CUE = re.compile(
    r"\b(not|never|no|nothing|without|don'?t|didn'?t|doesn'?t|isn'?t|wasn'?t|aren'?t|can'?t|won'?t|"
    r"hate[ds]?|dislike[ds]?|avoid|except|other than|rather than|instead of|too much|tired of|sick of)\b",
    re.IGNORECASE,
)
# Words after a cue that still say the user likes the thing ("not a fan of X" is negative,
# but "I don't know, something like X" is not); kept small on purpose.
_POSITIVE_AFTER_CUE = re.compile(r"^\s*(only|just|sure|mind|know|care|matter|problem|doubt)\b", re.IGNORECASE)
# The user has seen the title(s) in this clause, or those the system just offered.
SEEN_CUE = re.compile(
    r"\b(i'?ve (already )?(seen|watched)|i have (already )?(seen|watched)|already (seen|watched|saw)|"
    r"seen (it|that|this|them|those|both|all)|watched (it|that|this|them|those)|saw (it|that|this|them))\b",
    re.IGNORECASE,
)
_CLAUSE_BREAK = re.compile(r"[.!?;]+|,?\s+\b(but|although|though|whereas|however|yet)\b", re.IGNORECASE)
# Filler that a negated phrase drops: "not too gory" rules out "gory", not "too".
_NEGATION_FILLER = frozenset(
    "too very so that much many really any anything something movie movies film films show shows "
    "one ones kind sort type stuff like want watch see seen please".split()
)


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

    @property
    def user_texts(self) -> list[tuple[int, str]]:
        """(age, text) of every user utterance, oldest first, less what negations rule out
        (those words score separately, see `negated_phrases`)."""
        n = len(self.texts)
        return [(n - 1 - i, without_negations(t)) for i, (t, u) in enumerate(zip(self.texts, self.from_user)) if u]

    def rejected_ids(self) -> set[str]:
        return {m.item.item_id for m in self.items if m.by_user and (m.negative or m.seen)}


def clause_bounds(text: str, position: int) -> tuple[int, int]:
    """The clause around `position`: "I hated Cats, but loved Up" splits at the "but"."""
    bounds = [0] + [m.end() for m in _CLAUSE_BREAK.finditer(text)] + [len(text) + 1]
    start = max(b for b in bounds if b <= position)
    end = min(b for b in bounds if b > position)
    return start, min(end, len(text))


def negated_before(text: str, start: int) -> bool:
    """Whether a negation cue governs the span starting at `start` (same clause, before it)."""
    clause_start, _ = clause_bounds(text, start)
    before = text[clause_start:start]
    for cue in NEGATION_CUE.finditer(before):
        if not _POSITIVE_AFTER_CUE.match(before[cue.end():]):
            return True
    return False


def _scope_end(text: str, start: int) -> int:
    """Where a negation that ends at `start` stops: the clause end or the next comma."""
    _, end = clause_bounds(text, start)
    comma = text.find(",", start, end)
    return comma if comma >= 0 else end


def negated_phrases(text: str) -> list[str]:
    """The content words each negation cue rules out: "nothing too gory please" -> ["gory"]."""
    out = []
    for cue in NEGATION_CUE.finditer(text):
        rest = text[cue.end():]
        if _POSITIVE_AFTER_CUE.match(rest):
            continue
        end = _scope_end(text, cue.end())
        words = [
            w for w in normalize(text[cue.end():end]).split()[:4]
            if w not in FUNCTION_WORDS and w not in _NEGATION_FILLER
        ]
        if words:
            out.append(" ".join(words))
    return out


def without_negations(text: str) -> str:
    """The text less what its negation cues rule out: "horror but nothing too gory" -> "horror but"."""
    cut, kept = 0, []
    for cue in NEGATION_CUE.finditer(text):
        if cue.start() < cut or _POSITIVE_AFTER_CUE.match(text[cue.end():]):
            continue
        end = _scope_end(text, cue.end())
        kept.append(text[cut:cue.start()])
        cut = end
    kept.append(text[cut:])
    return " ".join(part.strip() for part in kept if part.strip())


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


def _find(text: str, name: str) -> Optional[int]:
    where = text.lower().find(name.lower())
    return where if where >= 0 else None


# Turns that carry nothing to recommend from: greetings, thanks, small talk.
_SMALL_TALK = frozenset(
    """hi hello hey hiya howdy yo greetings good morning afternoon evening day there thanks thank
    you ok okay cool great nice sure yes yeah yep no nope well fine how are doing today bye goodbye
    see later lol hmm um uh oh ah wow""".split()
)


def has_request_content(text: str) -> bool:
    """Whether a user turn gives anything to recommend from: any word beyond greetings,
    thanks and small talk ("hi there" no; "a classic mob movie", "recommend something" yes)."""
    return any(w not in FUNCTION_WORDS and w not in _SMALL_TALK for w in normalize(text or "").split())
