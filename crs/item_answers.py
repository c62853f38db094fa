"""Replies that need no recommender: answers about an item from its catalog entry,
farewells, and the opening sentence of a list that says what the system did.

An answer uses only what the catalog holds (plot, director, writers, cast,
year, genres); when the entry lacks the fact the answer says so, and when the
catalog check withheld it (it belonged to another work of that title, see
`arena.catalogs.doubts`) the answer says it cannot vouch for it and gives what
the entry does hold. The catalogs have no age ratings, so whether a title suits
a child is judged from its genres, and the answer says that is what it rests on.
"""

from __future__ import annotations

import re
from typing import Optional, Sequence

from arena.catalogs.catalog import CatalogItem, person_label
from arena.titles.phrases import FUNCTION_WORDS, normalize
from arena.reading.constraints import (
    CHILD_FRIENDLY,
    CHILD_UNSAFE,
    Constraints,
    child_friendly,
    era_phrase,
    has_genre,
    subjects_phrase,
)
from arena.reading.acts import asks_about_system
from arena.reading.vocabulary import genre_label, intensity_of

FAREWELLS = (
    "You're welcome, enjoy watching! Come back any time you need another idea.",
    "Glad I could help. Enjoy, and goodbye!",
    "Happy watching! Bye for now.",
)
BOOK_FAREWELL = "You're welcome, happy reading! Goodbye."
FOLLOW_UP = "Would you like more like it, or something different?"
GREETINGS = (
    "Hi! What kind of {kind} are you in the mood for?",
    "Hello! What would you like to {verb} today? A genre, a title you loved or a favourite actor would help.",
)
# Said only to a message that asks after the system ("how are you?"): nobody else asked.
GREETINGS_ASKED = (
    "Hi! I'm doing well, thanks for asking. What kind of {kind} are you in the mood for?",
    "Hello! All good here. What would you like to {verb} today? A genre, a title you loved or a favourite "
    "actor would help.",
)
_ASKS_AFTER_ME = re.compile(
    r"\b(how (are|r) (you|u)|how('?s| is| are) (it going|things|your day|you doing|life)|how have you been|"
    r"what'?s up|how do you do|you doing (ok|well|good|alright)|and (you|yourself)|how about you)\b",
    re.IGNORECASE)
SYSTEM_INTRO = ("I'm a recommender for {kinds}: tell me a genre, a title you liked or a favourite actor and "
                "I'll suggest a few, and I can answer questions about the ones I show. What would you like?")
# How the offline systems pick, said plainly (what `crs.chatcrs` and `crs.crb_crs` do): no person answers.
SYSTEM_HOW = ("I'm an automatic recommender, not a person. I pick from the {kinds} in my catalog: I keep "
              "only the titles that fit what you've asked so far (genres, people, years and anything you "
              "ruled out), then rank them by how closely their catalog entries match your words and the "
              "titles you mentioned. Tell me more and the picks change. What would you like next?")
TAKEN = (
    "Great choice, enjoy it! If you would like another idea later, just ask.",
    "Glad that appeals. Enjoy, and come back if you want more ideas.",
)


def _names(names: Sequence[str], limit: int = 3) -> str:
    names = list(dict.fromkeys(map(person_label, names)))[:limit]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _genre_word(item: CatalogItem, genre: str) -> str:
    return genre.lower() if item.dataset == "redial" else genre_label(genre)


def _genres(item: CatalogItem, limit: int = 3) -> str:
    return _names([g.lower() if item.dataset == "redial" else genre_label(g) for g in item.genres], limit)


_FIELDS = {"plot": ("plot",), "director": ("director",), "writer": ("writer",), "stars": ("star", "actor"),
           "genres": ("genre",), "suitability": ("genre",), "rating": ("genre",)}
_FIELD_WORDS = {"plot": "plot", "director": "director", "writer": "writer credit", "stars": "cast",
                "genres": "genres", "suitability": "genres", "rating": "genres"}


