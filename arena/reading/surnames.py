"""People named by their surname alone: "I've had my fill of Stallone", "not into Tarantino",
"What Spielberg films do you have?".

A surname stands for one catalog person when that person carries it on clearly more entries than
anyone else who does (at least `MIN_CREDITS`, and `LEAD` times the next), and when the word is no
everyday word of the catalog's plots or of plain English ("King", "Cage", "Stone" are words, and
"Washington" a place in plots, so they need the full name; a word English also uses as a name,
"Nolan", counts only when written capitalised). Spellings of one person ("J. R. R. Tolkien",
"J.R.R. Tolkien") count together. A surname right after another person's first name is that other
person, named in full ("Harry Potter" is not Monica Potter, "Tom Hardy" not Oliver Hardy), and a first
name right before a surname is no surname itself ("Harry Potter" is not Debbie Harry). The index is
built once per catalog.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from typing import Iterable, Sequence

from rapidfuzz.distance import OSA

from arena.catalogs.catalog import CatalogItem, person_key, person_label, vocabulary
from arena.titles.phrases import FUNCTION_WORDS, fold, normalize

MIN_CREDITS = 3  # a surname stands for someone the catalog credits on a few entries at least
LEAD = 2  # ... and on twice as many as the next person of that surname
MAX_PLOT_USES = 2  # a surname that plots use as a word is read only with the first name
# A misspelt surname after the right first name ("Shia Labouef"): this many letters off, by the surname's
# length (a transposition counts once); shorter surnames must be spelt right.
_MISSPELT_BY_LENGTH = ((7, 2), (5, 1))
_SUFFIXES = frozenset({"jr", "sr", "ii", "iii", "iv"})
_WORD = re.compile(r"[A-Za-z][A-Za-z'’\-]+")
_ANY_WORD = re.compile(r"[A-Za-z][\w'-]+")


def surname_of(name: str) -> str:
    words = [fold(w) for w in person_label(name).split()]
    words = [w for w in words if w and w not in _SUFFIXES]
    return words[-1] if len(words) >= 2 else ""


class SurnameIndex:
    """Surname -> the one person it stands for in a catalog."""

    def __init__(self, items: Iterable[CatalogItem], plot_words: Counter):
        credits: dict[str, Counter] = defaultdict(Counter)  # surname -> person key -> entries
        self._first_names: set[str] = set()  # every first name the catalog's people carry
        spellings: dict[str, Counter] = defaultdict(Counter)  # person key -> how each spelling is used
        for item in items:
            for name in {n for names in item.people.values() for n in names}:
                if surname := surname_of(name):
                    self._first_names.add(fold(person_label(name).split()[0]))
                    key = person_key(person_label(name))
                    credits[surname][key] += 1
                    spellings[key][name] += 1
        everyday = vocabulary()
        self._everyday = everyday
        # first name -> surname -> the person's spelling, for a surname misspelt after its first name
        self._by_first: dict[str, dict[str, str]] = defaultdict(dict)
        for surname, people in credits.items():
            for key in people:
                name = spellings[key].most_common(1)[0][0]
                self._by_first[fold(person_label(name).split()[0])].setdefault(surname, name)
        self._surnames = set(credits)
        self._person: dict[str, str] = {}
        self._plain_word: set[str] = set()  # surnames that are also plain English ("nolan"): capitalised only
        for surname, people in credits.items():
            ranked = people.most_common(2)
            best, count = ranked[0]
            runner_up = ranked[1][1] if len(ranked) > 1 else 0
            if (count >= MIN_CREDITS and count >= LEAD * runner_up and len(surname) >= 4
                    and surname not in FUNCTION_WORDS and surname not in everyday.words
                    and plot_words.get(surname, 0) <= MAX_PLOT_USES):
                self._person[surname] = spellings[best].most_common(1)[0][0]
                if everyday.is_word(surname):
                    self._plain_word.add(surname)

    def mentions(self, text: str, taken: Sequence[tuple[int, int]] = ()) -> list[tuple[str, int, int]]:
        """(person, start, end) of every surname the text says alone, outside the `taken` spans
        (full names already linked)."""
        out = []
        words = list(_WORD.finditer(text or ""))
        for n, match in enumerate(words):
            if any(a <= match.start() < b for a, b in taken):
                continue
            word = fold(re.sub(r"['’]s$", "", match.group()))
            if word in self._plain_word and not match.group()[0].isupper():
                continue
            previous = words[n - 1] if n else None
            following = words[n + 1] if n + 1 < len(words) else None
            if (person := self._person.get(word)) and not self._someone_else(person, previous, match, text) \
                    and not self._first_name_of_another(word, match, following, text):
                out.append((person, match.start(), match.end()))
        return out

    def misspelt(self, text: str, taken: Sequence[tuple[int, int]] = ()) -> list[tuple[str, int, int]]:
        """(person, start, end) of a first name followed by a near spelling of the surname of exactly one
        person of that first name: "Shia Labouef" is Shia LaBeouf. A first name that is an everyday word
        ("will", "mark") counts only capitalised, and a surname must be long enough to tell apart."""
        out = []
        words = list(_WORD.finditer(text or ""))
        for first, second in zip(words, words[1:]):
            if text[first.end():second.start()].strip() or any(
                    a <= first.start() < b or a <= second.start() < b for a, b in taken):
                continue
            given, word = fold(first.group()), fold(re.sub(r"['’]s$", "", second.group()))
            surnames = self._by_first.get(given)
            if not surnames or word in surnames or word in self._surnames:
                continue
            if self._everyday.is_word(given) and not first.group()[0].isupper():
                continue
            limit = next((n for length, n in _MISSPELT_BY_LENGTH if len(word) >= length), 0)
            near = [name for surname, name in surnames.items()
                    if limit and OSA.distance(word, surname, score_cutoff=limit) <= limit]
            if len(near) == 1:
                out.append((near[0], first.start(), second.end()))
        return out

    def _first_name_of_another(self, word: str, match, following, text: str) -> bool:
        """Whether the word is a first name, with a surname right after it ("Harry Potter")."""
        return (following is not None and not text[match.end():following.start()].strip()
                and word in self._first_names and fold(following.group()) in self._surnames)

    def _someone_else(self, person: str, previous, match, text: str) -> bool:
        """Whether the word before the surname is a first name other than the person's own."""
        if previous is None or text[previous.end():match.start()].strip():
            return False
        first = fold(previous.group())
        return first in self._first_names and first != fold(person_label(person).split()[0])


def earlier_mentions(text: str, earlier: Iterable[str],
                     taken: Sequence[tuple[int, int]] = ()) -> list[tuple[str, int, int]]:
    """(person, start, end) of each word of `text` that is a word (four letters or more) of a person
    named earlier in the conversation, outside the `taken` spans: "another Arnold movie" after Arnold
    Schwarzenegger."""
    known = {w: name for name in earlier for w in normalize(name).split() if len(w) >= 4}
    return [(known[normalize(m.group())], m.start(), m.end()) for m in _ANY_WORD.finditer(text or "")
            if normalize(m.group()) in known and not any(a <= m.start() < b for a, b in taken)]
