"""Replies that need no recommender: answers about an item from its catalog entry,
farewells, and the opening sentence of a list that says what the system did.

An answer uses only what the catalog holds (plot, director, writers, cast,
year, genres); when the entry lacks the fact the answer says so. The catalogs
have no age ratings, so whether a title suits a child is judged from its
genres, and the answer says that is what it rests on.
"""

from __future__ import annotations

import re
from typing import Optional, Sequence

from arena.catalog import CatalogItem, person_label
from arena.titles.phrases import FUNCTION_WORDS, normalize
from arena.reading.constraints import CHILD_FRIENDLY, CHILD_UNSAFE, Constraints, child_friendly, has_genre
from arena.reading.vocabulary import genre_label

FAREWELLS = (
    "You're welcome, enjoy watching! Come back any time you need another idea.",
    "Glad I could help. Enjoy, and goodbye!",
    "Happy watching! Bye for now.",
)
BOOK_FAREWELL = "You're welcome, happy reading! Goodbye."
FOLLOW_UP = "Would you like more like it, or something different?"
GREETINGS = (
    "Hi! I'm doing well, thanks for asking. What kind of {kind} are you in the mood for?",
    "Hello! All good here. What would you like to {verb} today? A genre, a title you loved or a favourite actor "
    "would help.",
)
TAKEN = (
    "Great choice, enjoy it! If you would like another idea later, just ask.",
    "Glad that appeals. Enjoy, and come back if you want more ideas.",
)


def _names(names: Sequence[str], limit: int = 3) -> str:
    names = list(dict.fromkeys(map(person_label, names)))[:limit]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _genres(item: CatalogItem, limit: int = 3) -> str:
    return _names([g.lower() if item.dataset == "redial" else genre_label(g) for g in item.genres], limit)


def answer(aspect: str, items: Sequence[CatalogItem]) -> tuple[str, list[CatalogItem]]:
    """The answer to a question about `items` (one item, or the shown list for a comparison),
    and the items it names."""
    if aspect == "compare_children":
        return _compare_for_children(items)
    item = items[0]
    label = item.label
    if aspect == "plot":
        listed = f"; it lists it as {_genres(item)}." if item.genres else "."
        text = f"{label}: {item.plot}" if item.plot else f"The catalog has no plot summary for {label}{listed}"
    elif aspect == "director":
        directors = item.people.get("director")
        text = (f"{label} was directed by {_names(directors, 2)}." if directors else
                f"The catalog does not say who directed {label}.")
    elif aspect == "writer":
        writers = item.people.get("writer")
        text = (f"{label} was written by {_names(writers, 2)}." if writers else
                f"The catalog does not name the writer of {label}.")
    elif aspect == "stars":
        cast = item.people.get("star") or item.people.get("actor")
        text = f"{label} stars {_names(cast, 3)}." if cast else f"The catalog does not list the cast of {label}."
    elif aspect == "year":
        text = f"{label} is from {item.year}." if item.year else f"The catalog does not give a year for {label}."
    elif aspect == "rating":
        listed = f"; it lists it as {_genres(item)}" if item.genres else ""
        text = f"The catalog holds no ratings or reviews, so I cannot say how well {label} is rated{listed}."
    elif aspect == "genres":
        text = (f"The catalog lists {label} as {_genres(item)}." if item.genres else
                f"The catalog gives no genre for {label}.")
    else:  # suitability
        text = _suitability(item)
    return f"{text} {FOLLOW_UP}", [item]


def _suitability(item: CatalogItem) -> str:
    label = item.label
    unsafe = [g for g in CHILD_UNSAFE if has_genre(item, g)]
    if unsafe:
        return (f"I would not pick {label} for a young child: the catalog lists it as {_names(unsafe)}. "
                f"It has no age ratings, so that is going by genre.")
    if any(has_genre(item, g) for g in CHILD_FRIENDLY):
        return (f"{label} should suit a child: the catalog lists it as {_genres(item)}. "
                f"It has no age ratings, so check the details if in doubt.")
    if not item.genres:
        return f"The catalog has no age rating or genre for {label}, so I cannot tell."
    return (f"The catalog has no age rating for {label}; it is listed as {_genres(item)}, with no horror, "
            f"crime or thriller among them, but not as a family film either.")


def _compare_for_children(items: Sequence[CatalogItem]) -> tuple[str, list[CatalogItem]]:
    if not items:
        return "Which titles should I compare? Tell me a few and I'll check them for children.", []
    ranked = sorted(items, key=lambda i: (not child_friendly(i), any(has_genre(i, g) for g in CHILD_UNSAFE)))
    best = ranked[0]
    if child_friendly(best):
        return (f"Of those, {best.label} suits children best: the catalog lists it as {_genres(best)}. "
                f"{FOLLOW_UP}"), [best]
    if not any(has_genre(best, g) for g in CHILD_UNSAFE):
        return (f"None of them is listed as a family film; {best.label} ({_genres(best)}) has the least "
                f"in it to worry about. Shall I look for family films instead?"), [best]
    return "None of those suits children, going by their genres. Shall I look for family films instead?", []