def withheld_note(aspect: str, item: CatalogItem) -> Optional[str]:
    """What to say when the asked field was withheld by the catalog check: that it cannot be vouched for,
    why, and what the entry does hold (None: the field was not withheld, or the entry holds it still)."""
    reason = next((item.withheld[f] for f in _FIELDS.get(aspect, ()) if f in item.withheld), None)
    present = {"plot": item.plot, "director": item.people.get("director"), "writer": item.people.get("writer"),
               "stars": item.people.get("star") or item.people.get("actor"), "genres": item.genres,
               "suitability": item.genres, "rating": item.genres}.get(aspect)
    if reason is None or present:
        return None
    known = [f"it is from {item.year}" if item.year else ""]
    if aspect != "director" and item.people.get("director"):
        known.append(f"it was directed by {_names(item.people['director'], 2)}")
    if aspect not in ("genres", "suitability", "rating") and item.genres:
        known.append(f"it is listed as {_genres(item)}")
    known = [k for k in known if k]
    said = f" What it does hold: {' and '.join(known)}." if known else ""
    return (f"I can't vouch for the {_FIELD_WORDS[aspect]} of {item.label}: the catalog's entry for it "
            f"{reason}, so I leave it out.{said}")


# Per-item answers that may be given of several items at once ("what are the ratings of these?").
_EACH = frozenset({"director", "writer", "stars", "year", "runtime", "rating", "unrecorded", "genres", "true_story",
                   "suitability"})
_UNRECORDED = (  # (what the question asks about, in the words of the reply)
    (re.compile(r"\b(awards?|oscars?|nominat\w*|won)\b", re.I), "awards"),
    (re.compile(r"\b(box office|budget|gross(ed)?|money|earn(ed)?)\b", re.I), "box office or budget"),
    (re.compile(r"\b(languages?|subtitle[sd]?|dubbed)\b", re.I), "language"),
    (re.compile(r"\b(filmed|shot|set|made|country|countries)\b", re.I), "where it was made"),
    (re.compile(r"\b(soundtrack|music)\b", re.I), "music"),
    (re.compile(r"\b(netflix|hulu|stream\w*|watch|rent|buy)\b", re.I), "where it can be watched"),
)


def answer(aspect: str, items: Sequence[CatalogItem], text: str = "",
           constraints: Optional[Constraints] = None) -> tuple[str, list[CatalogItem]]:
    """The answer to a question (`text`) about `items` (the items it refers to, or the shown list for
    a comparison), and the items it names; said plainly from the field the question asks about.
    `constraints`: what the list being asked about was made under (for "why did you pick them?")."""
    if aspect == "why":
        return _why(items, constraints or Constraints()), list(items[:3])
    if aspect in _EACH and len(items) > 1:  # one short answer per item, one follow-up
        if aspect in ("runtime", "rating", "unrecorded"):
            return _lacks_of_several(aspect, items[:3], text), list(items[:3])
        said = [answer(aspect, [i], text)[0].removesuffix(f" {FOLLOW_UP}") for i in items[:3]]
        return " ".join(said) + f" {FOLLOW_UP}", list(items[:3])
    if aspect == "compare" and len(items) == 2:
        return _likeness(items[0], items[1]), list(items)
    if aspect == "compare_children":
        return _compare_for_children(items)
    if aspect == "compare_year":  # "which of those is newer?": the years, side by side
        dated = sorted((i for i in items if i.year), key=lambda i: i.year)
        if len(dated) < 2:
            return "I don't have the years of those to compare. " + FOLLOW_UP, []
        newest, oldest = dated[-1], dated[0]
        return (f"{newest.label} is the newest of them; {oldest.label} the oldest. {FOLLOW_UP}",
                [newest, oldest])
    if aspect == "pick":  # "which would you pick?": one of what was shown, and why, no new titles
        best = items[0]
        why = f" {best.plot}" if best.plot else f" {_known(best)[0].upper()}{_known(best)[1:]}"
        # "which has the best reviews?": the catalogs record none, so say so before choosing
        no_reviews = re.search(r"\b(reviews?|ratings?|rated|scores?)\b", text, re.IGNORECASE)
        opening = "I have no reviews or ratings to go by, but I'd go with" if no_reviews else "I'd go with"
        return f"{opening} {best.label}.{why} {FOLLOW_UP}", [best]
    if aspect == "about":  # "How was it?", "does anyone die in those?": what the catalog holds of them
        shown = list(items[:3])
        said = " ".join(_plot(i) if i.plot else f"{i.label}: {_known(i)[0].upper()}{_known(i)[1:]}"
                        for i in shown)
        if len(shown) == 1 and shown[0].plot:  # one item: its record's facts too ("who's in it?" asks them)
            said += f" {_known(shown[0])[0].upper()}{_known(shown[0])[1:]}"
        return f"Here is what I know: {said} {FOLLOW_UP}", shown
    if aspect == "plot" and len(items) > 1:  # "tell me about the first two"
        return " ".join(_plot(i) for i in items[:3]) + f" {FOLLOW_UP}", list(items[:3])
    item = items[0]
    label = item.label
    note = withheld_note(aspect, item)
    if note is not None:
        return f"{note} {FOLLOW_UP}", [item]
    if aspect == "plot":
        text_out = _plot(item)
    elif aspect == "director":
        directors = item.people.get("director")
        text_out = (f"{label} was directed by {_names(directors, 2)}." if directors else
                    f"I don't know who directed {label}; {_known(item)}")
    elif aspect == "writer":
        writers = item.people.get("writer")
        text_out = (f"{label} was written by {_names(writers, 2)}." if writers else
                    f"I don't know who wrote {label}; {_known(item)}")
    elif aspect == "stars":
        cast = item.people.get("star") or item.people.get("actor")
        text_out = (f"{label} stars {_names(cast, 3)}." if cast else
                    f"I don't have the cast of {label}; {_known(item)}")
    elif aspect == "year":
        text_out = (f"{item.title} came out in {item.year}." if item.year else
                    f"I don't know what year {item.title} came out; {_known(item)}")
    elif aspect == "runtime":  # neither catalog records running times
        text_out = f"I don't know the runtime of {label}; here is what I know: {_known(item)}"
    elif aspect == "rating":
        text_out = f"I have no ratings or reviews to go by, so I can't say how well {label} is rated; {_known(item)}"
    elif aspect == "unrecorded" and _unrecorded_field(text) == "language" and item.languages:
        text_out = f"{label} is in {_names(item.languages, 3)}, by the catalog's record."
    elif aspect == "unrecorded":
        text_out = f"My catalog doesn't record {_unrecorded_field(text)} for {label}. What it does say: {_known(item)}"
    elif aspect == "true_story":
        text_out = _true_story(item)
    elif aspect == "genres":
        text_out = _genre_question(item, text)
    else:  # suitability
        text_out = _suitability(item, text)
    return f"{text_out} {FOLLOW_UP}", [item]


