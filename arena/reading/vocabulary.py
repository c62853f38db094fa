"""The words people use for genres, intensity and kinds of item, and how catalog entries bear them out.

A genre word maps to the word the catalogs' genre names contain ("funny" is comedy,
"sci-fi" is sci fi). Compound genres name two at once: "a romantic comedy" is comedy
and romance, and "not a romantic comedy" rules out what sets it apart (romance), not
comedy. Intensity ("gory", "violent") is no genre: "scary but not too gory" still asks
for horror; an item's gore or violence is read from its title and plot.
"""

from __future__ import annotations

import re
from functools import lru_cache

from arena.catalogs.catalog import CatalogItem
from arena.titles.phrases import FUNCTION_WORDS, normalize

GENRE_WORDS = {
    "horror": "horror",
    "horrors": "horror",
    "scary": "horror",
    "slasher": "horror",
    "slashers": "horror",
    "war": "war",
    "crime": "crime",
    "thriller": "thriller",
    "thrillers": "thriller",
    "romance": "romance",
    "romantic": "romance",
    "romances": "romance",
    "comedy": "comedy",
    "comedies": "comedy",
    "funny": "comedy",
    "funnier": "comedy",
    "action": "action",
    "drama": "drama",
    "dramas": "drama",
    "dramatic": "drama",
    "sad": "drama",  # "any sad movies?": a tearjerker is a drama
    "tearjerker": "drama",
    "tearjerkers": "drama",
    "documentary": "documentary",
    "documentaries": "documentary",
    "musical": "musical",
    "musicals": "musical",
    "western": "western",
    "westerns": "western",
    "animated": "animation",
    "animation": "animation",
    "cartoon": "animation",
    "cartoons": "animation",
    "fantasy": "fantasy",
    "mystery": "mystery",
    "mysteries": "mystery",
    "sci-fi": "sci fi",
    "scifi": "sci fi",
    "science fiction": "science fiction",
    "sports": "sport",
    "sport": "sport",
    "sitcom": "sitcom",
    "sitcoms": "sitcom",
    "historical": "history",
    "history": "history",
    "biography": "biography",
    "biographies": "biography",
    "biopic": "biography",
    "biopics": "biography",
    "anime": "animation",
    "ww2": "war",
    "wwii": "war",
    "ww1": "war",
    "wwi": "war",
    # Every genre the catalogs list is a genre word (the closed vocabulary), with its plural and adjective.
    "adventure": "adventure",
    "adventures": "adventure",
    "adventurous": "adventure",
    "film noir": "film noir",
    "film-noir": "film noir",
    "noir": "film noir",
}
# A genre said as an adjective with no noun after it ("Romantic?", "something funnier") qualifies the
# request in force, so it adds its genre; a noun ("a romance", "comedies") asks for that genre instead.
GENRE_ADJECTIVES = frozenset({"romantic", "funny", "funnier", "scary", "dramatic", "sad", "adventurous",
                              "animated",
                              "historical"})
# Where a film comes from, said as a nationality or region ("a British comedy", "asian cinema"), and the
# words of a catalog record (languages, genres, plot) that bear it out. English is no sign of Britain.
ORIGINS = {
    "britain": ("british", "united kingdom", "england", "scotland", "scottish", "wales", "welsh", "britain"),
    "italy": ("italian", "italy"),
    "france": ("french", "france"),
    "spain": ("spanish", "spain"),
    "germany": ("german", "germany"),
    "japan": ("japanese", "japan", "anime"),
    "korea": ("korean", "korea"),
    "china": ("chinese", "china", "mandarin", "cantonese", "hong kong"),
    "india": ("indian", "india", "hindi", "bollywood"),
    "asia": ("asian", "asia", "japanese", "japan", "korean", "korea", "chinese", "china", "mandarin",
             "cantonese", "hong kong", "hindi", "bollywood", "indian", "india", "thai", "thailand",
             "vietnamese"),
}
ORIGIN_WORDS = {"british": "britain", "italian": "italy", "french": "france",
                "spanish": "spain", "german": "germany", "japanese": "japan", "korean": "korea",
                "chinese": "china", "indian": "india", "bollywood": "india", "asian": "asia"}
