"""What a message does with a title it names: holds it up as the model of what it wants ("something
like Star Wars", "I just rewatched Jurassic Park, anything along those lines?"), asks for its series
("the sequels"), or asks for more after taking one ("I'll watch X, but anything else like it?").

The dialogue policy (`crs.dialogue_policy`) finds the titles in the catalog and asks these rules
what the words around them mean; the words themselves are read only here, with the rest of the reader.
"""

from __future__ import annotations

import re
from typing import Optional

# "simmilar", "similiar": the word as people type it
_LIKE_BEFORE = re.compile(r"\b(like|simm?ill?i?ar to|as|in the vein of|along the lines of)\s+$", re.I)
_SIMILAR = re.compile(r"\b(simm?ill?i?ar|same (kind|sort|vein|style)|along (those|the same) lines|"
                      r"in that vein|like (that|it|this|those))\b", re.I)
# A title the user has watched and asks for more like: "I just rewatched Jurassic Park. Got anything along
# those lines?", "I loved Spirited Away".
_WATCHED_BEFORE = re.compile(r"\b(loved|liked|enjoyed|watched|rewatched|saw|seen|finished|read)\s+$", re.I)
_ASKS_MORE = re.compile(r"\b(any|anything|something|simm?ill?i?ar|recommend|suggest|another|more|others?|"
                        r"ideas?|along|like (that|it|this))\b", re.I)
# "Martin Scorsese's best mob movies": the name without its "'s" (two spaces keep the positions).
_POSSESSIVE = re.compile(r"(?<=\w)['’]s\b")
# Asking for more after taking one: "I'll watch X, but anything else like it?"
_ASKS_MORE_AFTER = re.compile(r"\b(another|any( ?thing)? (else|more|other)|more like|others?|something else|"
                              r"recommend|suggest)\b|\?", re.I)
# The user asks for the rest of a franchise: "the sequels", "more in the series".
_WANTS_SERIES = re.compile(
    r"\b(sequels?|prequels?|franchise|trilogy|saga|(in|of) the series|the rest of)\b", re.I
)


def asks_for_similar(text: str) -> bool:
    """"Anything similar?", "in the same vein", "more like that": likeness asked for, whatever title."""
    return bool(_SIMILAR.search(text))


def likens_to_next(before: str) -> bool:
    """Whether the words right before a title hold it up as a model: "like <title>", "in the vein of"."""
    return bool(_LIKE_BEFORE.search(before))


def watched_next(before: str) -> bool:
    """Whether the words right before a title say the user has watched it: "I loved <title>"."""
    return bool(_WATCHED_BEFORE.search(before))


def asks_for_more(text: str) -> bool:
    """Whether the message asks for anything at all beyond what it names ("any", "something", "more")."""
    return bool(_ASKS_MORE.search(text))


def asks_for_more_after_taking(text: str) -> bool:
    """A message that takes a title and still asks for more: "I'll watch X, but anything else?"."""
    return bool(_ASKS_MORE_AFTER.search(text))


def wants_the_series(text: str) -> bool:
    """"The sequels", "more in the series": the rest of a named title's franchise is asked for."""
    return bool(_WANTS_SERIES.search(text))


def without_possessives(text: str) -> str:
    """The text with "'s" blanked out and every position kept ("Martin Scorsese's" -> "Martin Scorsese  ")."""
    return _POSSESSIVE.sub("  ", text)


# A run of capitalised words, small words allowed inside ("Battle Royale", "Return of the Jedi").
_CAPITALISED_RUN = re.compile(
    r"(?<![\w'])[A-Z0-9][\w'’:-]*(?:\s+(?:(?:of|the|and|a|an|in|on|to|&)\s+)*[A-Z0-9][\w'’:-]*)*")
_NOT_A_TITLE = frozenset("""i i'm i'd i've i'll ok okay please thanks hi hello hey what who when which how
why is are was does did can could would tell me the a an and""".split())


def title_phrase(text: str) -> Optional[str]:
    """The phrase a question writes as a title ("what is Battle Royale about?" -> "Battle Royale"): the
    longest run of capitalised words that is not the sentence's first word alone; None when there is none."""
    best = None
    for match in _CAPITALISED_RUN.finditer(text or ""):
        phrase = match.group(0).strip(" :-")
        words = phrase.split()
        sentence_start = not text[:match.start()].strip() or text[:match.start()].rstrip()[-1:] in ".!?"
        if sentence_start:  # "What is ..." : the first word is capitalised anyway
            words = words[1:]
            phrase = " ".join(words)
        if not words or all(w.lower() in _NOT_A_TITLE for w in words):
            continue
        if best is None or len(phrase) > len(best):
            best = phrase
    return best