def _likeness(item: CatalogItem, other: CatalogItem) -> str:
    """"Is it like Trolls?": what the two records share (genres, people) and what sets them apart."""
    shared = [g for g in item.genres if g in other.genres]
    people = [p for role in ("director", "star") for p in item.people.get(role, ())
              if p in other.people.get("director", ()) + other.people.get("star", ())]
    if shared or people:
        alike = []
        if shared:
            alike.append(f"both {_names([_genre_word(item, g) for g in shared], 3)} {_kind_noun(item)}s")
        if people:
            alike.append(f"both with {_names(people, 2)}")
        apart = [_genre_word(item, g) for g in item.genres if g not in other.genres][:2]
        said = f"In some ways: {item.label} and {other.label} are {' and '.join(alike)}."
        if apart:
            said += f" {item.title} is also {_names(apart, 2)}, which {other.title} is not."
    else:
        said = (f"Not much: {item.label} is {_a(_genres(item))} {_kind_noun(item)} and {other.label} "
                f"{_a(_genres(other))} {_kind_noun(other)}; they share no genre or lead.")
    return f"{said} {FOLLOW_UP}"


def _unrecorded_field(text: str) -> str:
    return next((said for pattern, said in _UNRECORDED if pattern.search(text or "")), "that")


def _lacks_of_several(aspect: str, items: Sequence[CatalogItem], text: str) -> str:
    """"Which of these is the shortest?", "their ratings?": the catalog records none of it; say so
    once, then what it does hold of each."""
    field_said = {"runtime": "running times", "rating": "ratings or reviews"}.get(aspect) or _unrecorded_field(text)
    known = "; ".join(f"{i.label} is {described(i)}" for i in items)
    return f"I don't know that: my catalog doesn't record {field_said}. What it does say: {known}. {FOLLOW_UP}"


def _why(items: Sequence[CatalogItem], constraints: Constraints) -> str:
    """"Why did you pick them?": what the list was made under (the state's constraints) and what each
    pick is, from its record, so the reason can be checked."""
    if not items:
        return "I haven't suggested anything yet. What kind of movie would you like?"
    ruled = constraints.any or bool(constraints.genres)
    asked = heading(constraints).removeprefix("picks ").replace(" picks", "", 1)  # "comedy", "with Tom Hanks"
    reason = (f"I picked them to fit what you asked for ({asked})" if ruled else
              "You hadn't named a genre, a title or a person yet, so I picked well-liked titles of different kinds")
    each = "; ".join(f"{i.label} is {described(i)}" for i in items[:3])
    return f"{reason}: {each}. Tell me what you like and I'll narrow it down."