# A nationality counts as an origin before a kind or genre word ("Italian movie", "british comedy films",
# "asian cinema"), not in "an English teacher" or "French Kiss" (titles are cut out before reading).
ORIGIN_WORD = re.compile(r"\b(" + "|".join(ORIGIN_WORDS) + r")\s+(?=(\w+\s+)?(movies?|films?|cinema|"
                         r"comed(y|ies)|dramas?|thrillers?|horrors?|animations?|ones?|stuff|flicks?|classics?)\b)",
                         re.IGNORECASE)
_ORIGIN_RECORD = {origin: re.compile(r"\b(" + "|".join(map(re.escape, words)) + r")\b", re.IGNORECASE)
                  for origin, words in ORIGINS.items()}


def from_origin(item: CatalogItem, origin: str) -> bool:
    """Whether the item's languages, genres or plot bear out where it comes from."""
    record = " ".join([*item.languages, *item.genres, item.plot])
    return bool(_ORIGIN_RECORD[origin].search(record))


# "live action" is a style (not animated), never the action genre.
LIVE_ACTION = re.compile(r"\blive[- ]action\b", re.IGNORECASE)
# Words for a kind within a genre: asked for, they ask for the genre ("a slasher" is horror);
# ruled out, they rule out only themselves, read from plots ("tired of slashers" keeps horror).
SUB_GENRES = {  # single words, matched by stem in titles, plots and genre names
    "slasher": ("slasher", "slashers"),
    "gangster": ("gangster", "mobster", "mafia", "mob"),
    "mafia": ("mafia", "mobster", "gangster", "mob"),
}
SUB_GENRE_WORD = re.compile(r"(slasher|gangster|mafia)s?\b", re.IGNORECASE)
# A genre added to those asked before, not in their place: "a bit more romantic", "any with some comedy
# thrown in?", "funny too".
ADDED_GENRE_BEFORE = re.compile(r"\b(a (little|bit|touch|dash) (more|of)|bit more|little more|also|plus|"
                                r"with (some|a bit of|a little|a touch of|a dash of))\s+$", re.IGNORECASE)
ADDED_GENRE_AFTER = re.compile(r"\w+\s+(thrown in|mixed in|too|as well)\b", re.IGNORECASE)
# Compound genres: the words, the genres they name, and what a negation of them rules out.
COMPOUNDS = (
    (
        re.compile(r"\b(romantic comed(y|ies)|rom-?coms?|rom coms?)\b", re.I),
        ("comedy", "romance"),
        ("romance",),
    ),
    (re.compile(r"\b(crime thrillers?)\b", re.I), ("crime", "thriller"), ("crime", "thriller")),
    (re.compile(r"\b(music documentar(y|ies))\b", re.I), ("documentary", "music"), ("music",)),
    # Music as what the item is made of ("music based videos", "a film based on music", "music videos"):
    # the music genre; the medium words and "based" are no topic (`arena.reading.subjects`).
    (re.compile(r"\b(music[- ]based|based (on|around) music|about music|music (videos?|clips?|films?|"
                r"movies?|shows?|ones?|flicks?))\b", re.I), ("music",), ("music",)),
    # A setting before "adventure" names the subject, not the adventure genre: "a space adventure" is
    # read for its setting ("space"), as before adventure was a genre word.
    (re.compile(r"\b((space|outer space|sci-?fi) adventures?)\b", re.I), (), ()),
)
GENRE_ALIASES = {"sci fi": ("sci fi", "science fiction"), "science fiction": ("sci fi", "science fiction"),
                 "horror": ("horror", "slasher"), "thriller": ("thriller", "suspense"),
                 "history": ("history", "historical"), "biography": ("biography", "biographical"),
                 "romance": ("romance", "romantic")}
