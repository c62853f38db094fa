"""What a request is about, beyond its genre: "sci-fi movies about time travel", "a zombie movie",
"documentaries about nature or animals", "a movie set in outer space", "a Christmas theme".

A subject is read from where people put one: after "about", "set in", "involving", or just before
the kind of item ("heist movies", "a zombie comedy", "courtroom dramas"). Genre, mood, era, kind
and people words are no subjects ("a good funny movie", "recent westerns", "Tom Hanks movies").
An item bears a subject out when its plot or its genres (OpenDialKG's "Time travel", "Zombie
Film") hold the subject's word or one of the words that say the same thing ("a heist" is also
"a robbery"); its title alone does not count, so "Scary Movie" is no horror and "Cool Runnings"
nothing cool. Which subject words the catalog can bear out at all is for the system to judge
(`word_counts`, `subject_frequency`): a word no plot uses is dropped rather than emptying the list.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from functools import lru_cache
from typing import Iterable, Sequence

import Stemmer

from arena.catalogs.catalog import CatalogItem
from arena.reading.phrase_table import known_subject
from arena.reading.vocabulary import COMPOUNDS, GENRE_WORD, GENRE_WORDS, INTENSITY_WORDS, KINDS, genre_label
from arena.titles.phrases import FUNCTION_WORDS, normalize

# Subjects of more than one word, as people say them (matched before single words).
PHRASES = (
    "time travel",
    "coming of age",
    "world war",
    "second world war",
    "first world war",
    "serial killer",
    "road trip",
    "high school",
    "true story",
    "martial arts",
    "haunted house",
    "natural world",
)
# Words that say the same thing as a subject in a plot or a genre name (plural and stem forms match
# anyway: "zombie" finds "zombies"). Kept to common film subjects, not to one conversation's words,
# and to words that say the subject itself: a vigilante is no superhero (Death Wish), and "sent back"
# is more often to school or to a court than in time.
RELATED = {
    "time travel": (
        "time travel",
        "time machine",
        "back in time",
        "through time",
        "time traveler",
        "time traveller",
        "travels back",
        "travel back",
        "into the past",
        "to the past",
        "into the future",
        "to the future",
    ),
    "heist": (
        "heist",
        "robbery",
        "robbers",
        "bank robber",
        "thieves",
        "thief",
        "steal",
        "vault",
        "con artist",
    ),
    "robbery": ("robbery", "heist", "robbers", "thieves", "steal"),
    "superhero": (
        "superhero",
        "super hero",
        "superheroes",
        "superpowers",
        "superpower",
        "super powers",
        "mutant",
        "mutants",
        "crime fighter",
        "superman",
        "spider man",
        "batman",
        "avengers",
        "x men",
        "justice league",
        "wonder woman",
        "iron man",
        "captain america",
        "hulk",
    ),
    "nature": ("nature", "wildlife", "natural world", "animals", "ocean", "forest", "jungle", "wilderness"),
    "animal": ("animal", "wildlife", "creatures"),
    "courtroom": ("courtroom", "court", "trial", "lawyer", "attorney", "jury", "judge", "legal"),
    "lawyer": ("lawyer", "attorney", "trial", "court", "legal"),
    "christmas": ("christmas", "santa", "xmas", "north pole", "holiday season"),
    "holiday": ("holiday", "christmas", "santa", "thanksgiving"),
    "zombie": ("zombie", "undead", "living dead"),
    "vampire": ("vampire", "dracula"),
    "musician": (
        "musician",
        "singer",
        "band",
        "composer",
        "rapper",
        "pianist",
        "guitarist",
        "rock star",
        "jazz",
        "songwriter",
    ),
    "band": ("band", "musician", "singer", "rock star"),
    "singer": ("singer", "musician", "songwriter"),
    "boxing": ("boxing", "boxer", "prizefighter", "fighter"),
    "football": ("football", "quarterback", "soccer", "nfl"),
    "world war": ("world war", "wwii", "nazi", "nazis", "hitler", "holocaust", "d day"),
    "second world war": (
        "second world war",
        "world war ii",
        "world war 2",
        "wwii",
        "ww2",
        "nazi",
        "nazis",
        "hitler",
        "holocaust",
        "d day",
        "normandy",
        "pearl harbor",
        "third reich",
        "luftwaffe",
        "1939",
        "1940",
        "1941",
        "1942",
        "1943",
        "1944",
        "1945",
    ),
    "first world war": ("first world war", "world war i", "great war", "wwi", "ww1", "trenches"),
    "coming of age": (
        "coming of age",
        "teenager",
        "teenagers",
        "teen",
        "adolescent",
        "growing up",
        "high school",
    ),
    "gangster": (
        "gangster",
        "gangsters",
        "mobster",
        "mafia",
        "mob boss",
        "crime boss",
        "organized crime",
        "crime family",
        "racketeer",
        "gang",
        "syndicate",
        "hoodlum",
    ),
    "mafia": ("mafia", "mobster", "gangster", "mob boss", "crime boss", "organized crime", "crime family"),
    "spy": ("spy", "spies", "secret agent", "espionage", "cia"),
    "alien": ("alien", "aliens", "extraterrestrial", "ufo"),
    "robot": ("robot", "robots", "android", "cyborg", "artificial intelligence"),
    "ghost": ("ghost", "ghosts", "haunted", "haunting"),
    "dystopian": ("dystopia", "dystopian", "totalitarian", "post apocalyptic"),
    "possession": ("possession", "possessed", "exorcism", "exorcist", "demonic"),
    "witch": ("witch", "witches", "witchcraft"),
    "pirate": ("pirate", "pirates"),
    "prison": ("prison", "inmate", "jail", "convict", "prisoner"),
    # Language as a subject ("about languages", linguistics): the plots that deal with words and speech.
    "language": ("language", "languages", "linguist", "linguistics", "linguistic", "dialect", "translator",
                 "translate", "interpreter", "sign language"),
    "linguistics": ("linguistics", "linguist", "linguistic", "language", "languages", "dialect",
                    "translator"),
}
RELATED["linguist"] = RELATED["linguistics"]
# Words before "movie" that say what it is like, not what it is about.
_NOT_A_SUBJECT = frozenset(
    """good great best new old older newer recent classic classics fun funny sad scary
    dark light lighter nice cool bad little big long short whole family kids kid children child other another
    more
    some any similar different same cute sweet feel heavy serious dumb smart clever inspiring inspirational
    popular famous underrated favourite favorite particular specific certain real decent interesting exciting
    entertaining lovely quick easy simple tv kind sort type adult adults modern recent older proper decent
    nice solid fresh light-hearted lighthearted feel-good cheesy silly weird strange odd bizarre gritty grim
    intense slow fast happy upbeat depressing moving touching emotional beautiful epic small indie foreign
    english american british french outer low budget blockbuster award winning critically acclaimed original
    decade year years century night tonight weekend evening date girls guys boys lazy rainy sunday friday
    saturday cozy cosy lot much many few couple something anything everything nothing watch read tonight
    again also still such those these that this what which your their our my his her its movie movies film
    films flick flicks show shows book books novel novels story stories series documentary documentaries
    thing things stuff one ones got get gets give show find try need know recommend suggest instead maybe
    perhaps please""".split()
) | frozenset(
    # The medium itself and the words that join it to a subject ("music based videos", "something
    # video-based", "a film based on music") say what the item is, never what it is about.
    """video videos vid vids clip clips footage based about with""".split()
)
_GENRE_NAMES = frozenset(GENRE_WORDS.values()) | {"music", "family", "adventure", "genre", "genres"}
_KIND_NOUN = (r"movies?|films?|flicks?|documentar(?:y|ies)|dramas?|comed(?:y|ies)|thrillers?|novels?|books?|"
              r"stories|shows?|series|ones?|theme|themed|genre|fans?|videos?|clips?")
_BEFORE_KIND = re.compile(r"\b([a-z][a-z0-9'-]+(?: [a-z][a-z0-9'-]+){0,2}?)[ -](?:" + _KIND_NOUN + r")\b")
_AFTER_CUE = re.compile(r"\b(?:about|involving|set (?:in|during|on|at)|featuring|centered on|centred on|"
                        r"based on|"
                        r"(?:really |big |so )?into|obsessed with|crazy about|mad about|"
                        r"(?:having |has |have )?(?:anything |something )?to do with|"
                        r"(?:a|an) (?:\w+ )?theme of)\s+"
                        r"((?:[\w'-]+(?:\s*,\s*|\s+or\s+|\s+and\s+|\s+)?){1,4})")
_STOP_AFTER_CUE = re.compile(
    r"\b(but|though|please|from|with|for|that|which|who|set|in|during|instead|not|nor|no|never|without|"
    r"maybe|right now|now|at the moment|lately|these days|tonight|today|currently|again)\b"
)


# "WW2 films", "World War II": the war by its number (the genre word "war" is read apart).
_WAR_BY_NUMBER = re.compile(
    r"\b(ww ?(2|ii)|world war (2|ii|two)|ww ?(1|i)|world war (1|i|one))\b", re.IGNORECASE
)


# Other ways to say "a true story" ("based on truth", "stuff that really happened"): read as that subject,
# and their words ("truth", "events") as nothing else.
_TRUE_STORY_SAID = re.compile(
    r"\b(based (on|off) (of )?(the )?(truth|facts?|real life|reality|(actual|true|real) (events?|stories|"
    r"people|life|crimes?)|a real (story|event|person)|true stories)|(really|actually) happened|"
    r"real[- ]life (story|stories|events?|people))\b")


def subject_phrase_spans(text: str) -> list[tuple[int, int]]:
    """Where the text names a subject of several words that holds a genre word ("World War II",
    "second world war"): ruled out, such a phrase rules out its subject, not the genre ("a war movie,
    but not another World War II one" still asks for war)."""
    low = text.lower()
    spans = [m.span() for m in _WAR_BY_NUMBER.finditer(low)]
    for phrase in PHRASES:
        spans += [m.span() for m in re.finditer(r"\b" + re.escape(phrase) + r"\b", low)]
    return spans


def _is_subject_word(word: str, names: set[str]) -> bool:
    return (len(word) >= 3 and word not in FUNCTION_WORDS and word not in _NOT_A_SUBJECT
            and word not in GENRE_WORDS and word not in _GENRE_NAMES and word not in INTENSITY_WORDS
            and word not in names
            and not word.isdigit() and not re.fullmatch(r"\d+s", word)
            and not any(pattern.fullmatch(word) for _, pattern in KINDS))


def _subjects_in(words: Sequence[str], names: set[str]) -> list[str]:
    """The subjects in a run of words: known phrases first, then single content words."""
    text = " ".join(words)
    found: list[str] = []
    for phrase in sorted(PHRASES, key=len, reverse=True):
        if f" {phrase} " in f" {text} " and not any(phrase in f for f in found):
            found.append(phrase)
            text = f" {text} ".replace(f" {phrase} ", " | ").strip()
    for word in text.split():
        if word != "|" and _is_subject_word(word, names):
            found.append(word)
    return found


def plural_said(subject: str) -> str:
    """A subject as a heading says it: "gangster" -> "gangsters" when the related-words table holds that
    plural ("superhero" -> "superheroes"); any other as it was said ("heist", "time travel")."""
    related = RELATED.get(subject, ())
    return next((p for p in (subject + "s", subject + "es") if p in related), subject)


def _is_activity(run: str, words: list[str], name_words: set[str]) -> bool:
    """Two words, the second a gerund, with nothing between them: "rock climbing", "deep sea diving" is
    three; "zombies, vampires" or "cars and racing" are two subjects."""
    return (len(words) == 2 and not re.search(r",| or | and ", run) and len(words[1]) > 5
            and words[1].endswith("ing") and words[0] not in FUNCTION_WORDS and words[0] not in name_words
            and _is_subject_word(words[0], name_words))


def subjects_asked(text: str, names: Iterable[str] = ()) -> list[tuple[str, int]]:
    """(subject, position) of every subject a message names, as the user said it ("time travel",
    "zombie"); `names` are people the message names (their words are no subjects). Whether a
    subject is asked for or ruled out ("not another Vietnam one") is the caller's to read."""
    low = _joined(text.lower())
    genre_spans = [m.span() for p in (GENRE_WORD, *(c for c, _, _ in COMPOUNDS)) for m in p.finditer(low)]
    name_words = {w for n in names for w in normalize(n).split()}
    found: list[tuple[str, int]] = []
    for match in _AFTER_CUE.finditer(low):
        run = _STOP_AFTER_CUE.split(match.group(1))[0]
        words = normalize(run.replace(" or ", " , ").replace(" and ", " , ")).split()
        if _is_activity(run, words, name_words):  # "about rock climbing": one activity, not rock and climbing
            found.append((" ".join(words), match.start(1)))
            continue
        found += [(s, match.start(1)) for s in _subjects_in(words, name_words)]
    for match in _BEFORE_KIND.finditer(low):
        words = normalize(match.group(1)).split()
        phrase = " ".join(words)
        known = [p for p in sorted(PHRASES, key=len, reverse=True) if phrase.endswith(p)]
        if known:
            found.append((known[0], match.end(1) - len(known[0])))
        elif words and _is_subject_word(words[-1], name_words):
            found.append((words[-1], match.start(1) + match.group(1).rfind(" ") + 1))
    war_matches = list(_WAR_BY_NUMBER.finditer(low))
    wars = [
        ("second world war" if (m.group(2) or m.group(3)) else "first world war", m.start())
        for m in war_matches
    ]
    war_words = {w for m in war_matches for w in normalize(m.group(0)).split()}
    true_spans = [m.span() for m in _TRUE_STORY_SAID.finditer(low)]
    found = [(s, p) for s, p in found if not any(a <= p < b for a, b in true_spans)]
    found += [("true story", a) for a, _ in true_spans]
    seen, out = set(), []
    for subject, position in wars + found:
        if subject in war_words or (subject == "world war" and wars):
            continue  # "ww2" itself, or "world war" of "world war ii", is read above
        if subject not in {s for s, _ in wars} and any(start <= position < end for start, end in genre_spans):
            continue  # "science fiction" is a genre
        if subject not in seen:
            seen.add(subject)
            out.append((subject, position))
    return out


_WORD_RUN = re.compile(r"[a-z]{3,}")


def _joined(low: str) -> str:
    """The text with a subject written as two words joined ("super hero ones" -> " superhero ones"), so
    that the second word alone ("hero") is not read as the subject; each position keeps its place."""
    words = list(_WORD_RUN.finditer(low))
    for first, second in zip(words, words[1:]):
        joined = first.group() + second.group()
        if low[first.end():second.start()] == " " and known_subject(joined):
            low = low[:first.start()] + " " + joined + low[second.end():]
    return low


_STEMMERS = threading.local()  # a PyStemmer object must not be shared between threads


def stem(word: str) -> str:
    """The English Snowball stem ("ghosts" and "ghost", "haunted" and "haunting" meet; "christmas" and
    "christian" stay apart, as a six-letter prefix did not keep them)."""
    stemmer = getattr(_STEMMERS, "english", None)
    if stemmer is None:
        stemmer = _STEMMERS.english = Stemmer.Stemmer("english")
    return stemmer.stemWord(word)


def subject_forms(subject: str) -> tuple[str, ...]:
    """The words and phrases that bear a subject out."""
    singulars = [subject[:-1]] if subject.endswith("s") else []
    singulars += [subject[:-2]] if subject.endswith("es") else []  # "superheroes"
    singulars += [subject[:-3] + "y"] if subject.endswith("ies") else []  # "spies"
    related = RELATED.get(subject) or next((RELATED[s] for s in singulars if s in RELATED), ())
    return tuple(dict.fromkeys((subject, *related)))


def inflections(word: str) -> frozenset[str]:
    """A word and its plural or singular: "zombie" finds "zombies", "animals" finds "animal"."""
    base = word[:-1] if word.endswith("s") and len(word) > 4 and not word.endswith("ss") else word
    forms = {word, base, base + "s", base + "es"}
    if base.endswith("y"):
        forms.add(base[:-1] + "ies")
    return frozenset(forms)


@lru_cache(maxsize=16384)
def _item_text(plot: str, genres: tuple[str, ...]) -> tuple[str, frozenset[str]]:
    text = " " + normalize(" ".join([plot, *(genre_label(g) for g in genres)])) + " "
    return text, frozenset(text.split())


def bears_out(item: CatalogItem, subjects: Iterable[str]) -> bool:
    """Whether the item's plot or genres hold one of the subjects (or a word for it)."""
    text, words = _item_text(item.plot or "", tuple(item.genres))
    for subject in subjects:
        for form in subject_forms(subject):
            if " " in form:
                if f" {form} " in text:
                    return True
            elif inflections(form) & words:
                return True
    return False


def word_counts(items: Sequence[CatalogItem]) -> Counter:
    """How many items' plots or genres hold each word: read once per catalog, so that whether a
    subject can be borne out costs a few look-ups a turn."""
    counts: Counter = Counter()
    for item in items:
        counts.update(_item_text(item.plot or "", tuple(item.genres))[1])
    return counts


def subject_frequency(counts: Counter, subject: str) -> int:
    """About how many items bear the subject out (an upper bound: an item may hold two of its
    words), from `word_counts`; a phrase counts as its rarest word."""
    total = 0
    for form in subject_forms(subject):
        words = form.split()
        if len(words) > 1:
            total += min(counts.get(w, 0) for w in words)
        else:
            total += sum(counts.get(w, 0) for w in inflections(form))
    return total


# Said without a cue word ("my daughter loves dinosaurs", "zombies but funny", "anything with sharks"),
# a subject is a plural noun of the request that the catalog's plots use as one: its singular is a plot
# word, it has no verb forms there ("loves" has "loved", "sharks" no "sharked"), and between
# PLAIN_MIN and PLAIN_MAX_SHARE of the entries bear it (so "years", "friends" or "lives" never are).
# People of the user's own life ("my nephew", "our kids") and time words are no subjects either.
PLAIN_MIN = 3
PLAIN_MAX_SHARE = 0.03
_OWN_PHRASE = re.compile(
    r"\b(?:my|our|your|his|her|their)\b((?:\s+[\w'-]+){1,4}?)(?=\s+(?:is|are|was|were|has|have|"
    r"loves?|likes?|wants?|enjoys?|needs?|and|who|,|\.|$)|[,.!?]|$)",
    re.IGNORECASE,
)
_SUBJECT_PRONOUN = re.compile(r"\b(it|that|this|he|she|they|who|which|everyone|everybody|nobody|one)\s+$")
_CONVERSATION_NOUNS = frozenset(
    """ideas options suggestions recommendations recs picks titles choices kids guys
    friends parents years days weeks hours minutes nights evenings weekends times things others ones lots
    loads
    tons plenty thanks questions answers reviews ratings stars actors actresses people characters endings
    sequels prequels episodes seasons genres kinds types sorts""".split()
)


def _verb_forms(word: str, counts: Counter) -> int:
    """How often the plots use the word's past or -ing form ("loved", "loving" for "loves")."""
    base = word[:-1]
    forms = {base + "d", base + "ed", base[:-1] + "ied" if base.endswith("ie") else base + "ed",
             base + "ing", base[:-1] + "ing" if base.endswith("e") else base + "ing"}
    if word.endswith("ies"):
        forms |= {word[:-3] + "ied", word[:-3] + "ying"}
    if word.endswith("es"):
        forms |= {word[:-2] + "ed", word[:-2] + "ing"}
    forms |= {base + base[-1] + "ed", base + base[-1] + "ing"}  # "plans": "planned"
    return sum(counts.get(f, 0) for f in forms)


def plain_subjects(text: str, counts: Counter, total: int, names: Iterable[str] = (),
                   not_subjects: Iterable[str] = ()) -> list[tuple[str, int]]:
    """(subject, position) of the plural nouns a request names as what it is about without a cue
    word; `counts` are the catalog's `word_counts`, `total` its size, `names` the people named,
    `not_subjects` more words that are no subject (the caller's own)."""
    low = text.lower()
    for match in list(_OWN_PHRASE.finditer(low)):  # "my 6 year old daughter", "our kids"
        low = low[:match.start()] + " " * (match.end() - match.start()) + low[match.end():]
    skip = {w for n in names for w in normalize(n).split()} | set(not_subjects) | _CONVERSATION_NOUNS
    genre_spans = [m.span() for p in (GENRE_WORD, *(c for c, _, _ in COMPOUNDS)) for m in p.finditer(low)]
    out = []
    for match in re.finditer(r"[a-z][a-z'-]+", low):
        word = match.group()
        if _SUBJECT_PRONOUN.search(low[:match.start()]):
            continue  # "that sounds too sad", "she loves princesses": a verb
        if (len(word) < 5 or not word.endswith("s") or word.endswith(("ss", "ous", "'s", "us", "is"))
                or word in skip or not _is_subject_word(word, set())
                or any(a <= match.start() < b for a, b in genre_spans)):
            continue
        uses = sum(counts.get(f, 0) for f in inflections(word))
        if PLAIN_MIN <= uses <= PLAIN_MAX_SHARE * total and not _verb_forms(word, counts):
            out.append((word, match.start()))
    return out
