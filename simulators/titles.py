"""Title handling shared by the simulators: normalising, years, spotting mentions."""

from __future__ import annotations

import re
from typing import Iterable, Optional

_YEAR = re.compile(r"\s*\((\d{4})\)\s*$")
_ARTICLE_SUFFIX = re.compile(r"^(.*),\s*(the|a|an|la|le|les|il|el|das|der|die)$", re.IGNORECASE)
_NON_WORD = re.compile(r"[^0-9a-z]+")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


def split_year(title: str) -> tuple[str, Optional[int]]:
    """'Heat (1995)' -> ('Heat', 1995); titles without a year give None."""
    match = _YEAR.search(title or "")
    if not match:
        return (title or "").strip(), None
    return title[: match.start()].strip(), int(match.group(1))


def readable_title(title: str) -> str:
    """'Usual Suspects, The (1995)' -> 'The Usual Suspects (1995)'."""
    name, year = split_year(title)
    match = _ARTICLE_SUFFIX.match(name.strip())
    if match:
        name = f"{match.group(2).capitalize()} {match.group(1)}"
    return f"{name} ({year})" if year else name


def with_article(phrase: str) -> str:
    """'action movie' -> 'an action movie'."""
    return ("an " if phrase[:1].lower() in "aeiou" else "a ") + phrase


def normalize_title(title: str) -> str:
    """Lower-case words only, year dropped, 'Usual Suspects, The' -> 'the usual suspects'."""
    name, _ = split_year(title)
    match = _ARTICLE_SUFFIX.match(name.strip())
    if match:
        name = f"{match.group(2)} {match.group(1)}"
    return _NON_WORD.sub(" ", name.lower()).strip()


def title_variants(title: str) -> list[str]:
    """Normalised forms of a title, including alternatives given in parentheses.

    MovieLens writes foreign films as 'Seven (Se7en)' or 'Shanghai Triad (Yao a yao ...)'.
    """
    name, _ = split_year(title)
    variants = [normalize_title(name)]
    inner = re.findall(r"\(([^)]*)\)", name)
    outer = re.sub(r"\([^)]*\)", " ", name)
    for candidate in [outer, *inner]:
        norm = normalize_title(candidate)
        if norm and norm not in variants:
            variants.append(norm)
    return [v for v in variants if v]


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text or "") if s.strip()]


def mentions_title(text: str, title: str, min_chars: int = 3) -> bool:
    """Whether `text` names `title` (word-boundary match of the normalised name)."""
    haystack = f" {_NON_WORD.sub(' ', (text or '').lower()).strip()} "
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