def described(item: CatalogItem) -> str:
    """"a crime and drama film directed by X, starring A and B": the record in a phrase, without the
    year (the label beside it carries that)."""
    genres = _genres(item, 2) if item.genres else ""
    # OpenDialKG's genres often carry the noun already ("Indie film", "East Asian cinema")
    noun = "" if re.search(r"\b(film|cinema|movie|series)s?$", genres, re.I) else f" {_kind_noun(item)}"
    parts = [f"{_a(genres)}{noun}" if genres else f"a {_kind_noun(item)}"]
    if directors := item.people.get("director"):
        parts.append(f"directed by {_names(directors, 1)}")
    if cast := item.people.get("star") or item.people.get("actor"):
        parts.append(f"starring {_names(cast, 2)}")
    return parts[0] + (" " + ", ".join(parts[1:]) if parts[1:] else "")


def _kind_noun(item: CatalogItem) -> str:
    return {"book": "book", "series": "series"}.get(getattr(item, "kind", "film") or "film", "film")


def _known(item: CatalogItem) -> str:
    """What is known of an item in one clause: "it is a drama from 1994, directed by X"."""
    parts = [f"it is {_a(_genres(item, 2))} {_kind_noun(item)}" if item.genres else f"it is a {_kind_noun(item)}"]
    if item.year:
        parts.append(f"from {item.year}")
    directors = item.people.get("director")
    if directors:
        parts.append(f"directed by {_names(directors, 1)}")
    cast = item.people.get("star") or item.people.get("actor")
    if cast:
        parts.append(f"starring {_names(cast, 2)}")
    return " ".join(parts[:2]) + (", " + ", ".join(parts[2:]) if parts[2:] else "") + "."


def _a(words: str) -> str:
    vowel = words[:1].lower() in "aeiou" or re.match(r"(8|11|18)\b|(8|11|18)-", words)
    return ("an " if vowel else "a ") + words


def _plot(item: CatalogItem) -> str:
    if item.plot:
        return f"{item.label}: {item.plot}"
    return f"I don't have a plot summary for {item.label}, but {_known(item)}"


_TRUE_STORY_IN_PLOT = re.compile(r"\b(true story|based on (the )?(true|real)|real[- ]life|biograph\w*|"
                                 r"the life of|the story of|life story|memoir)\b", re.I)


def _true_story(item: CatalogItem) -> str:
    label = item.label
    if _TRUE_STORY_IN_PLOT.search(item.plot or "") or any(
            g.lower() in ("biography", "history") for g in item.genres):
        return f"Yes, as far as I can tell: {label} tells a real story. {item.plot}".strip()
    if item.plot:
        return f"Nothing I have says {label} is based on a true story. It is about this: {item.plot}"
    return f"I can't tell whether {label} is based on a true story; {_known(item)}"


# The qualities a yes/no question asks about, and the genres (and plot words) that bear them out.
_QUALITIES = {
    "scary": (("horror",), ("thriller", "mystery")),
    "creepy": (("horror",), ("thriller", "mystery")),
    "funny": (("comedy",), ()),
    "romantic": (("romance",), ()),
    "sad": (("drama",), ("war",)),
    "violent": (("war", "crime", "action", "horror"), ("thriller",)),
    "gory": (("horror",), ()),
    "dark": (("horror", "thriller", "crime", "war"), ()),
}
_ASKED_GENRE = re.compile(r"\b(an?)\s+(documentary|musical|western|cartoon|animated|anime|comedy|horror|thriller|"
                          r"romance|drama|war|sci-?fi|family|kids'?)\b", re.I)
_GENRE_OF_WORD = {"cartoon": "animation", "animated": "animation", "anime": "animation", "kids": "family",
                  "kids'": "family", "scifi": "sci fi", "sci-fi": "sci fi"}