GENRE_WORD = re.compile(
    r"\b(" + "|".join(sorted(map(re.escape, GENRE_WORDS), key=len, reverse=True)) + r")\b", re.IGNORECASE
)
CHILD_UNSAFE = ("horror", "crime", "thriller", "war")
CHILD_FRIENDLY = ("family", "animation", "children")  # "children": OpenDialKG's "Children's literature"
HEAVY_GENRES = ("horror", "thriller", "crime", "war")  # what "something lighter" moves away from

# Intensity: the words for it in a message, and the words of a title or plot that bear it out.
INTENSITY_WORDS = {"gory": "gore", "gore": "gore", "bloody": "gore", "violent": "violence",
                   "violence": "violence", "brutal": "violence", "graphic": "gore"}
INTENSITY_WORD = re.compile(r"\b(" + "|".join(INTENSITY_WORDS) + r")\b", re.IGNORECASE)
INTENSITY_IN_ITEM = {
    "gore": re.compile(
        r"\b(gore|gory|slasher|massacre|chainsaw|tortur\w*|cannibal\w*|butcher\w*|dismember\w*|"
        r"bloodbath|bloody)\b",
        re.I,
    ),
    "violence": re.compile(
        r"\b(violent|violence|killers?|murder(s|ed|er|ers|ous)?|massacre|slaughter\w*|brutal\w*|"
        r"serial|assassins?|hitman|gangs?|gangsters?|revenge|vengeance|torture\w*|chainsaw|"
        r"bloodbath|bloody|rampage)\b",
        re.I,
    ),
}
# "Something lighter", "tamer", "less violent", "too violent", "a bit heavy": away from the intensity shown.
LIGHTER = re.compile(
    r"\b(lighter|tamer|less (violent|dark|scary|intense|gory|heavy|depressing)|too (violent|dark|heavy|"
    r"intense|gory|"
    r"scary|brutal|depressing|bleak|grim)|(bit|little|too|very|quite|so) heavy|more (light|cheerful|upbeat|"
    r"fun)|light-?hearted|feel-?good|happier|cheerful|upbeat|heart-?warming|cozy|cosy|wholesome|uplifting|"
    r"not so (dark|heavy|violent|intense))\b",
    re.I,
)

# Moods and what a film shows, said instead of a genre: the genres they ask for (one of them is
# enough) and the genres they rule out when negated. "Something creepy, but I can't stand horror" asks
# for a thriller or a mystery; "nothing with lasers and big explosions" rules out action.
MOODS = (
    (
        re.compile(r"\b(creep(y|ier)|spook(y|ier)|eerie|unsettling|chilling|sinister|disturbing)\b", re.I),
        ("thriller", "mystery", "horror"),
        ("horror",),
    ),
    (
        re.compile(
            r"\b(explosions?|explosive|shoot-?outs?|gun ?fights?|car chases?|fight scenes?|lasers?|"
            r"blow(ing)? (things|stuff) up)\b",
            re.I,
        ),
        ("action",),
        ("action",),
    ),
    (
        re.compile(r"\b(laughs?|laugh out loud|hilarious|make (me|us|them|her|him) laugh)\b", re.I),
        ("comedy",),
        ("comedy",),
    ),
    (re.compile(r"\b(cheer (me|us|her|him|them) up|pick-?me-?up)\b", re.I), ("comedy",), ()),
    (re.compile(r"\b(tear-?jerkers?|weepies|make (me|us) cry|a good cry)\b", re.I), ("drama", "romance"), ()),
    (
        re.compile(r"\b(love stor(y|ies)|love interests?|kissing|smooch\w*)\b", re.I),
        ("romance",),
        ("romance",),
    ),
)

