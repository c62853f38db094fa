"""Names a request gives that are no catalog title, person or genre: a studio or franchise ("something
from Pixar", "any Marvel movies?") and a liked title the catalog lacks ("I loved <a title it lacks>,
something like it").

Neither may reach the ranker as plain words: matched against titles, "Pixar" brings "Pixels" and an
unknown title's words bring lookalikes. A studio counts only as far as the catalog's own fields (title,
plot, genre tags) name it (`maker_entries`); where they name it too rarely, the reply says the catalog
cannot tell. The caller (the dialogue policy) decides which phrases the catalog links.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterable, Sequence

from arena.catalogs.catalog import CatalogItem
from arena.reading.phrase_table import maker_credits, maker_names_listed
from arena.reading.vocabulary import GENRE_WORD, ORIGIN_WORDS
from arena.titles.phrases import FUNCTION_WORDS, normalize

# A run of capitalised words, small words allowed inside ("Return of the Jedi"), and one capitalised word
# after a comma ("Paris, Texas").
_CAPITALISED = re.compile(
    r"[A-Z0-9][\w'’:-]*(?:\s+(?:(?:of|the|and|a|an|in|on|to|&)\s+)*[A-Z0-9][\w'’:-]*)*"
    r"(?:,\s+[A-Z][\w'’:-]*(?![\w'’:-]*\s+[A-Z]))?")
# A liking said of what follows: "I loved X", "we just watched X", "something like X", "similar to X".
_LIKING = re.compile(r"\b(?:(?:i|we)\s+(?:really\s+|just\s+|also\s+|totally\s+)?(?:loved?|liked?|enjoyed?|"
                     r"adored?|(?:re)?watched|saw)|(?:something|anything|movies?|films?|ones?|more)\s+"
                     r"(?:like|similar to)|similar to|along the lines of)\s+", re.IGNORECASE)
_NOT_A_TITLE = frozenset("""i i'm i'd i've i'll ok okay please thanks hi hello hey what who when which how
why is are was does did can could would tell me the a an and it that this those these them one ones movie
movies film films something anything everything""".split())
# A kind noun after a name makes it a maker or franchise ("Marvel movies"), not a title.
_KIND_AFTER = re.compile(r"^\s*(?:'s\s+)?(?:movies?|films?|animations?|cartoons?|ones?|classics?|stuff|"
                         r"flicks?|titles?|shows?|universe|franchise)\b", re.IGNORECASE)
# "from Pixar", "made by DreamWorks", "a Disney movie", "any Marvel films": the name of a studio or franchise.
_FROM_NAME = re.compile(
    r"\b(?:from|by|made by|produced by)\s+(?:the\s+)?([A-Za-z][\w'-]+(?:\s+[A-Z][\w'-]+)?)")
_NAME_BEFORE_KIND = re.compile(r"\b([A-Z][\w'-]+(?:\s+[A-Z][\w'-]+)?)(?:'s)?\s+(?:movies?|films?|animations?|"
                               r"cartoons?|classics?|flicks?|universe|franchise)\b")
# Words after "from" that say when, where or how, never who made it.
_NOT_A_MAKER = frozenset("""today tonight yesterday scratch home school work now then here there before after
earlier later recently netflix the a an that this those these them it start beginning end back list catalog
past future year years decade decades era century time times my your our his her their same different other
another any some all each every""".split())
MIN_MAKER_ITEMS = 3  # a studio fewer catalog entries name cannot be told from the catalog
RARE_PLOT_WORD = 5  # a lower-case name after "from" must be this rare in the plots ("from marvel")


def liked_title_phrases(text: str) -> list[tuple[str, int]]:
    """(phrase, position) of each phrase a liking cue names that is written as a title ("I loved Zorblax
    the Destroyer" -> "Zorblax the Destroyer"), not followed by a kind noun ("I liked Marvel movies")."""
    out = []
    for cue in _LIKING.finditer(text):
        match = _CAPITALISED.match(text, cue.end())
        if match is None:
            continue
        phrase = match.group(0).strip(" :-'’")
        words = phrase.split()
        if not words or all(w.lower() in _NOT_A_TITLE for w in words) or _KIND_AFTER.match(text, match.end()):
            continue
        out.append((phrase, match.start()))
    return out


def maker_names(text: str, plot_count: dict) -> list[tuple[str, int]]:
    """(name, position) of the studios or franchises a request names ("from Pixar", "any Marvel movies?");
    `plot_count` is how many catalog plots use each lower-case word (a lower-case "from marvel" counts only
    when the plots hardly use the word). Genre, origin, time and function words are no makers; the caller
    leaves out people, titles and subjects."""
    found: list[tuple[str, int]] = []
    for pattern in (_FROM_NAME, _NAME_BEFORE_KIND):
        for match in pattern.finditer(text):
            name = match.group(1).strip(" '")
            low = normalize(name)
            first = low.split()[0] if low else ""
            sentence_start = not text[:match.start(1)].strip() or text[:match.start(1)].rstrip()[-1:] in ".!?"
            if (not low or first in FUNCTION_WORDS or first in _NOT_A_MAKER or first in _NOT_A_TITLE
                    or GENRE_WORD.search(name) or first in ORIGIN_WORDS or re.search(r"\d", name)
                    or (len(first) < 3 and maker_credits(first) is None)):
                continue
            if not name[0].isupper() and plot_count.get(low, 0) > RARE_PLOT_WORD:
                continue  # "from home", "by myself": an everyday word, not a name
            if sentence_start and pattern is _NAME_BEFORE_KIND and plot_count.get(low, 0) > RARE_PLOT_WORD:
                continue  # "Funny movies?" at the start: capitalised because it starts the sentence
            if not any(low == normalize(n) for n, _ in found):
                found.append((name, match.start(1)))
    return found + _table_names(text, found)


def _table_names(text: str, found: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """The phrase table's names the capitalised patterns missed: "good marvel movies" in lower case, and
    "a good anime", a kind the table tells by its makers' credits, wherever it stands."""
    out: list[tuple[str, int]] = []
    for pattern in (_listed_before_kind(), _TABLE_NOUN):
        for match in pattern.finditer(text):
            if not any(start <= match.start(1) < start + len(n) or normalize(match.group(1)) == normalize(n)
                       for n, start in found + out):  # "Studio Ghibli" already holds its "Ghibli"
                out.append((match.group(1), match.start(1)))
    return out


@lru_cache(maxsize=1)
def _listed_before_kind() -> re.Pattern:
    """A studio or franchise of the phrase table, in any case, before a kind noun ("marvel movies")."""
    names = "|".join(re.escape(n) for n in maker_names_listed())
    return re.compile(rf"\b({names})\b(?=\s*(?:'s\s+)?(?:movies?|films?|ones|stuff|flicks?|universe|"
                      r"franchise|animations?|cartoons?|superhero)\b)", re.IGNORECASE)


# Kinds the phrase table tells by credits that people write as plain nouns, wherever they stand.
_TABLE_NOUN = re.compile(r"\b(anime|ghibli)s?\b", re.IGNORECASE)


@lru_cache(maxsize=1024)  # asked once per catalog item when a studio's entries are counted
def _name_pattern(name: str) -> re.Pattern:
    return re.compile(r"(?<![\w])" + r"[\s-]*".join(map(re.escape, normalize(name).split())) + r"(?![\w])",
                      re.IGNORECASE)


def _credited(item: CatalogItem, marks: tuple[frozenset[str], frozenset[str]]) -> bool:
    credits, genres = marks
    people = {person for names in item.people.values() for person in names}
    return bool(people & credits) and (not genres or bool(genres & set(item.genres)))


def names_maker(item: CatalogItem, name: str) -> bool:
    """Whether the item comes from the studio or franchise by its own record: credits the phrase table
    ties to that name (Stan Lee among a film's writers marks it Marvel's) where the table lists it, else
    its title, plot or genre tags naming it. A listed studio is told by credits only: its name in a title
    or plot (a documentary about the studio, a film that mentions its comics) makes no film of its own."""
    marks = maker_credits(name)
    if marks is not None:
        return _credited(item, marks)
    return bool(_name_pattern(name).search(" ".join([item.title, item.plot, *item.genres])))


def maker_entries(items: Iterable[CatalogItem], name: str, enough: int = MIN_MAKER_ITEMS) -> int:
    """How many entries come from the studio or franchise (`names_maker`), counted up to `enough`."""
    count = 0
    for item in items:
        if names_maker(item, name):
            count += 1
            if count >= enough:
                break
    return count


def blanked(text: str, spans: Sequence[tuple[int, int]]) -> str:
    """The text with each span blanked (positions kept), so its words reach no ranker."""
    for start, end in sorted(spans, reverse=True):
        text = text[:start] + " " * (end - start) + text[end:]
    return text


def _instead(asked_else: bool) -> str:
    return ("these go by the rest of what you asked" if asked_else
            else "these are general picks (a genre or a title I have would steer them)")


def missing_title_note(phrase: str, asked_else: bool) -> str:
    """One line for a liked title the catalog lacks, and what the list went by instead."""
    return f"I don't have {phrase} in my catalog, so {_instead(asked_else)}."


def unknown_maker_note(name: str, asked_else: bool) -> str:
    """One line for a studio or franchise the catalog's records do not name."""
    return (f"My catalog doesn't record which studio or franchise a film comes from, so I can't pick by "
            f"{name}; {_instead(asked_else)}.")


__all__ = ["MIN_MAKER_ITEMS", "blanked", "liked_title_phrases", "maker_entries", "maker_names",
           "missing_title_note", "names_maker", "unknown_maker_note"]