def greeting(turn: int, kind: str = "movie") -> str:
    """The answer to small talk: a greeting and a question about what the person would like."""
    verb = "read" if kind == "book" else "watch"
    return GREETINGS[turn % len(GREETINGS)].format(kind=kind, verb=verb)


def taken(turn: int, items: Sequence[CatalogItem] = ()) -> str:
    """The answer to "sounds good, I'll watch it": a short follow-up, no new list."""
    if items:
        return f"{items[0].title} it is, then. Enjoy! If you would like another idea later, just ask."
    return TAKEN[turn % len(TAKEN)]


def farewell(turn: int, books: bool = False) -> str:
    return BOOK_FAREWELL if books else FAREWELLS[turn % len(FAREWELLS)]


def correction_note(items: Sequence[CatalogItem]) -> str:
    """What to say when the user corrects a fact: what the catalog lists, nothing more."""
    if not items:
        return "Thanks for the correction."
    item = items[0]
    if not item.year:
        return "Thanks for the correction."
    return f"Thanks for the correction; my catalog lists it as {item.label}."


def heading(constraints: Constraints) -> str:
    """"comedy picks from the 1990s", "picks with Tom Hanks": the list's rules in a few words (two
    genres and two other rules at most; what is left out is said only when nothing else is)."""
    genres = sorted(constraints.genres)
    joiner = " or " if constraints.any_genre else " and "
    noun = (joiner.join(genres[:2]) + " picks") if genres and len(genres) <= 2 else "picks"
    parts = []
    if constraints.subjects:
        parts.append("about " + " or ".join(sorted(constraints.subjects)[:2]))
    if constraints.people:
        parts.append("with " + " and ".join(sorted(map(person_label, constraints.people))[:2]))
    if constraints.for_children:
        parts.append("for children")
    era = _era_words(constraints.years)
    if era:
        parts.append(era)
    if not parts and not genres:
        left_out = sorted(constraints.unwanted_genres)[:2]
        if left_out:
            parts.append("without " + " or ".join(left_out))
    return " ".join([noun] + parts[:2])


def _era_words(years: Optional[tuple[int, int]]) -> str:
    if years is None:
        return ""
    low, high = years
    if high - low == 9 and low % 10 == 0:
        return f"from the {low}s"
    if high >= 2100:
        return f"from {low} on"
    if low <= 1800:
        return f"from before {high + 1}"
    return f"from {low} to {high}" if low != high else f"from {low}"


def list_opening(act: str, constraints: Constraints, turn: int, turned_down: bool = True) -> str:
    """The one sentence before a list: what was done with the user's message and the list's rules
    in a few words. "I'll leave those out" only when something was turned down."""
    ruled = constraints.any or bool(constraints.genres)
    what = heading(constraints) if ruled else "picks"
    if act == "reject":
        return (f"Understood, I'll leave those out. Some other {what}:" if turned_down
                else f"Let's try something different. Some {what}:")
    if act == "seen":
        return f"Then here are some {what} you may not have seen:"
    if act == "shrug":
        return f"No problem, I'll pick. Some {what}:" if ruled else "No problem, I'll pick:"
    if ruled:
        return f"Here are some {what}:"
    return ("Here are a few picks for you:", "These might suit you:", "You could try these:")[turn % 3]


# -- the model's connecting sentence must answer the message it follows ---------------------
_MISFIRE = re.compile(
    r"\b(sorry|loss|condolences?|passed away|can'?t help|cannot help|unable|as an ai|i don'?t know|"
    r"unfortunately|i'?m not sure|i can'?t|don'?t have|i'?m looking for|i (want|need|like|love) (a|an|to|some|the))\b",
    re.IGNORECASE)  # the last two: the model speaking as the user
_GENERIC = frozenset("movie movies film films like want watch something good great see some looking".split())


def _stems(text: str) -> set[str]:
    return {w[:5] for w in normalize(text).split() if len(w) >= 4 and w not in FUNCTION_WORDS and w not in _GENERIC}


def tied_to_message(sentence: str, message: str) -> Optional[str]:
    """Why the model's sentence does not fit the user's message (None: it does): it must share a
    content word with the message (when the message has one: a greeting has none to share), carry
    no apology, refusal or condolence, and not repeat the message back ("A musical, please.")."""
    if _MISFIRE.search(sentence):
        return "socially wrong here (apology, refusal or condolence)"
    said, asked = normalize(sentence).split(), normalize(message).split()
    content = [w for w in said if w not in FUNCTION_WORDS]
    if not content or set(content) <= set(asked) or any(
            " ".join(asked[i:i + 4]) in " ".join(said) for i in range(max(0, len(asked) - 3)) if len(asked) >= 4):
        return "repeats the user's message"
    wanted = _stems(message)
    if wanted and not _stems(sentence) & wanted:
        return "not tied to the user's message"
    return None