def _genre_question(item: CatalogItem, text: str) -> str:
    """"is it scary?", "Is Planet Earth Live a documentary?": yes or no in plain words, from the
    genres and what the plot says; a bare "what genre is it?" gets the genres."""
    label, low = item.label, (text or "").lower()
    kinds = _genres(item) if item.genres else ""
    quality = next((q for q in _QUALITIES if re.search(rf"\b{q}\b", low)), None)
    if quality is not None:
        strong, some = _QUALITIES[quality]
        intense = intensity_of(item)
        if any(has_genre(item, g) for g in strong) or (quality in ("violent", "gory") and intense):
            return f"Yes, {label} is {quality}: it is {_a(kinds)} {_kind_noun(item)}."
        if any(has_genre(item, g) for g in some) or (quality in ("scary", "dark") and intense):
            return f"A little: {label} is {_a(kinds)} {_kind_noun(item)}, tense rather than {quality}."
        return f"Not really: {label} is {_a(kinds)} {_kind_noun(item)}." if kinds else (
            f"I can't tell how {quality} {label} is; {_known(item)}")
    if match := _ASKED_GENRE.search(low):
        word = match.group(2).lower()
        genre = _GENRE_OF_WORD.get(word, word)
        if not item.genres:
            return f"I can't tell; {_known(item)}"
        if has_genre(item, genre):
            noun = f" {_kind_noun(item)}" if word in ("war", "family", "kids", "kids'", "animated") else ""
            listed = f" (listed as {kinds})" if kinds.lower() != word else ""
            return f"Yes, {label} is {_a(word)}{noun}{listed}."
        return f"No, {label} is not listed as {_a(word)}; it is {_a(kinds)} {_kind_noun(item)}."
    return f"{label} is {_a(kinds)} {_kind_noun(item)}." if kinds else f"I don't know the genre of {label}."


_AGE_ASKED = re.compile(r"\b(\d{1,2})[ -]?(?:year|yr)s?[ -]?old", re.I)


def _suitability(item: CatalogItem, text: str = "") -> str:
    """Whether a title suits a child, from its genres and what its plot says (the catalogs hold no
    age ratings: asked for one, "Is it PG?", the answer says so first)."""
    said = _suitability_said(item, text)
    if _AGE_RATING.search(text or ""):
        return f"My catalog records no age ratings, so this goes by its genres and story. {said}"
    return said


_AGE_RATING = re.compile(r"\b(pg(-?13)?|rated (g|r)|nc-?17|r[- ]rated|age rating)\b", re.IGNORECASE)


def _suitability_said(item: CatalogItem, text: str) -> str:
    label = item.label
    age = _AGE_ASKED.search(text or "")
    who = _a(f"{age.group(1)}-year-old") if age else "a young child"
    unsafe = [g for g in CHILD_UNSAFE if has_genre(item, g)]
    intense = sorted(intensity_of(item))
    if unsafe:
        return f"I would not pick {label} for {who}: it is {_a(_names(unsafe))} {_kind_noun(item)}."
    if intense:
        return (f"Probably not for {who}: {label} is {_a(_genres(item))} {_kind_noun(item)}, and its story "
                f"has {' and '.join(intense)} in it.")
    if any(has_genre(item, g) for g in CHILD_FRIENDLY):
        return f"Yes, {label} should suit {who}: it is {_a(_genres(item))} {_kind_noun(item)}."
    if not item.genres:
        return f"I can't tell whether {label} suits {who}; {_known(item)}"
    return (f"Probably: {label} is {_a(_genres(item))} {_kind_noun(item)}, with nothing in its genres or story "
            f"that should upset {who}, though it is not made for children.")


def _compare_for_children(items: Sequence[CatalogItem]) -> tuple[str, list[CatalogItem]]:
    items = [i for i in items if i.genres or "genre" not in i.withheld]  # nothing to judge them by
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


# What a genre is, in a sentence each (our own words), for "what is a romance film?".
GENRE_MEANINGS = {
    "action": "one built around physical feats: fights, chases, stunts and explosions",
    "animation": "one made of drawn, modelled or computer-made images rather than filmed actors",
    "biography": "one that tells the life, or a part of the life, of a real person",
    "comedy": "one made first of all to make you laugh",
    "crime": "one that follows a crime, the people who commit it or the people who hunt them",
    "documentary": "one about real people and events, filmed or gathered rather than acted out",
    "drama": "one driven by its characters and their conflicts, told seriously",
    "fantasy": "one set in or touched by an invented world, with magic or creatures that cannot exist",
    "history": "one set in, or retelling, a real period or event of the past",
    "horror": "one made to frighten, often with monsters, ghosts or killers",
    "musical": "one in which the characters sing, and the songs carry the story",
    "mystery": "one built around a puzzle, usually a crime, that is solved by the end",
    "romance": "one whose story centres on two people falling in love",
    "sci fi": "one built on imagined science or technology: the future, space, robots or time travel",
    "science fiction": "one built on imagined science or technology: the future, space, robots or time travel",
    "sitcom": "a comedy series about the same characters in everyday situations",
    "sport": "one whose story turns on a sport, its players or a competition",
    "thriller": "one built to keep you tense, with danger and suspense",
    "war": "one set in a war, on the battlefield or among the people it reaches",
    "western": "one set in the American frontier of the 1800s: cowboys, outlaws and lawmen",
}


