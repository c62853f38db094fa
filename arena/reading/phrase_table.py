"""The written phrase table of the reader (`assets/reading/phrase_table_v1.json`, versioned).

Besides the catalog's own fields (genres, people, titles, years), these are the only words the
reader turns into constraints: eras and styles ("black and white" is a time, not a topic), moods
("feel-good", "nostalgic": how the film should feel, never a topic) and the curated list of plot
subjects a request may ask for ("time travel", "sharks"). A word the table does not list never
becomes a subject, so "a classic black and white movie" cannot give "picks about white".
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Optional

from arena.titles.phrases import normalize

PHRASE_TABLE = Path(__file__).resolve().parents[2] / "assets" / "reading" / "phrase_table_v1.json"


@lru_cache(maxsize=1)
def _table() -> dict:
    data = json.loads(PHRASE_TABLE.read_text(encoding="utf-8"))
    eras = [(re.compile(r"(?<![\w-])" + re.escape(p) + r"(?![\w-])", re.I), tuple(span))
            for p, span in sorted(data["eras"].items(), key=lambda kv: -len(kv[0]))]
    moods = [(re.compile(r"(?<![\w-])" + re.escape(m) + r"(?![\w-])", re.I), m)
             for m in sorted(data["moods"], key=len, reverse=True)]
    avoids = {m: frozenset(entry.get("avoid", ())) for m, entry in data["moods"].items()}
    return {"version": data["version"], "eras": eras, "moods": moods, "avoids": avoids,
            "subjects": frozenset(normalize(s) for s in data["subjects"]),
            "makers": {normalize(name): (frozenset(entry["credits"]), frozenset(entry.get("genres", ())))
                       for name, entry in data.get("makers", {}).items()},
            # A subject of two words or more says itself wherever it stands ("a movie with time travel",
            # "based on a true story"); a one-word subject needs a cue word ("about", "a zombie movie").
            "phrases": [(_phrase_pattern(normalize(s)), normalize(s))
                        for s in sorted(data["subjects"], key=len, reverse=True) if " " in normalize(s)]}


def _phrase_pattern(phrase: str) -> re.Pattern:
    """"time travel" as written with a space or a hyphen ("time-travel")."""
    return re.compile(r"\b" + re.escape(phrase).replace(r"\ ", r"[\s-]+") + r"\b")


def table_version() -> int:
    return _table()["version"]


def era_of_style(text: str) -> Optional[tuple[int, int]]:
    """The years a style or era phrase stands for ("black and white" -> 1900-1965), if any."""
    for pattern, span in _table()["eras"]:
        if pattern.search(text):
            return span
    return None


def style_spans(text: str) -> list[tuple[int, int]]:
    """The spans of the style or era phrases the text holds ("black and white", "silent")."""
    return [match.span() for pattern, _ in _table()["eras"] for match in pattern.finditer(text)]


def moods_named(text: str) -> list[str]:
    """The moods of the table the text names, each once, in the table's words."""
    found: list[str] = []
    covered: list[tuple[int, int]] = []
    for pattern, mood in _table()["moods"]:
        for match in pattern.finditer(text):
            if not any(a <= match.start() < b for a, b in covered):
                covered.append(match.span())
                if mood not in found:
                    found.append(mood)
    return found


def genres_a_mood_rules_out(mood: str) -> frozenset[str]:
    """The genres a mood rules out ("darker": animation and family), none for most moods."""
    return _table()["avoids"].get(mood, frozenset())


def maker_names_listed() -> tuple[str, ...]:
    """The studios and franchises the table lists, longest first ("marvel comics" before "marvel")."""
    return tuple(sorted(_table()["makers"], key=len, reverse=True))


def maker_credits(name: str) -> Optional[tuple[frozenset[str], frozenset[str]]]:
    """For a studio or franchise the table lists: the people whose credit on a record marks its films
    (the comic creators a Marvel film credits as writers), and the genres one of which the film must have
    (none: any). None for a name the table does not list."""
    return _table()["makers"].get(normalize(name))


def _singulars(word: str) -> set[str]:
    forms = {word}
    if word.endswith("ies"):
        forms.add(word[:-3] + "y")
    if word.endswith("es"):
        forms.add(word[:-2])
    if word.endswith("s"):
        forms.add(word[:-1])
    return forms


def known_subject(subject: str) -> bool:
    """Whether a subject is on the curated list (in any plural form)."""
    words = normalize(subject)
    return any(form in _table()["subjects"] for form in _singulars(words) | {words})


def subject_phrases_named(text: str) -> list[tuple[str, int]]:
    """(subject, position in `text`) of every subject of two words or more the text names, the longest
    first where they overlap ("second world war" rather than "world war")."""
    low = text.lower()
    found: list[tuple[str, int]] = []
    covered: list[tuple[int, int]] = []
    for pattern, subject in _table()["phrases"]:
        for match in pattern.finditer(low):
            if not any(a <= match.start() < b for a, b in covered):
                covered.append(match.span())
                found.append((subject, match.start()))
    return found

