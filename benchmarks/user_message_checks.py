"""The per-reply checks of `benchmarks/user_messages.py`, read from the catalog wherever possible.

Each check reads one system reply (its text and the catalog entries of the items it shows)
against what the user's turn asks for (the conversation file's `expect`, `aspect`, `about`) and
the constraints stated so far (the file's `set` / `clear`, written by hand, not parsed):

- answers: "yes", "partly" or "no" (see `answers`);
- fits: every item of a list fits every constraint stated so far;
- fresh: no item of a list was shown before or turned down (nor a sequel of a turned-down one);
- facts: the reply states no year, person or title that the catalog entries it shows do not bear out;
- natural: no parroted request, raw tag, doubled year, broken numbering or repeated sentence.

The genre, kind and audience readings here are the benchmark's own, so it does not trust the
systems' readings of the same catalog.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Optional, Sequence

from arena.catalogs.catalog import CatalogItem
from arena.titles.phrases import normalize
from offline_conversations import same_series  # the same sequel rule as the earlier benchmark

GENRE_NAMES = {  # a constraint's genre word -> the words a catalog genre name holds for it
    "sci-fi": ("sci fi", "science fiction"), "science fiction": ("sci fi", "science fiction"),
    "history": ("history", "historical"), "historical": ("history", "historical"),
    "romance": ("romance", "romantic"), "horror": ("horror", "slasher"), "animation": ("animation", "animated"),
    "thriller": ("thriller", "suspense"), "young adult": ("young adult",), "period": ("period",),
}
CHILD_FRIENDLY = ("family", "animation", "children")
CHILD_UNSAFE = ("horror", "crime", "thriller")
SERIES_GENRES = {"television", "tv series", "sitcom", "television series", "soap opera"}
BOOK_GENRES = {"novel", "literature", "children's literature", "young-adult fiction", "romance novel",
               "literary criticism", "english literature", "historical novel", "non-fiction"}
GOODBYE = re.compile(r"\b(bye|goodbye|enjoy|welcome|happy (watching|reading)|have (a|fun)|glad)\b", re.I)
SOCIAL = re.compile(r"(\b(hi|hello|hey|good|great|fine|well|thanks|help|welcome)\b|\?)", re.I)
LACKS = re.compile(r"\b(catalog(ue)?|don'?t (know|have)|do not (know|have)|no (information|rating|score)|"
                   r"not sure|can'?t say|cannot say)\b", re.I)
RATING_WORDS = re.compile(r"\b(rat(ed|ing|ings)|score|reviews?|stars? out of)\b", re.I)
CHILD_WORDS = re.compile(r"\b(child|children|kids?|young|family|ages?|years? old)\b", re.I)
RAW_TAG = re.compile(r"#\d+|\((film|media|tv|music|book)? ?(genre|subject)\)|\bfilm genre\b|_|\bdbpedia\b|\[\[|\]\]|"
                     r"\((\w+[ -])*(film|movie|work|novel|book)\)", re.I)
DOUBLE_YEAR = re.compile(r"\((1[89]\d\d|20\d\d)\)\s*\((1[89]\d\d|20\d\d)\)")
NUMBERED = re.compile(r"^\s*(\d+)[.)]\s", re.M)
TITLE_YEAR = re.compile(r"\((1[89]\d\d|20\d\d)\)")
LEFT_OUT = re.compile(r"\b(leave (those|that|them|it) out|without ([a-z\- ]+))", re.I)
_CAPITALISED_RUN = re.compile(r"(?:[A-Z][\w'.\-]*)(?:\s+(?:[A-Z][\w'.\-]*|of|the|and|de|van|von|der|la|le)){1,4}")


def words(item: CatalogItem) -> str:
    return " ".join([normalize(item.title), item.plot.lower(), " ".join(g.lower() for g in item.genres)])


def has_genre(item: CatalogItem, genre: str) -> bool:
    wanted = GENRE_NAMES.get(genre, (normalize(genre),))
    names = [f" {normalize(g)} " for g in item.genres]
    return any(f" {w} " in name for name in names for w in wanted)


def kind_of(item: CatalogItem) -> str:
    if item.dataset != "opendialkg":
        return "film"
    genres = {g.lower() for g in item.genres}
    people = item.people
    if genres & SERIES_GENRES and not people.get("director"):
        return "series"
    if not (people.get("actor") or people.get("star") or people.get("director")):
        return "book" if people.get("writer") or genres & BOOK_GENRES else "film"
    return "film"


def child_friendly(item: CatalogItem) -> bool:
    return any(has_genre(item, g) for g in CHILD_FRIENDLY) and not any(has_genre(item, g) for g in CHILD_UNSAFE)


def people_of(item: CatalogItem) -> set[str]:
    return {name.lower() for names in item.people.values() for name in names}


def fits(item: CatalogItem, constraints: dict) -> bool:
    """Whether the item fits every constraint (the conversation file's keys)."""
    c = constraints
    if c.get("genre") and not any(has_genre(item, g) for g in c["genre"]):
        return False
    if c.get("genres_all") and not all(has_genre(item, g) for g in c["genres_all"]):
        return False
    if any(has_genre(item, g) for g in c.get("not_genre", ())):
        return False
    if c.get("era") and (item.year is None or not c["era"][0] <= item.year <= c["era"][1]):
        return False
    people = people_of(item)
    if c.get("person") and not all(p.lower() in people for p in c["person"]):
        return False
    if any(p.lower() in people for p in c.get("not_person", ())):
        return False
    if c.get("kind") and kind_of(item) != c["kind"]:
        return False
    if c.get("child") and not child_friendly(item):
        return False
    text = words(item)
    if c.get("topic") and not any(w in text for w in c["topic"]):
        return False
    return not any(w in text for w in c.get("not_words", ()))


def fact_values(item: CatalogItem, aspect: str) -> list[str]:
    people = item.people
    return {
        "plot": [item.plot[:40]] if item.plot else [],
        "director": list(people.get("director", ())),
        "writer": list(people.get("writer", ())),
        "stars": list(people.get("star", ()) or people.get("actor", ())),
        "year": [str(item.year)] if item.year else [],
        "genres": [g for g in item.genres if not RAW_TAG.search(g)],
    }.get(aspect, [])


@dataclass
class Turn:
    """One user turn and the system's reply, with what the file says about the turn."""

    spec: dict
    message: str
    text: str
    items: list[CatalogItem]
    constraints: dict
    earlier: list[CatalogItem]  # items shown in earlier replies
    rejected: list[CatalogItem]  # items turned down so far (this turn's included)
    about: Optional[CatalogItem] = None  # the item a question is about
    named: list[CatalogItem] = field(default_factory=list)  # items the user named so far


def states_fact(turn: Turn) -> bool:
    item, aspect, low = turn.about, turn.spec.get("aspect"), turn.text.lower()
    if item is None:
        return False
    if aspect == "rating":
        return bool(RATING_WORDS.search(turn.text) or LACKS.search(turn.text))
    if aspect == "suitability":
        return any(g.lower() in low for g in item.genres) and bool(CHILD_WORDS.search(turn.text))
    values = fact_values(item, aspect)
    return any(v.lower() in low for v in values) if values else bool(LACKS.search(turn.text))


def new_items(turn: Turn) -> list[CatalogItem]:
    """Shown items other than the one the turn is about or the user named."""
    keep = {i.item_id for i in ([turn.about] if turn.about else []) + turn.named}
    return [i for i in turn.items if i.item_id not in keep]


def contradicts_request(turn: Turn) -> bool:
    """"Here are some picks without comedy" for a comedy; "I'll leave those out" when nothing was
    turned down."""
    for match in LEFT_OUT.finditer(turn.text):
        if match.group(1).lower().startswith("leave") and not (turn.spec.get("reject") or _negates(turn.spec)):
            return True
        if match.group(3):
            said = normalize(match.group(3))
            if any(normalize(g) in said for g in [*turn.constraints.get("genre", ()),
                                                  *turn.constraints.get("genres_all", ())]):
                return True
            if any(normalize(p) in said for p in turn.constraints.get("person", ())):
                return True
    return False


def _negates(spec: dict) -> bool:
    return any(k.startswith("not_") for k in spec.get("set", {}))


def answers(turn: Turn) -> str:
    """yes / partly / no: does the reply do what the user's turn asked?"""
    expect = turn.spec["expect"]
    if expect == "list":
        if not turn.items:
            return "no"
        good = fits(turn.items[0], turn.constraints) and not contradicts_request(turn)
        return "yes" if good else "partly"
    if expect == "answer":
        fact, listed = states_fact(turn), bool(new_items(turn))
        return "yes" if fact and not listed else "partly" if fact or (turn.about and not listed) else "no"
    if expect == "close":
        listed, bye = bool(new_items(turn)), bool(GOODBYE.search(turn.text)) or len(turn.text.split()) <= 25
        return "yes" if bye and not listed else "partly" if not listed or bye else "no"
    if expect == "chat":
        message_words = set(normalize(turn.message).split())
        by_title_word = any(set(normalize(i.title).split()) & message_words for i in turn.items)
        social = bool(SOCIAL.search(turn.text))
        return "yes" if social and not turn.items else "partly" if social and not by_title_word else "no"
    raise ValueError(f"unknown expectation {expect!r}")


def fresh(turn: Turn) -> bool:
    earlier = {i.item_id for i in turn.earlier}
    return not any(i.item_id in earlier or any(same_series(r, i) for r in turn.rejected) for i in turn.items)


@lru_cache(maxsize=2)
def catalog_names(dataset: str, catalog_path: str) -> tuple[frozenset[str], frozenset[str]]:
    """(person names, titles of two or more words) of a catalog, lower-cased."""
    info = json.loads(Path(catalog_path).read_text(encoding="utf-8"))
    persons, titles = set(), set()
    for entry in info.values():
        for role in ("director", "writer", "star", "actor"):
            persons.update(n.lower() for n in entry.get(role) or () if len(n.split()) >= 2)
        title = re.sub(r"\s*\((\d{4}|[^()]*)\)\s*$", "", entry["name"]).strip()
        if len(title.split()) >= 2:
            titles.add(title.lower())
    return frozenset(persons), frozenset(titles)


def false_facts(turn: Turn, persons: frozenset[str], titles: frozenset[str]) -> list[str]:
    """What the reply states that its items' catalog entries do not bear out: a wrong year after a
    shown title, a person in none of the shown (or asked-about, or named) entries, a title not shown."""
    problems = []
    shown = list(turn.items) + ([turn.about] if turn.about else []) + turn.named
    for item in shown:
        # Not the end of a longer title: "The Good Dinosaur (2015)" beside "Dinosaur (2000)".
        for match in re.finditer(r"(?<!\w )(?<!\w)" + re.escape(item.title) + r"\s*\((\d{4})\)", turn.text):
            namesakes = {i.year for i in shown if i.title == item.title}  # "Halloween (1978)" beside (2007)
            if item.year and int(match.group(1)) not in namesakes:
                problems.append(f"year {match.group(1)} for {item.title}")
    known_people = set().union(*(people_of(i) for i in shown)) if shown else set()
    known_titles = {normalize(i.title) for i in shown}
    message = turn.message.lower()
    for match in _CAPITALISED_RUN.finditer(turn.text):
        phrase = match.group(0).strip(" .'")
        low = phrase.lower()
        said = low in message or low.split()[-1] in re.findall(r"[a-z'.-]+", message)  # "done with Stallone"
        said = said or low in {p.lower() for key in ("person", "not_person") for p in turn.constraints.get(key, ())}
        if low in persons and low not in known_people and not said:
            problems.append(f"person {phrase}")
        elif low in titles and normalize(phrase) not in known_titles and low not in message and not any(
                normalize(phrase) in normalize(i.title) or normalize(i.title) in normalize(phrase) for i in shown):
            problems.append(f"title {phrase}")
    return problems


def unnatural(turn: Turn) -> list[str]:
    """What reads badly: a parroted request, raw tags, doubled years, broken numbering, a repeated
    sentence, an empty reply."""
    text = turn.text.strip()
    problems = []
    if not text:
        return ["empty reply"]
    message = turn.message
    for item in [*turn.items, *([turn.about] if turn.about else []), *turn.named]:
        message = message.replace(item.label, " ").replace(item.title, " ")  # a title is no parroting
    message = normalize(message).split()
    reply = normalize(text)
    if len(message) >= 2 and reply.startswith(" ".join(message[:max(2, min(len(message), 4))])):
        problems.append("parrots the request")
    elif len(message) >= 5 and any(" ".join(message[i:i + 5]) in reply for i in range(len(message) - 4)):
        problems.append("parrots the request")
    else:
        first = normalize(re.split(r"(?<=[.!?])\s|\n", text, maxsplit=1)[0]).split()
        if len(first) >= 2 and f" {' '.join(first)} " in f" {' '.join(message)} ":
            problems.append("parrots the request")  # "A historical drama film. Here are ..."
    if RAW_TAG.search(text):
        problems.append("raw tag")
    if DOUBLE_YEAR.search(text):
        problems.append("doubled year")
    numbers = [int(n) for n in NUMBERED.findall(text)]
    if numbers and numbers != list(range(1, len(numbers) + 1)):
        problems.append(f"numbering {numbers}")
    sentences = [s.strip().lower() for s in re.split(r"(?<=[.!?])\s+", text) if len(s.split()) >= 4]
    if len(sentences) != len(set(sentences)):
        problems.append("repeated sentence")
    return problems


def refer(name: str, previous: Sequence[CatalogItem], find_title) -> Optional[CatalogItem]:
    """The item `about` / `reject` names: first, second, third (of the previous reply, the last one
    shown when the reply had fewer), or title:<Title>."""
    if name.startswith("title:"):
        return find_title(name[len("title:"):])
    index = {"first": 0, "second": 1, "third": 2}[name]
    if not previous:
        return None
    return previous[min(index, len(previous) - 1)]


def apply_gold(spec: dict, constraints: dict, previous: list, rejected: list, named: list, find_title):
    """One user turn's gold applied to the constraints so far (`clear`, then `set`; a `not_` key adds to
    what was ruled out), the items turned down and the items named; returns the item the turn asks about
    (None when it asks about none). `previous` is the last list shown."""
    for key in spec.get("clear", ()):
        constraints.pop(key, None)
    for key, value in spec.get("set", {}).items():
        constraints[key] = sorted(set(constraints.get(key, [])) | set(value)) if key.startswith("not_") \
            else value
    reject = spec.get("reject")
    if reject == "all":
        rejected += previous
    elif reject:
        item = refer(reject, previous, find_title)
        if item is not None:
            rejected.append(item)
            if reject.startswith("title:"):
                named.append(item)
    about = refer(spec["about"], previous, find_title) if spec.get("about") else None
    if about is not None and spec["about"].startswith("title:"):
        named.append(about)
    return about
