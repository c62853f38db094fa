"""What a simulated user may name when it says what it wants: facts of its own profile.

A small model writing for the user invents tastes ("I love westerns") or picks them up from the
system's reply. A preference statement must name only genres, titles and years or decades of
the user's profile or goal; `SimulatedUser.say` replaces a generated message that names anything
else with the simulator's profile-based template.

A preference statement is a sentence that says what the user wants or likes ("I'd like ...",
"I enjoy ...", "something with ..."). A sentence that names a title the system showed is a
reaction to a suggestion ("I like the sound of Jumanji"), not a statement of taste, and is
not checked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, Optional

from arena.dialogue import Dialogue
from arena.titles.names import split_year
from simulators.catalog_access import CatalogView

_PREFERENCE_CUE = re.compile(
    r"\b(i'?d (really )?(like|love|prefer)|i would (like|love|prefer)|i (want|need)|i'?m (looking|after|into|in the mood)|"
    r"looking for|in the mood for|i (really |also |usually |mostly |do |don'?t |do not )?(like|love|enjoy|prefer|adore|hate)|"
    r"fan of|something (with|in|like|starring|by|from|set)|(a|an|some) .{0,20}(movie|film)s? (from|with|like)|"
    r"how about|favou?rite|prefer)\b",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_YEAR = re.compile(r"\b(18[5-9]\d|19\d\d|20\d\d)\b")
_DECADE = re.compile(r"(?:\b(19|20)|')?\b(\d)0'?s\b")
# Genre words that are also everyday words count only as "<word> movie/film".
_AMBIGUOUS = frozenset({"war", "music", "family", "history", "sport", "biography", "action"})
_EXTRA_GENRES = ("comedy", "horror", "western", "thriller", "romance", "romantic comedy", "drama", "sci-fi",
                 "science fiction", "documentary", "animation", "animated", "musical", "mystery", "fantasy",
                 "adventure", "crime", "superhero", "war", "family")
_WORD = re.compile(r"[A-Za-z0-9'&:-]+")
_STOP_TITLE_WORDS = frozenset({"a", "an", "the", "i", "it", "you", "me", "my", "and", "or", "of", "to", "in", "is"})


def normalise_genre(genre: str) -> str:
    """'Romance Film' -> 'romance', 'Comedies' -> 'comedy'."""
    g = " ".join(genre.lower().replace("_", " ").split())
    g = re.sub(r"\s+(film|movie)s?$", "", g)
    if g.endswith("ies"):
        g = g[:-3] + "y"
    elif g.endswith("s") and not g.endswith(("ss", "sci-fi")) and g not in ("news",):
        g = g[:-1]
    return g


def _title_name(title: str) -> str:
    return " ".join(w.lower() for w in _WORD.findall(split_year(title)[0]))


@dataclass(frozen=True)
class ProfileFacts:
    """What the user may name in a preference statement (lower-cased, normalised)."""

    genres: frozenset[str] = frozenset()
    titles: frozenset[str] = frozenset()
    years: frozenset[int] = frozenset()
    decades: frozenset[int] = frozenset()

    @classmethod
    def of(cls, genres: Iterable[str] = (), titles: Iterable[str] = (), years: Iterable[Optional[int]] = (),
           decades: Iterable[Optional[int]] = ()) -> "ProfileFacts":
        years = {int(y) for y in years if y}
        return cls(
            genres=frozenset(normalise_genre(g) for g in genres if g),
            titles=frozenset(_title_name(t) for t in titles if t),
            years=frozenset(years),
            decades=frozenset({int(d) // 10 * 10 for d in decades if d} | {y // 10 * 10 for y in years}),
        )

    def merged(self, other: "ProfileFacts") -> "ProfileFacts":
        return ProfileFacts(self.genres | other.genres, self.titles | other.titles,
                            self.years | other.years, self.decades | other.decades)

    def has_genre(self, genre: str) -> bool:
        return any(genre == g or re.search(rf"\b{re.escape(genre)}\b", g) or re.search(rf"\b{re.escape(g)}\b", genre)
                   for g in self.genres)


class Vocabulary:
    """The genre words and catalog titles a message can name, for one catalog."""

    def __init__(self, catalog: CatalogView):
        genres = {normalise_genre(g) for g in catalog.common_genres} | set(_EXTRA_GENRES)
        patterns = []
        for genre in sorted(genres, key=len, reverse=True):
            word = re.escape(genre)
            plural = word[:-1] + "(?:y|ies)" if genre.endswith("y") else word + "s?"
            if genre in _AMBIGUOUS:
                patterns.append(rf"\b{plural}\s+(?:movie|film|flick)s?\b")
            else:
                patterns.append(rf"\b{plural}\b")
        self._genre = re.compile("|".join(patterns), re.IGNORECASE)
        # Titles of two or more words, or one word of six or more letters; genre words never count as titles.
        self.titles: set[str] = set()
        for facts in catalog.all():
            name = _title_name(facts.title)
            words = name.split()
            if not words or name in genres or all(w in _STOP_TITLE_WORDS for w in words):
                continue
            if len(words) >= 2 or len(name) >= 6:
                self.titles.add(name)
        self.longest = 8

    def genres_in(self, text: str) -> list[str]:
        return [normalise_genre(m.group(0)) for m in self._genre.finditer(text)]

    def titles_in(self, text: str) -> list[str]:
        """Catalog titles the text names, capitalised as a title (a sentence's first word alone is no title)."""
        words = _WORD.findall(text)
        found = []
        index = 0
        while index < len(words):
            match = None
            for n in range(min(self.longest, len(words) - index), 0, -1):
                span = words[index:index + n]
                name = " ".join(w.lower() for w in span)
                if name in self.titles and span[0][:1].isupper() and not (n == 1 and index == 0):
                    match = (name, n)
                    break
            if match:
                found.append(match[0])
                index += match[1]
            else:
                index += 1
        return found


@lru_cache(maxsize=4)
def vocabulary(catalog: CatalogView) -> Vocabulary:
    return Vocabulary(catalog)


def preference_sentences(text: str) -> list[str]:
    return [s for s in _SENTENCE.split(text) if _PREFERENCE_CUE.search(s)]


def named_facts(text: str, catalog: CatalogView) -> ProfileFacts:
    """Everything `text` names (for facts a real person's message brings into a profile)."""
    vocab = vocabulary(catalog)
    return ProfileFacts(genres=frozenset(vocab.genres_in(text)), titles=frozenset(vocab.titles_in(text)),
                        years=frozenset(int(y) for y in _YEAR.findall(text)),
                        decades=frozenset(_decades(text)))


def _decades(text: str) -> list[int]:
    out = []
    for century, digit in _DECADE.findall(text):
        century = int(century) * 100 if century else (2000 if digit in "012" else 1900)
        out.append(century + int(digit) * 10)
    return out


def ungrounded(text: str, facts: ProfileFacts, catalog: CatalogView, dialogue: Optional[Dialogue] = None) -> list[str]:
    """What the preference statements of `text` name that is not in the profile (empty: grounded)."""
    vocab = vocabulary(catalog)
    shown = {_title_name(i.title) for u in (dialogue.agent_turns() if dialogue else []) for i in u.items}
    out: list[str] = []
    for sentence in preference_sentences(text):
        titles = vocab.titles_in(sentence)
        lowered = " ".join(w.lower() for w in _WORD.findall(sentence))
        if any(name and name in lowered for name in shown):
            continue  # a reaction to a suggestion
        out += [f"genre {g}" for g in vocab.genres_in(sentence) if not facts.has_genre(g)]
        out += [f"title {t}" for t in titles if t not in facts.titles]
        out += [f"year {y}" for y in map(int, _YEAR.findall(sentence))
                if y not in facts.years and y // 10 * 10 not in facts.decades]
        out += [f"decade {d}s" for d in _decades(_YEAR.sub(" ", sentence)) if d not in facts.decades]
    return out