KINDS = (("book", re.compile(r"\b(books?|novels?|read|reading)\b", re.IGNORECASE)),
         ("series", re.compile(r"\b(tv|series|shows?|sitcoms?)\b", re.IGNORECASE)),
         ("film", re.compile(r"\b(movies?|films?|flicks?|watch)\b", re.IGNORECASE)))
# Kind words that do not name what is asked for: "films made from his books", "a film rather than a book".
KIND_ASIDE = re.compile(
    r"\b((made|based|adapted) (from|on) (\w+ )?(books?|novels?)|(than|instead of|not) (an? )?"
    r"(books?|novels?|films?|movies?|series|tv shows?|shows?))\b",
    re.I,
)


def has_genre(item: CatalogItem, genre: str) -> bool:
    """Whether one of the item's catalog genres is `genre` ("horror" matches "Slasher" too)."""
    wanted = GENRE_ALIASES.get(genre, (genre,))
    return any(f" {w} " in padded_words(name) for name in item.genres for w in wanted)


@lru_cache(maxsize=8192)
def padded_words(genre_name: str) -> str:
    """" sci fi ": a genre name's words, normalised once (a catalog has a few hundred names)."""
    return f" {normalize(genre_name)} "


def child_friendly(item: CatalogItem) -> bool:
    """A children's genre, no genre unfit for a child, and no gore or violence in the title or plot (the
    catalogs hold no age ratings: an animated war story or a family film about a killer is no pick)."""
    return (
        any(has_genre(item, g) for g in CHILD_FRIENDLY)
        and not any(has_genre(item, g) for g in CHILD_UNSAFE)
        and not intensity_of(item)
    )


def intensity_of(item: CatalogItem) -> frozenset[str]:
    """The intensities ("gore", "violence") the item's title and plot bear out."""
    return _intensity(item.title, item.plot)


@lru_cache(maxsize=16384)
def _intensity(title: str, plot: str) -> frozenset[str]:
    text = f"{title} {plot}"
    return frozenset(name for name, pattern in INTENSITY_IN_ITEM.items() if pattern.search(text))


def genre_label(name: str) -> str:
    """A catalog genre as words: "Family (Film genre) #395" -> "Family", "Revenge (Film subject)" ->
    "Revenge"."""
    label = re.sub(r"\s*#\d+\s*$", "", name)
    label = re.sub(r"\s*\((film|tv|book|music|media|literary)? ?(genre|subject)\)\s*$", "", label, flags=re.I)
    return label.strip() or name


# Words of a request that say nothing about the item wanted ("can you recommend a movie").
REQUEST_WORDS = frozenset(
    """recommend recommendation recommendations suggest suggestion suggestions movie movies film films
    watch watching watched see seen saw like liked likes love loved good great nice best really want
    wanted looking look something anything any some maybe please thanks thank hi hello hey ok okay
    yes yeah sure know think kind sort type mood feel feeling would could can might also one ones
    show shows book books get got well lot lots much enjoy enjoyed favorite favourite
    list lists top greatest highest ranked ranking ever five ten twenty 10 20 25 50 100
    classic classics nostalgic tonight today tomorrow weekend evening""".split()
)
# The next to last line: words that frame a ranked request ("top 10 best ...", "a list of ..."), no content;
# the last: "a classic" asks for a well-known film, which popularity says, not a plot holding "classic";
# "tonight" says when to watch, not what (it brought The Interview's "Skylark Tonight").
# The ranker's stopwords (`crs.recommender.signals`) and the policy's reading share these, in this light
# module: the policy must not load the ranker's scientific libraries when it reads a message.


_SAY_NOTHING = FUNCTION_WORDS | REQUEST_WORDS | {"am", "im", "need", "there"}


def says_what_is_wanted(text: str) -> bool:
    """Whether a user text holds a word that says something of the item wanted: "Yes I am looking for
    a" (its genre read as a filter) holds none, and embedded or matched it would only bring lookalikes
    of "yes" (Yes Man)."""
    return any(word not in _SAY_NOTHING for word in normalize(text).split())