def genre_meaning(genre: str, kind: str = "film") -> str:
    """The answer to "what is a <genre> film?": what the genre means, and an offer, no list."""
    meaning = GENRE_MEANINGS.get(genre)
    shown = _GENRE_SHOWN.get(genre, genre)
    if meaning is None:
        return f"{_a(shown).capitalize()} {kind} is one my catalog files under {shown}. Shall I suggest some?"
    return f"{_a(shown).capitalize()} {kind} is {meaning}. Would you like me to suggest some?"


def greeting(turn: int, kind: str = "movie", message: str = "") -> str:
    """The answer to small talk: a greeting and a question about what the person would like; it says how
    the system is only when the message asked ("hi" did not)."""
    verb = "read" if kind == "book" else "watch"
    lines = GREETINGS_ASKED if _ASKS_AFTER_ME.search(message) else GREETINGS
    return lines[turn % len(lines)].format(kind=kind, verb=verb)


def system_intro(kind: str = "movie", message: str = "") -> str:
    """The answer to a question about the system itself ("what is this?"): what it does, and an invitation;
    "how do you pick these?" or "are you a bot?" also gets how it picks."""
    kinds = "books" if kind == "book" else "movies"
    if asks_about_system(message):
        return SYSTEM_HOW.format(kinds=kinds)
    return SYSTEM_INTRO.format(kinds=kinds)


def taken(turn: int, items: Sequence[CatalogItem] = (), message: str = "") -> str:
    """The answer to "sounds good, I'll watch it": a short follow-up, no new list. The title is said
    back only when the message named it (a reply names no title it does not show otherwise)."""
    if items and normalize(items[0].title) in normalize(message):
        # Not opening on the title: a reply that starts with the user's own first words reads as an echo
        return f"Good choice: enjoy {items[0].title}! If you would like another idea later, just ask."
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


_GENRE_SHOWN = {"sci fi": "sci-fi"}


def heading(constraints: Constraints) -> str:
    """"comedy picks from the 1990s", "picks with Tom Hanks": the list's rules in a few words (two
    genres and two other rules at most; what is left out is said only when nothing else is)."""
    genres = sorted(constraints.genres)
    joiner = " or " if constraints.any_genre else " and "
    shown_genres = [_GENRE_SHOWN.get(g, g) for g in genres]
    noun = (joiner.join(shown_genres[:2]) + " picks") if genres and len(genres) <= 2 else "picks"
    makers = sorted(constraints.makers)
    if "Anime" in makers:  # a kind told by its makers' credits: "anime picks", not "... from Anime"
        makers.remove("Anime")
        noun = "anime picks"
    parts = []
    if makers:
        parts.append("from " + " and ".join(makers[:2]))
    if constraints.subjects:
        parts.append(subjects_phrase(constraints.subjects, at_most=2))
    if constraints.people:
        parts.append("with " + " and ".join(sorted(map(person_label, constraints.people))[:2]))
    if constraints.for_children:
        parts.append("for children")
    era = era_phrase(constraints.years)
    if era:
        parts.append(era)
    if not parts and not genres:
        left_out = sorted(constraints.unwanted_genres)[:2]
        if left_out:
            parts.append("without " + " or ".join(left_out))
    return " ".join([noun] + parts[:2])


def list_opening(act: str, constraints: Constraints, turn: int, turned_down: int = 2) -> str:
    """The one sentence before a list: what was done with the user's message and the list's rules
    in a few words. "I'll leave those out" only when something was turned down (`turned_down`: how
    many titles; one is "that one")."""
    ruled = constraints.any or bool(constraints.genres)
    what = heading(constraints) if ruled else "picks"
    if act == "reject":
        if not turned_down:
            return f"Some other {what}:"  # "anything else?": more of the search, nothing turned down
        those = "that one" if turned_down == 1 else "those"
        return f"Understood, I'll leave {those} out. Some other {what}:"
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
