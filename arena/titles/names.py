"""Movie titles as text: the one normaliser, years, article suffixes, spotting a known title.

`title_key` is the comparable form every part of the arena uses (catalog
look-ups, dialogue-act titles, Recall@k and preference coverage, simulators):
the year dropped, a trailing article moved to the front ("Usual Suspects, The"),
then the words folded as `arena.titles.phrases.normalize` folds them (lower case, no
accents, no punctuation, "&" read as "and"). Years count only within
`MIN_YEAR`..`MAX_YEAR`.
"""

from __future__ import annotations

import re
from typing import Iterable, Iterator, Optional

from arena.titles.phrases import MAX_YEAR, MIN_YEAR, normalize

_YEAR_IN_PARENS = re.compile(r"\(\s*(\d{4})\s*\)")
_TRAILING_YEAR = re.compile(r"\s*\(\s*(\d{4})\s*\)\s*$")
_ARTICLE_SUFFIX = re.compile(r"^(.*),\s*(the|a|an|la|le|les|il|el|das|der|die)$", re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


def is_year(value: str) -> bool:
    return len(value) == 4 and value.isdigit() and MIN_YEAR <= int(value) <= MAX_YEAR


def years_in_parens(text: str) -> Iterator[re.Match]:
    """Every "(1995)" in `text` whose number is a plausible release year."""
    return (m for m in _YEAR_IN_PARENS.finditer(text) if is_year(m.group(1)))


def split_year(title: str) -> tuple[str, Optional[int]]:
    """'Heat (1995)' -> ('Heat', 1995); titles without a (plausible) year give None."""
    match = _TRAILING_YEAR.search(title or "")
    if not match or not is_year(match.group(1)):
        return (title or "").strip(), None
    return title[: match.start()].strip(), int(match.group(1))


def clean_title(title: str) -> str:
    """A title as written, without its year(s), extra spaces and surrounding quotes or marks."""
    title = _YEAR_IN_PARENS.sub(lambda m: "" if is_year(m.group(1)) else m.group(), title)
    return re.sub(r"\s+", " ", title).strip(" \t\"'“”‘’*_,;:-")


def _article_first(name: str) -> tuple[str, Optional[str]]:
    match = _ARTICLE_SUFFIX.match(name.strip())
    return (match.group(1), match.group(2)) if match else (name, None)


def readable_title(title: str) -> str:
    """'Usual Suspects, The (1995)' -> 'The Usual Suspects (1995)'."""
    name, year = split_year(title)
    rest, article = _article_first(name)
    if article:
        name = f"{article.capitalize()} {rest}"
    return f"{name} ({year})" if year else name


def title_key(title: str) -> str:
    """The comparable form of a title: 'Usual Suspects, The (1995)' -> 'the usual suspects'."""
    rest, article = _article_first(clean_title(title or ""))
    return normalize(f"{article} {rest}" if article else rest)


def title_variants(title: str) -> list[str]:
    """Keys of a title, including alternatives given in parentheses.

    MovieLens writes foreign films as 'Seven (Se7en)' or 'Shanghai Triad (Yao a yao ...)'.
    """
    name, _ = split_year(title)
    variants = [title_key(name)]
    inner = re.findall(r"\(([^)]*)\)", name)
    outer = re.sub(r"\([^)]*\)", " ", name)
    for candidate in [outer, *inner]:
        key = title_key(candidate)
        if key and key not in variants:
            variants.append(key)
    return [v for v in variants if v]


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text or "") if s.strip()]


def mentions_title(text: str, title: str, min_chars: int = 3) -> bool:
    """Whether `text` names `title` (a whole-word match of one of its keys)."""
    haystack = f" {normalize(text or '')} "
    for variant in title_variants(title):
        if len(variant) < min_chars and " " not in variant:
            continue
        if f" {variant} " in haystack:
            return True
    return False


def strip_mentions(text: str, titles: Iterable[str]) -> str:
    """Drop every sentence that names one of `titles`."""
    titles = [t for t in titles if t]
    kept = [s for s in sentences(text) if not any(mentions_title(s, t) for t in titles)]
    return " ".join(kept)
