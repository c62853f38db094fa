"""What the conversation rules in or out, carried across turns until the user changes it.

Read from every user message oldest first (titles are cut out first, so "Blade
Runner 2049" is no era), each word within its scope (`arena.reading.scope`):
- era: "from the 90s", "after 2000", "before 1980", "something newer" (newer
  than what was shown so far), "older";
- audience: "my 7-year-old", "the kids", "family movie night" (no horror, crime, war
  or thriller; family or animation titles only), until "just for me" or an age over 12;
- wanted genres: the genres the latest request names ("funny" is comedy, "a
  romantic comedy" is comedy and romance); a later request that names none keeps them;
- unwanted genres: "no horror", "horror AGAIN?", "a war movie, not my thing". A
  negation reaches only what it names: "funny, but not a romantic comedy" rules
  out romance, not comedy; a later plain request for the genre lifts it;
- people: "something with Arnold Schwarzenegger" asks for him until another person
  is asked for; "I don't like Adam Sandler" and "without Jim Carrey" rule the person out;
- intensity: "not too gory", "too violent", "something lighter/tamer": gore and
  violence are read from the items' titles and plots, and "lighter" also rules out
  the heavy genres (horror, thriller, crime, war) of what was just shown;
- kind (OpenDialKG): book, series or film; "a film rather than a book" asks for a film;
- subjects (`arena.reading.subjects`): "about time travel", "a zombie movie", "set in outer space"
  are required of the plot or genres and kept until another subject is named, or a new genre is
  asked for "instead" or "lighter"; a negated one ("not another Vietnam one") is ruled out;
- a ruled-out sub-genre ("tired of slashers") rules out its own words, not its genre; "a bit more
  romantic" adds a genre to those asked for; "the last ten years" counts back from CATALOG_PRESENT;
  "by a different author" rules out the person asked for so far.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Callable, Iterable, Optional, Sequence

from arena.catalogs.catalog import CatalogItem, person_key
from arena.reading.names_unknown import names_maker
from arena.reading.phrase_table import era_of_style, style_spans, subject_phrases_named
from arena.reading.scope import negated_before, phrase_end
from arena.reading.subjects import (
    bears_out, plural_said, stem, subject_forms, subject_phrase_spans, subjects_asked,
)
from arena.titles.phrases import FUNCTION_WORDS, normalize
from arena.reading.vocabulary import (
    ADDED_GENRE_AFTER,
    ADDED_GENRE_BEFORE,
    CHILD_FRIENDLY,
    CHILD_UNSAFE,
    COMPOUNDS,
    GENRE_WORD,
    GENRE_ADJECTIVES,
    GENRE_WORDS,
    HEAVY_GENRES,
    INTENSITY_WORD,
    INTENSITY_WORDS,
    KIND_ASIDE,
    KINDS,
    LIGHTER,
    LIVE_ACTION,
    ORIGIN_WORD,
    ORIGIN_WORDS,
    MOODS,
    SUB_GENRE_WORD,
    SUB_GENRES,
    child_friendly,
    from_origin,
    has_genre,
    intensity_of,
)

__all__ = [
    "CHILD_FRIENDLY",
    "CHILD_UNSAFE",
    "Constraints",
    "asks_latest",
    "audience",
    "child_friendly",
    "genre_mentions",
    "has_genre",
    "in_request_clause",
    "latest_years",
    "request_part",
    "update",
]

_AGE = re.compile(r"\b(\d{1,2})[ -]?(?:year|yr)s?[ -]?olds?\b|\b(\d{1,2}) and (\d{1,2})\b|"
                  r"\b(?:aged?|ages) (\d{1,2})\b|"
                  # "she is 14", "he's 9", "they are 6 and 8", "who turned 12": a person's age said plainly
                  r"\b(?:he|she|they|who)(?:'s| is| are| was| turn(?:s|ed)?| just turned) (\d{1,2})\b",
                  re.IGNORECASE)
_CHILDREN = re.compile(
    r"\b(kids?|childrens?|child|little ones|toddlers?|(my|our) (little )?(son|daughter|boy|girl)s?|"
    r"(my|our) little (brother|sister|nephew|niece|cousin)s?|grandkids|family (movie|film|night)|"
    # A young relative is a child when an age under 13 comes with them ("my nephew, aged 12"): see the ages
    r"(my|our|a) (young )?(nephew|niece|grandson|granddaughter|grandchild|cousin|brother|sister)s?|"
    r"family[- ]friendly|(the|whole) family|"
    r"\d{1,2}[ -]?(year|yr)s?[ -]?olds?)\b", re.IGNORECASE)
_RELATIVE = re.compile(r"\b(nephew|niece|grandson|granddaughter|grandchild|cousin|brother|sister)s?\b", re.I)
_YOUNG = re.compile(r"\b(young|little|kids?|children|child|toddlers?|grandkids|family|"
                    r"\d{1,2}[ -]?(year|yr)s?)\b", re.I)
# Children's titles as a kind: ruled out ("not a kids' film though"), they rule out family and animation.
_KIDS_KIND = re.compile(
    r"\b(kids?'?s?'? ?(films?|movies?|flicks?|stuff|shows?|ones?)|"
    r"(for|aimed at) (the )?(kids|children)|children'?s (films?|movies?)|family (films?|movies?))\b",
    re.IGNORECASE,
)
_ADULTS_ONLY = re.compile(
    r"\b(just (for )?me|only me|for adults|kids are (asleep|in bed|gone)|without the kids)\b", re.IGNORECASE
)
_DECADE = re.compile(
    r"\b(?:the )?(?:(19|20)?([0-9])0'?s|(twenties|thirties|forties|fifties|sixties|seventies|"
    r"eighties|nineties))\b",
    re.IGNORECASE,
)
_DECADE_WORDS = {"twenties": 2, "thirties": 3, "forties": 4, "fifties": 5, "sixties": 6, "seventies": 7,
                 "eighties": 8, "nineties": 9}
_AFTER = re.compile(r"\b(after|since|newer than|later than|post)\s+((?:19|20)\d\d)\b", re.IGNORECASE)
_BEFORE = re.compile(r"\b(before|older than|earlier than|pre)\s+((?:19|20)\d\d)\b", re.IGNORECASE)
_FROM_YEAR = re.compile(r"\b(from|in|of)\s+((?:19|20)\d\d)\b", re.IGNORECASE)
# "a new action movie", "new comedies": new is recent; "a new movie" alone may only mean another one.
_NEWER = re.compile(r"\b(newer|more recent|recent|modern|new ones?|new (\w+ )?(movies|films|releases)|"
                    r"new (action|comedy|horror|drama|thriller|romance|romantic|sci-?fi|animated|family|"
                    r"crime|war|western|fantasy|superhero|mystery|musical|documentary|adventure) "
                    r"(movie|film|one|flick)|"
                    r"new (comedies|dramas|thrillers|westerns|documentaries|musicals|romances)|"
                    # "what is in the theater now?", "something out now": this year's films
                    r"(in|at) (the )?(theat(er|re)|cinema|movie)s? (right )?now|"
                    r"(out|showing|playing) (right )?now|"
                    r"(released|came out|come out|out) (recently|lately|this year)|recently released|"
                    r"just (came|come) out|"
                    r"(in|at) (the )?(theat(er|re)s|cinemas) (at the moment|currently|these days)|"
                    r"currently (in|at) (the )?(theat(er|re)|cinema)s?)\b",
                    re.IGNORECASE)
_OLDER = re.compile(r"\b(older|old ones?|something old)\b", re.IGNORECASE)
# "These are quite old movies", "they're all so dated": the shown titles are too old, so newer ones are asked.
_SHOWN_TOO_OLD = re.compile(r"\b(these|those|they|all of them)\s*('re|\s(are|were|seem|look|feel|all))"
                            r"(\s+\w+){0,2}?\s+(old|dated|ancient)\b", re.IGNORECASE)
# "the latest", "newest", "most recent", "new releases": the catalog's own last years (`latest_years`),
# read before the plain "recent" and "newer" (which move on from what was shown).
LATEST = re.compile(r"\b(latest|newest|most recent|new releases?|brand[- ]new|recently released|"
                    r"(just|recently) (came out|come out|released)|(came|come|coming) out (lately|recently)|"
                    r"out lately|lately)\b", re.IGNORECASE)
LATEST_SHARE = 0.05  # the newest years holding this share of a catalog's dated entries are its "latest"
RECENT_FROM = 2010  # "newer", "recent" with nothing shown: the catalogs end in 2016-2019
NEWEST_YEAR_ASKED = 2012  # "newer" never asks for more than the catalogs' last years can give
# "The last ten years" counts back from when the catalogs' conversations were collected.
CATALOG_PRESENT = 2018
_LAST_YEARS = re.compile(
    r"\b(?:last|past) (?:(\d{1,2}|a|one|two|three|few|five|ten|fifteen|twenty|thirty|couple(?: of)?) )?"
    r"(years?|decades?)\b",
    re.IGNORECASE,
)
_NUMBER_WORDS = {
    "a": 1,
    "one": 1,
    "two": 2,
    "couple": 2,
    "couple of": 2,
    "three": 3,
    "few": 5,
    "five": 5,
    "ten": 10,
    "fifteen": 15,
    "twenty": 20,
    "thirty": 30,
}
_OR = re.compile(r"\b(or|either)\b", re.I)
_MAY_BE = re.compile(r"\b(can|could|may|might) (also )?be\b|\b(is|are|would be) (fine|ok|okay) too\b", re.I)
_ALSO_FINE = re.compile(r"\b(also|as well)\b.{0,20}\b(fine|ok|okay|good)\b|\b(fine|ok|okay) with\b|"
                        r"\bdon'?t mind\b", re.I)
_INSTEAD = re.compile(r"\b(instead|rather)\b", re.I)
_OTHER_PERSON = re.compile(
    r"\b(by|with|from|starring) (a |an |some )?(different|another|other|new) "
    r"(author|writer|director|actor|actress|person|people|lead|star|filmmaker|novelist)s?\b",
    re.I,
)


# A season's greeting ("merry christmas", "happy holidays") greets; it asks for no film about the season.
SEASON_GREETING = re.compile(r"\b(merry (christmas|xmas)|happy (holidays|new year|thanksgiving|easter|"
                             r"halloween|hanukkah|valentine'?s( day)?)|season'?s greetings)\b", re.IGNORECASE)


def subjects_phrase(subjects: Iterable[str], at_most: int = 3) -> str:
    """"about zombies or vampires", "from true stories" (a true story is no topic one is about)."""
    told = sorted(subjects)[:at_most]
    topics = [s for s in told if s != "true story"]
    parts = (["about " + " or ".join(plural_said(t) for t in topics)] if topics else []) + (
        ["from true stories"] if "true story" in told else [])
    return " and ".join(parts)


def subject_given_up(subject: str) -> str:
    """What a list gives up when no title has the subject: "the true story", "zombies as the subject"."""
    return "the true story" if subject == "true story" else f"{subject} as the subject"


@dataclass(frozen=True)
class Constraints:
    years: Optional[tuple[int, int]] = None
    for_children: bool = False
    unwanted_genres: frozenset[str] = field(default_factory=frozenset)
    kind: Optional[str] = None
    genres: frozenset[str] = field(default_factory=frozenset)  # asked for; `any_genre`: one of them is enough
    any_genre: bool = False
    people: frozenset[str] = field(default_factory=frozenset)  # asked for (director, writer or cast)
    unwanted_people: frozenset[str] = field(default_factory=frozenset)
    unwanted_intensity: frozenset[str] = field(default_factory=frozenset)  # "gore", "violence"
    unwanted_words: frozenset[str] = field(default_factory=frozenset)  # "nothing with ghosts": word stems
    subjects: frozenset[str] = field(default_factory=frozenset)  # "about time travel": one must be borne out
    origins: frozenset[str] = field(default_factory=frozenset)  # "an Italian movie": each must be borne out
    # "from Disney": a studio or franchise the catalog's records name often enough
    # (`arena.reading.names_unknown`)
    makers: frozenset[str] = field(default_factory=frozenset)

    def allows(self, item: CatalogItem) -> bool:
        if not self.allows_loosely(item):
            return False
        if self.genres:
            present = [has_genre(item, g) for g in self.genres]
            if not (any(present) if self.any_genre else all(present)):
                return False
        if self.people and not _keys(self.people) <= _people(item):
            return False
        if self.subjects and not bears_out(item, self.subjects):
            return False
        if self.origins and not all(from_origin(item, o) for o in self.origins):
            return False
        if self.makers and not all(names_maker(item, m) for m in self.makers):
            return False
        return True

    def allows_loosely(self, item: CatalogItem) -> bool:
        """What is ruled out stays out; what is asked for (genres, people) is not required."""
        if self.years is not None and (item.year is None or not self.years[0] <= item.year <= self.years[1]):
            return False
        if self.kind is not None and item.kind != self.kind:
            return False
        if self.kind is None and not item.offered_unasked:  # a TV series only when asked for
            return False
        if any(has_genre(item, g) for g in self.unwanted_genres):
            return False
        if self.unwanted_people and _keys(self.unwanted_people) & _people(item):
            return False
        if self.unwanted_intensity and self.unwanted_intensity & intensity_of(item):
            return False
        if self.unwanted_words and self.unwanted_words & _stems(
            " ".join([item.title, item.plot, *item.genres])
        ):
            return False
        return not self.for_children or child_friendly(item)

    def loosened(self) -> "Constraints":
        """The same without what is asked for: when nothing in the catalog has it all."""
        return replace(self, genres=frozenset(), people=frozenset(), any_genre=False, subjects=frozenset(),
                       origins=frozenset(), makers=frozenset())

    def without_era(self) -> "Constraints":
        """The same at any date: what to give up before a person asked for ("the latest Shia LaBeouf
        movie" when the catalog has none of his from recent years: his films, newest first, not others')."""
        return replace(self, years=None)

    def one_genre_enough(self) -> "Constraints":
        """The same with any one of the genres asked for enough: what to give up before the genres."""
        return replace(self, any_genre=len(self.genres) > 1)

    def without_subjects(self) -> "Constraints":
        """The same without the subjects: the first thing to give up when nothing has it all."""
        return replace(self, subjects=frozenset())

    @property
    def any(self) -> bool:
        return (self.years is not None or self.for_children or bool(self.unwanted_genres) or bool(self.genres)
                or bool(self.people) or bool(self.unwanted_people) or bool(self.unwanted_intensity)
                or bool(self.unwanted_words) or bool(self.subjects) or bool(self.origins)
                or bool(self.makers))

    def genre_words(self) -> str:
        """"comedy", "crime and thriller": the genres asked for, as an adjective for "picks"."""
        return (" or " if self.any_genre else " and ").join(sorted(self.genres))

    def describe(self) -> str:
        """"with Jim Carrey, from the 1990s, without romance" (empty when nothing is ruled; the genres
        asked for are `genre_words`)."""
        parts = []
        if self.origins:
            parts.append("from " + " or ".join(o.title() for o in sorted(self.origins)))
        if self.makers:
            parts.append("from " + " and ".join(sorted(self.makers)))
        if self.subjects:
            parts.append(subjects_phrase(self.subjects))
        if self.people:
            parts.append("with " + " and ".join(sorted(self.people)))
        if self.for_children:
            parts.append("suitable for children")
        if self.years is not None:
            parts.append(era_phrase(self.years))
        left_out = sorted(self.unwanted_genres) + sorted(self.unwanted_people)
        left_out += [word for word in ("gore", "violence") if word in self.unwanted_intensity]
        if left_out:
            parts.append("without " + ", ".join(left_out[:-1]) + (" or " if len(left_out) > 1 else "")
                         + left_out[-1])
        return ", ".join(parts)


def era_phrase(years: Optional[tuple[int, int]]) -> str:
    """"from the 1990s", "from 2016 on", "from before 1980", "from 1995 to 2004", "from 1999"; "" for
    no era. The one wording of an era, in headings, in what a list gave up and in the state's summary."""
    if years is None:
        return ""
    low, high = years
    if high - low == 9 and low % 10 == 0:
        return f"from the {low}s"
    if high >= 2100:
        return f"from {low} on"
    if low <= 1900:  # "black and white" is 1900-1965: the start says nothing (and "1900" is a title)
        return f"from before {high + 1}"
    return f"from {low} to {high}" if low != high else f"from {low}"


_EXCLUSION = re.compile(
    r"\b(nothing (with|about|involving)|(don'?t|do not|never) want (anything|something|any|stuff|"
    r"films?|movies?|one) ?(with|about|involving)|no|without|not about|nothing)\s+"
    r"((?:[\w'-]+(?:\s*,\s*|\s+or\s+|\s+and\s+|\s+)?){1,4})",
    re.IGNORECASE,
)
_NOT_A_SUBJECT = frozenset(
    """too very so much more less really any anything something movie movies film films show
    shows book books series one ones kind sort type stuff like want watch please thanks thank idea ideas
    problem worries way need rush hurry matter thing things more others other fan big long short scary dark
    sad violent gory silly heavy time today tonight again ending endings story stories love video videos
    clip clips based""".split()
)


_stem = stem  # one stem for the words ruled out and the subjects asked for


@lru_cache(maxsize=16384)
def _stems(text: str) -> frozenset[str]:
    return frozenset(_stem(w) for w in normalize(text).split() if len(w) >= 4)


def excluded_words(text: str, names: Sequence[str] = ()) -> set[str]:
    """"nothing with ghosts or possession" -> stems of "ghosts", "possession" and the words for them
    ("haunted", "exorcism"): subjects the user rules out by an explicit "no / nothing with / without"
    (genres, intensity, people and kinds are read apart)."""
    name_words = {w for n in names for w in normalize(n).split()}
    out = set()
    for match in _EXCLUSION.finditer(text):
        # Only the phrase the cue attaches to: "no romance, maybe an action movie" rules out romance alone.
        group = match.lastindex or 0  # every alternative of the pattern ends in a group
        ruled = text[match.start(group):min(match.end(group), phrase_end(text, match.start(group)))]
        for word in normalize(ruled).split():
            if (len(word) >= 4 and word not in FUNCTION_WORDS and word not in _NOT_A_SUBJECT
                    and word not in GENRE_WORDS and word not in INTENSITY_WORDS and word not in name_words
                    and not any(p.search(word) for _, p in KINDS)):
                # "ghosts": "haunted" too
                out |= {_stem(form) for form in subject_forms(word) if " " not in form}
    return out


def _people(item: CatalogItem) -> frozenset[str]:
    """The item's people as `person_key`s, so that "J. R. R. Tolkien" is "J.R.R. Tolkien"."""
    keys = _PEOPLE_KEYS.get((item.dataset, item.item_id))
    if keys is None:
        keys = frozenset(person_key(n) for names in item.people.values() for n in names)
        _PEOPLE_KEYS[(item.dataset, item.item_id)] = keys
    return keys


_PEOPLE_KEYS: dict[tuple[str, str], frozenset[str]] = {}


@lru_cache(maxsize=1024)
def _keys(names: frozenset[str]) -> frozenset[str]:
    return frozenset(person_key(n) for n in names)


def genre_mentions(text: str) -> list[tuple[str, int]]:
    """(genre, position) of every genre word in `text` (a compound genre gives each of its genres)."""
    return [(genre, position) for genre, position, _ in _genre_mentions(text)]


def _genre_mentions(text: str) -> list[tuple[str, int, bool]]:
    """(genre, position, ruled out when negated) of every genre word: a negated "romantic comedy"
    rules out romance only."""
    out, covered = [], []
    for pattern, genres, negatable in COMPOUNDS:
        for match in pattern.finditer(text):
            covered.append((match.start(), match.end()))
            out += [(genre, match.start(), genre in negatable) for genre in genres]
    for match in GENRE_WORD.finditer(text):
        if not any(a <= match.start() < b for a, b in covered):
            out.append((GENRE_WORDS[match.group(1).lower()], match.start(), True))
    return sorted(out, key=lambda m: m[1])


def carried_spans(text: str, constraints: Constraints) -> list[tuple[int, int]]:
    """The spans of `text` whose sense `constraints` already carry as a filter: each genre word of a genre
    every item must have (or must not), the era phrases when an era is kept, the words for a child audience
    when that is kept. What is left is what a ranker may still read as words: "horror" of "a good horror
    movie" matched as a word only brings titles that hold it (The Amityville Horror), and "recent"
    plots that say "recently"."""
    # Where one of several genres will do ("documentaries or spooky movies"), each item holds only some
    # of them, and the words still say which the request leans to; so they stay.
    kept = constraints.unwanted_genres | (frozenset() if constraints.any_genre else constraints.genres)
    spans = [m.span() for pattern, genres, _ in COMPOUNDS for m in pattern.finditer(text)
             if genres and set(genres) <= kept]
    spans += [m.span() for m in GENRE_WORD.finditer(text) if GENRE_WORDS[m.group(1).lower()] in kept]
    if constraints.years is not None:
        eras = (_BEFORE_DECADE, _AFTER_DECADE, _AFTER, _BEFORE, _DECADE, _LAST_YEARS, _FROM_YEAR, LATEST,
                _NEWER, _OLDER)
        spans += [m.span() for pattern in eras for m in pattern.finditer(text)] + style_spans(text)
    if constraints.for_children:
        spans += [m.span() for pattern in (_KIDS_KIND, _CHILDREN) for m in pattern.finditer(text)]
    return spans


def audience(constraints: Constraints, text: str) -> Constraints:
    """The constraints with the audience a message names, and nothing else: "Is Coco suitable for my
    8 year old?" asks no new list, but says who is watching."""
    child = _child_mentioned(text)
    return constraints if child is None else replace(constraints, for_children=child)


def _child_mentioned(text: str) -> Optional[bool]:
    """True for a child in the audience, False for "just me" or a teenager, None for no word on it."""
    if _ADULTS_ONLY.search(text):
        return False
    ages = [int(a) for m in _AGE.finditer(text) for a in m.groups() if a]
    if not _CHILDREN.search(text):
        # An age alone ("she is 14") still says who is watching: a child up to 12, else not a child.
        return min(ages) <= 12 if ages and max(ages) < 18 else None
    if _RELATIVE.search(text) and not _YOUNG.search(text) and not ages:
        return None  # "my brother loves westerns": a relative of no said age is no child
    return not ages or min(ages) <= 12


_BEFORE_DECADE = re.compile(r"\b(?:pre-?|before (?:the )?|older than (?:the )?|earlier than (?:the )?)"
                            r"((?:19|20)?[0-9]0'?s|twenties|thirties|forties|fifties|sixties|seventies|eighties|"
                            r"nineties)\b", re.IGNORECASE)
_AFTER_DECADE = re.compile(
    r"\b(?:post-?|after (?:the )?|since (?:the )?)((?:19|20)?[0-9]0'?s|twenties|thirties|"
    r"forties|fifties|sixties|seventies|eighties|nineties)\b",
    re.IGNORECASE,
)


def latest_years(years: Iterable[Optional[int]]) -> Optional[tuple[int, int]]:
    """The era "the latest" stands for in a catalog: its newest years, counted back from the newest one
    until they hold `LATEST_SHARE` of the dated entries (ReDial, collected in 2018: 2016 on), so a catalog
    that ends earlier or later says so itself. None for a catalog with no years."""
    counts = Counter(y for y in years if y)
    if not counts:
        return None
    total, held = sum(counts.values()), 0
    for year in sorted(counts, reverse=True):
        held += counts[year]
        if held >= LATEST_SHARE * total:
            return year, 2100
    return min(counts), 2100


def asks_latest(text: str) -> bool:
    """"the latest horror movies", "any new releases?": the catalog's most recent years are asked for."""
    return any(not negated_before(text, m.start()) for m in LATEST.finditer(text))


def _era(text: str, shown_years: Sequence[int],
         latest: Optional[tuple[int, int]] = None) -> Optional[tuple[int, int]]:
    # "pre-90s", "before the 80s": up to that decade, not the decade itself; "post-2000s" after it
    if match := _BEFORE_DECADE.search(text):
        return 1800, _decade_start(_DECADE.search(match.group(1))) - 1
    if match := _AFTER_DECADE.search(text):
        return _decade_start(_DECADE.search(match.group(1))) + 10, 2100
    if match := _AFTER.search(text):
        return int(match.group(2)) + (0 if match.group(1).lower() == "since" else 1), 2100
    if match := _BEFORE.search(text):
        return 1800, int(match.group(2)) - 1
    starts = [_decade_start(match) for match in _DECADE.finditer(text)]
    if starts:  # "the 70s or 80s": both
        return min(starts), max(starts) + 9
    if match := _LAST_YEARS.search(text):  # "the last ten years or so", "the past decade"
        count = match.group(1) or "one"
        count = int(count) if count.isdigit() else _NUMBER_WORDS[count.lower()]
        span = count * (10 if match.group(2).lower().startswith("decade") else 1)
        return CATALOG_PRESENT - max(span, 3), 2100
    if match := _FROM_YEAR.search(text):
        return int(match.group(2)), int(match.group(2))
    return _relative_era(text, shown_years, latest)


def _relative_era(text: str, shown_years: Sequence[int],
                  latest: Optional[tuple[int, int]]) -> Optional[tuple[int, int]]:
    """An era said against the catalog or the list shown: "the latest", "something newer", "older"."""
    if latest is not None and asks_latest(text):
        return latest
    if _NEWER.search(text) or (shown_years and _SHOWN_TOO_OLD.search(text)):
        # Nothing shown to be newer than: "newer movies" asks for the catalog's last decade or so.
        return min(max(shown_years, default=RECENT_FROM - 1) + 1, NEWEST_YEAR_ASKED), 2100
    if _OLDER.search(text):
        return 1800, max(min(shown_years, default=1990) - 1, 1950)
    return None


def _decade_start(match: Optional[re.Match]) -> int:
    """The first year of the decade `_DECADE` matched (in a part of a match of a pattern that has it)."""
    if match is None:
        raise ValueError("not a decade")
    if match.group(3):
        return 1900 + 10 * _DECADE_WORDS[match.group(3).lower()]
    century = int(match.group(1)) * 100 if match.group(1) else (2000 if match.group(2) in "01" else 1900)
    return century + 10 * int(match.group(2))


def _kind(text: str) -> Optional[str]:
    """The one kind the message asks for; none when it names several ("movies and tv"). Kind words
    in an aside ("films made from his books", "rather than a book") do not count."""
    text = KIND_ASIDE.sub(" ", text)
    kinds = [kind for kind, pattern in KINDS if pattern.search(text)]
    return kinds[0] if len(kinds) == 1 else None


def update(
    constraints: Constraints,
    text: str,
    *,
    complaint: bool,
    shown_years: Sequence[int] = (),
    kinds_matter: bool = False,
    people: Sequence[tuple[str, int]] = (),
    shown: Sequence[CatalogItem] = (),
    bearable: Callable[[str], bool] = lambda subject: True,
    plain: Callable[[str, Sequence[str]], list[tuple[str, int]]] = lambda text, names: [],
    latest: Optional[tuple[int, int]] = None,
) -> Constraints:
    """The constraints after one more user message (`text` with its titles cut out).
    In a `complaint` a genre named outside a request clause is one the user does not want.
    `people` are the persons the message names, with their positions; `shown` the items the
    system showed last ("something lighter" moves away from their heavy genres); `bearable` says
    whether the catalog can bear a subject out at all (one it cannot is not asked for); `plain` finds
    the subjects a request names without a cue word (`arena.reading.subjects.plain_subjects` with the
    catalog's word statistics), read when no cue names one; `latest` the catalog's newest years
    (`latest_years`), which "the latest" and "new releases" ask for."""
    text = SEASON_GREETING.sub(lambda m: " " * len(m.group()), text)  # "Hi merry christmas": no subject
    live_action = bool(LIVE_ACTION.search(text))
    text = LIVE_ACTION.sub("film", text)  # "live action" rules out animation and asks for no action genre
    years = _era(text, shown_years, latest) or era_of_style(text) or constraints.years
    child = _child_mentioned(text)
    for_children = constraints.for_children if child is None else child
    unwanted = set(constraints.unwanted_genres)
    wanted, adds, sub_genres_out = _genres_named(text, complaint, unwanted)
    # "not a kids' film", "nothing for kids": family titles go ("an animated movie, for me not for kids"
    # keeps animation)
    if any(negated_before(text, match.start()) for match in _KIDS_KIND.finditer(text)):
        unwanted |= {"family", "animation"} - wanted - constraints.genres
        for_children = False
    if live_action:
        unwanted.add("animation")
    moods = _moods_asked(text, complaint, unwanted)
    genres, any_genre = _genres_after(constraints, text, wanted, adds, moods, unwanted)
    intensity = _intensity_after(constraints, text, complaint)
    lighter = _asks_lighter(text)
    if lighter:
        # "too violent", "something lighter" (but "not too gory" is a wish about what is asked for)
        heavy = {g for g in HEAVY_GENRES if any(has_genre(item, g) for item in shown)} | {"horror"}
        heavy -= wanted
        unwanted |= heavy
        genres = frozenset(g for g in genres if g not in heavy)
        intensity |= {"violence", "gore"}
    chosen, ruled_out = _people_after(constraints, text, people, complaint)
    kind = (_kind(text) or constraints.kind) if kinds_matter else None
    names = [name for name, _ in people]
    words = set(constraints.unwanted_words) | excluded_words(text, names)
    for sub_genre in sub_genres_out:
        words |= {stem(form) for form in SUB_GENRES[sub_genre]}
    subjects = _subjects_after(constraints, text, names, complaint=complaint, wanted=wanted, lighter=lighter,
                               bearable=bearable, plain=plain, words=words)
    # A place named replaces the one before ("now something French"); none named keeps it.
    origins = {ORIGIN_WORDS[m.group(1).lower()] for m in ORIGIN_WORD.finditer(text)
               if not negated_before(text, m.start())} or set(constraints.origins)
    return replace(
        constraints,
        unwanted_words=frozenset(words),
        years=years,
        for_children=for_children,
        unwanted_genres=frozenset(unwanted),
        kind=kind,
        genres=frozenset(g for g in genres if g not in unwanted),
        any_genre=any_genre,
        people=frozenset(chosen),
        unwanted_people=frozenset(ruled_out),
        unwanted_intensity=frozenset(intensity),
        subjects=frozenset(subjects),
        origins=frozenset(origins),
    )


def _genres_named(text: str, complaint: bool, unwanted: set[str]) -> tuple[set[str], bool, set[str]]:
    """The genres a message asks for, whether all of them come as additions ("with a bit of comedy
    thrown in"), and the sub-genres it rules out. The genres it rules out go into `unwanted`, and those
    it asks for leave it."""
    wanted: set[str] = set()
    adds = True
    sub_genres_out: set[str] = set()
    phrase_spans = subject_phrase_spans(text)
    for genre, position, negatable in _genre_mentions(text):
        # "Just Married isn't really a drama": drama is what was wanted
        if not _says_item_lacks(text, position) and (
                negated_before(text, position) or (complaint and not in_request_clause(text, position)
                                                   and not _genre_sentence(text, position))):
            sub_genre = SUB_GENRE_WORD.match(text, position)
            if sub_genre:  # "tired of slashers" rules out slashers, not horror
                sub_genres_out.add(sub_genre.group(1).lower())
            elif any(start <= position < end for start, end in phrase_spans):
                continue  # "not another World War II one": the subject goes (below), the war genre stays
            elif negatable:
                unwanted.add(genre)
        else:
            unwanted.discard(genre)
            wanted.add(genre)
            adds = adds and bool(
                ADDED_GENRE_BEFORE.search(text[:position]) or ADDED_GENRE_AFTER.match(text, position)
                or _bare_adjective(text, position)
            )
    return wanted, adds, sub_genres_out


_WORD = re.compile(r"[\w'-]+")
_SENTENCE_FILLER = frozenset({"a", "an", "some", "just", "only", "please", "movie", "movies", "film", "films",
                              "ones", "one", "more", "good", "i", "said", "want", "mean", "meant"})


# "Just Married isn't really a drama", "that one is not a comedy": a title said to lack the genre, so the
# genre is the one wanted ("something that is not a comedy" rules comedy out: its subject is no title).
_LACKS_GENRE = re.compile(r"\b([\w')]+)\s+(is|was|'s)\s*(n'?t|nt|not)\s+(really |actually |quite |exactly |"
                          r"even |much of |at all )?(a |an )?$", re.IGNORECASE)


def _says_item_lacks(text: str, position: int) -> bool:
    match = _LACKS_GENRE.search(text[:position])
    return match is not None and match.group(1).lower() not in ("that", "which", "who", "what", "something",
                                                               "anything", "nothing", "i", "it's")


def _genre_sentence(text: str, position: int) -> bool:
    """Whether the genre word at `position` makes a sentence of its own ("Anime. No Cars 3 or Pixar"):
    said alone, even in a complaint, it says what is wanted."""
    start = max(text.rfind(mark, 0, position) for mark in ".!?;") + 1
    ends = [i for i in (text.find(mark, position) for mark in ".!?;") if i != -1]
    words = _WORD.findall(text[start:min(ends) if ends else len(text)])
    return bool(words) and all(GENRE_WORD.fullmatch(w) or w.lower() in _SENTENCE_FILLER for w in words)


def _bare_adjective(text: str, position: int) -> bool:
    """Whether the genre word at `position` is an adjective with no noun after it ("Romantic",
    "anything funnier?"), not "a romantic movie" or "a funny comedy"."""
    word = _WORD.match(text, position)
    if word is None or word.group(0).lower() not in GENRE_ADJECTIVES:
        return False
    following = _WORD.search(text, word.end())
    if following is None:
        return True
    noun = following.group(0)
    return not (GENRE_WORD.fullmatch(noun) or any(p.fullmatch(noun) for _, p in KINDS)
                or noun.lower() in ("one", "ones", "stuff", "story", "stories"))


def _moods_asked(text: str, complaint: bool, unwanted: set[str]) -> set[str]:
    """The genres the message's moods ask for ("something creepy"); the genres of a mood it rules out
    go into `unwanted`."""
    moods: set[str] = set()
    for pattern, asked, ruled_out in MOODS:
        for match in pattern.finditer(text):
            if negated_before(text, match.start()) or (
                complaint and not in_request_clause(text, match.start())
            ):
                unwanted |= set(ruled_out)
            else:
                moods |= set(asked)
    return moods


def _genres_after(constraints: Constraints, text: str, wanted: set[str], adds: bool, moods: set[str],
                  unwanted: set[str]) -> tuple[frozenset[str], bool]:
    """The genres asked for after this message, and whether any one of them will do."""
    genres, any_genre = constraints.genres, constraints.any_genre
    if moods and not wanted and not (moods - unwanted) <= genres:  # a mood counts when no genre is named
        genres, any_genre = frozenset(moods - unwanted), True
    elif moods and wanted and _OR.search(text):  # "documentaries or spooky movies": either will do
        wanted |= moods - unwanted
    if wanted and adds and genres and _MAY_BE.search(text) and not _INSTEAD.search(text):
        genres, any_genre = genres | wanted, True  # "they can be horror as well": one more genre that will do
    elif wanted and adds and genres and not any_genre and not _INSTEAD.search(text):
        genres = genres | wanted  # "a bit more romantic", "with a bit of comedy thrown in": one more genre
    elif wanted:
        # "comedy or drama", "horror, but I'm also fine with action": one of them will do; so will one of
        # three or more listed (a list of tastes, which no film has all of).
        genres, any_genre = frozenset(wanted), len(wanted) > 2 or (
            len(wanted) > 1 and bool(_OR.search(text) or _ALSO_FINE.search(text)))
    return genres, any_genre


def _intensity_after(constraints: Constraints, text: str, complaint: bool) -> set[str]:
    intensity = set(constraints.unwanted_intensity)
    for match in INTENSITY_WORD.finditer(text):
        if negated_before(text, match.start()) or complaint or re.search(r"\btoo\s+$", text[:match.start()]):
            intensity.add(INTENSITY_WORDS[match.group(1).lower()])
    return intensity


def _asks_lighter(text: str) -> bool:
    """ "Something lighter", but not "nothing lighter"."""
    return any(
        not re.search(r"\b(not|nothing|no|never)\s+$", text[: m.start()]) for m in LIGHTER.finditer(text)
    )


def _people_after(constraints: Constraints, text: str, people: Sequence[tuple[str, int]],
                  complaint: bool) -> tuple[set[str], set[str]]:
    """The persons asked for and those ruled out, after this message."""
    chosen, ruled_out = set(constraints.people), set(constraints.unwanted_people)
    for name, position in people:
        # "Just Married isn't really a drama": drama is what was wanted
        if not _says_item_lacks(text, position) and (
                negated_before(text, position) or (complaint and not in_request_clause(text, position)
                                                   and not _genre_sentence(text, position))):
            ruled_out.add(name)
            chosen.discard(name)
        else:
            chosen = {name}
            ruled_out.discard(name)
    if _OTHER_PERSON.search(text):  # "in the same vein by a different author": not the one asked for so far
        ruled_out |= chosen
        chosen = set()
    return chosen, ruled_out


def _subjects_after(
    constraints: Constraints,
    text: str,
    names: list[str],
    *,
    complaint: bool,
    wanted: set[str],
    lighter: bool,
    bearable: Callable[[str], bool],
    plain: Callable[[str, Sequence[str]], list[tuple[str, int]]],
    words: set[str],
) -> set[str]:
    """The subjects asked for after this message; the word stems of a subject it rules out go into
    `words`."""
    subjects = set()
    asked = subjects_asked(text, names)
    # A phrase the cue reading found whole or in part ("set in outer space" gave "space") is not read twice.
    asked += [(subject, position) for subject, position in subject_phrases_named(text)
              if not any(s in subject or subject in s for s, _ in asked)]
    for subject, position in asked:
        if negated_before(text, position):  # "not another Vietnam one"
            words |= {stem(form) for form in subject_forms(subject) if " " not in form}
        elif bearable(subject):
            subjects.add(subject)
    if not subjects and not complaint:  # "my daughter loves dinosaurs", "zombies but funny"
        subjects = {
            subject
            for subject, position in plain(text, names)
            if subject not in _NOT_A_SUBJECT and not negated_before(text, position) and bearable(subject)
        }
    if not subjects:
        # Kept by a refinement, a complaint that adds a genre ("not that one, something with more
        # action?" is still set in space); a genre asked for "instead" or "lighter" replaces it.
        subjects = set(constraints.subjects)
        if wanted and (lighter or _INSTEAD.search(text)):  # "a music documentary instead?"
            subjects = set()
    return subjects


_REQUEST_CLAUSE = re.compile(
    r"\b(i want|i'?d (like|prefer|rather)|i would like|looking for|something|more|any( other| more)?|another|"
    r"other|(films?|movies?|ones?) like|prefer|"
    r"rather|lighter|funnier|happier|"
    r"how about|what about|instead|maybe|give me|show me|recommend|"
    # A liking said now ("I like documentaries", "they can be horror as well") asks for what it names, in a
    # complaint too; a past one ("I liked Rocky but ...") is no request.
    r"(i|we) (really |also |do |just )?(like|love|enjoy)|(can|could) (also )?be)\b",
    re.IGNORECASE,
)
CLAUSE_SPLIT = re.compile(r"[.!?;]+|,|\bbut\b", re.IGNORECASE)


def clauses(text: str) -> list[tuple[int, int]]:
    cuts = [0] + [m.end() for m in CLAUSE_SPLIT.finditer(text)] + [len(text)]
    return [(a, b) for a, b in zip(cuts, cuts[1:]) if text[a:b].strip()]


def in_request_clause(text: str, position: int) -> bool:
    """Whether `position` lies in a clause that asks for something ("I want something like Frozen")."""
    for start, end in clauses(text):
        if start <= position < end:
            return bool(_REQUEST_CLAUSE.search(text[start:end]))
    return False


def request_part(text: str) -> str:
    """The clauses of a complaint that ask for something, without the negated words."""
    kept = [text[a:b].strip(" ,") for a, b in clauses(text) if _REQUEST_CLAUSE.search(text[a:b])]
    return " ".join(k for k in kept if k)
