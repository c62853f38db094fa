"""Questions that sort the items already shown: "do any of those have Bruce Willis?", "which of
these are from the 90s?". The answer comes from the shown items' catalog records; no new list is made.

The words after the lead ("which of those") are read as a request would be (genre, person, era,
audience, subject); the items the last list showed that meet all of it are the answer. A lead with
nothing the reader knows after it is no filter, and the message is read as any other question.
"""

from __future__ import annotations

import re
from typing import Optional, Sequence

from arena.catalogs.catalog import CatalogItem
from arena.reading.constraints import Constraints
from arena.reading.subjects import stem
from arena.titles.phrases import FUNCTION_WORDS, normalize

# "do any of those ...", "are either of these ...", "which of them ...", "which ones ..."
_LEAD = re.compile(
    r"^\W*(?:(?:and|so|ok(?:ay)?|hmm+|well),?\s+)?"
    r"(?:(?:do|does|did|are|is|was|were|have|has|would) (?:any|either|one|none|some|all) (?:one )?of "
    r"(?:those|these|them|the(?:se|m)? (?:\w+ )?(?:movies|films|books|shows|ones|titles))"
    r"|which (?:ones?|(?:ones? )?of (?:those|these|them|the (?:\w+ )?(?:movies|films|books|ones)))"
    r"|(?:are there )?any (?:of (?:those|these|them)|ones?) (?:that|which|with))\b",
    re.IGNORECASE)


def filter_words(text: str) -> Optional[str]:
    """The words that say what the shown items should have, or None when the message is no such question."""
    match = _LEAD.search(text or "")
    return text[match.end():] if match else None


# Words of the question itself, not of what the items should hold ("do any of those *include* ...").
_ASKING_WORDS = frozenset("""include includes including feature features featuring involve involves have has
contain contains got get show shows deal deals anything something stuff kind sort type lot lots much many
movie movies film films one ones thing things good well really like sound sounds seem seems""".split())


def content_words(words: str) -> list[str]:
    """The words a filter question asks the shown items to bear ("swords", "sorcery")."""
    return [w for w in normalize(words).split()
            if len(w) >= 3 and w not in FUNCTION_WORDS and w not in _ASKING_WORDS and not w.isdigit()]


def plot_matches(words: str, pool: Sequence[CatalogItem]) -> Optional[list[CatalogItem]]:
    """The shown items whose record (plot, genres) bears a word of the question, by stem; None when the
    question names no word to look for (then it is no filter)."""
    wanted = {stem(w) for w in content_words(words)}
    if not wanted:
        return None
    return [item for item in pool if wanted & _record_stems(item)]


def _record_stems(item: CatalogItem) -> set[str]:
    return {stem(w) for w in normalize(" ".join([item.plot or "", *item.genres])).split()}


def described(item: CatalogItem) -> str:
    from crs.item_answers import described as record_phrase

    return record_phrase(item)


def words_answer(matched: Sequence[CatalogItem], words: str, pool: Sequence[CatalogItem]) -> str:
    """The answer to a filter question no rule reads, from the shown records' own words."""
    asked = content_words(words)
    if matched:  # the words the records bear out, not every word of the question
        borne = set().union(*(_record_stems(i) for i in matched))
        asked = [w for w in asked if stem(w) in borne] or asked
    said = asked[0] if len(asked) == 1 else ", ".join(asked[:-1]) + (" and " if matched else " or ") + asked[-1]
    if not matched:  # what the records do say, so the person can judge for themselves
        known = " ".join(f"{i.label}: {i.plot}" if i.plot else f"{i.label} is {described(i)}." for i in pool[:3])
        return (f"Going by what my catalog says of them, none of the ones I showed mentions {said}. "
                f"What it does say: {known} Shall I look for some that do?")
    names = [i.label for i in matched]
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    lead = "All of them" if len(matched) == len(pool) > 1 else listed
    about = " ".join(f"{i.label}: {i.plot}" for i in matched[:2] if i.plot)
    return f"{lead} {'touch' if len(matched) > 1 else 'touches'} on {said}, going by the catalog. {about}".strip()


def what_was_asked(asked: Constraints) -> str:
    """"comedy, with Bruce Willis, from the 1980s": the filter as a phrase."""
    parts = [asked.genre_words()] if asked.genres else []
    if asked.kind:
        parts.append(f"a {asked.kind}")
    described = asked.describe()
    return ", ".join(p for p in parts + [described] if p)


def filter_answer(matched: Sequence[CatalogItem], asked: Constraints, shown_count: int) -> str:
    said = what_was_asked(asked) or "what you asked"
    if not matched:
        return (f"None of the ones I showed matches that ({said}), going by the catalog. "
                "Shall I look for some that do?")
    names = [i.label for i in matched]
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    if len(matched) == shown_count > 1:
        return f"All of them fit ({said}): {listed}. Would you like more like them, or something different?"
    verb = "fits" if len(matched) == 1 else "fit"
    them = "it" if len(matched) == 1 else "them"
    return f"Of the ones I showed, {listed} {verb} ({said}). Would you like more like {them}?"


def reply_to_filter(move) -> tuple[str, list[CatalogItem]]:
    """The reply to a `UserMove` whose aspect is "filter", and the items it names (those that fit)."""
    reading = move.reading
    if len(move.last_shown) > 1 or reading is None:
        pool = move.last_shown
    else:
        pool = reading.last_list or move.last_shown
    return filter_answer(move.about, move.filtered_by or Constraints(), len(pool)), list(move.about)


def answer_move(move) -> tuple[str, list[CatalogItem]]:
    """The answer to a question move: a filter of the shown items, or a question about items."""
    from crs.item_answers import answer

    if move.aspect == "filter":
        return reply_to_filter(move)
    if move.aspect and move.aspect.startswith("define:"):
        from crs.item_answers import genre_meaning

        return genre_meaning(move.aspect.split(":", 1)[1]), []
    if move.aspect == "unknown_title":
        from arena.reading.references import title_phrase

        phrase = title_phrase(move.text) or "that title"
        return (f"I don't have {phrase} in my catalog, so I can't tell you about it. Shall I suggest "
                "something along those lines, or tell you about one of the films I showed?"), []
    if move.aspect == "filter_words":
        pool = move.last_shown if len(move.last_shown) > 1 or move.reading is None else (
            move.reading.last_list or move.last_shown)
        named = list(move.about) or list(pool[:3])  # no match: the reply says what each shown one is
        return words_answer(move.about, filter_words(move.text) or "", pool), named
    return answer(move.aspect, move.about, move.text, move.constraints)
