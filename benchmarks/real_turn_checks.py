"""Strict checks for the real-user conversations (`benchmarks/real_user_turns.py`).

The gold (`benchmarks/conversations/real_user_turns_v1.json`) says what a person reads in each
real message; these checks read a system's reply against it using the catalog record only:

- strict fit: every shown title fits every constraint so far. Whatever the record cannot show
  (no year, no plot, a liked title the catalog lacks) does not count as fitting;
- topics outside the vocabulary: a topic word in a reply's heading ("Here are some picks about
  white:") that is no catalog genre, person, title, year, a subject of the benchmark's own list or
  a phrase of its own table;
- closings answered with a list, unresolved references (the item asked about never named, a
  turned-down item shown again), answers what was asked, natural English.

The readings here are the benchmark's own and share no code with the systems' readers.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Optional

from arena.catalogs.catalog import CatalogItem
from arena.titles.phrases import normalize
from user_message_checks import (
    GENRE_NAMES, LACKS, LEFT_OUT, Turn, answers, child_friendly, contradicts_request, false_facts, kind_of,
    new_items, people_of, unnatural,
)

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"
SOURCES = {"crsarena_dial": SHARED / "crsarena_dial_texts" / "dialogues.json",
           "redial_valid": SHARED / "redial_dialogues" / "valid_data.jsonl"}

MORE_GENRE_NAMES = {"sport": ("sport", "sports"), "musical": ("musical",), "film-noir": ("film noir", "noir"),
                    "documentary": ("documentary",), "mystery": ("mystery", "whodunit")}
TRUE_STORY_GENRES = ("biography", "biographical", "documentary", "history", "historical")
TRUE_STORY_PLOT = re.compile(r"\b(true story|true stories|based on (a |the )?(true|real)|true events|"
                             r"real[- ]life|"
                             r"biopic|the life of|life story)\b", re.I)
ORIGINS = {  # explicit words of the record's languages, genres or plot for a country or region
    "uk": ("british", "united kingdom", "england", "english film", "scotland", "scottish", "welsh",
           "britain"),
    "italy": ("italian", "italy"),
    "asia": ("japanese", "japan", "korean", "korea", "chinese", "china", "mandarin", "cantonese", "hong kong",
             "hindi", "bollywood", "india", "indian", "thai", "thailand", "vietnamese", "indonesian", "tamil",
             "telugu", "taiwan", "anime", "wuxia"),
}
# Words a heading uses around its topic; never topics themselves.
HEADING_FRAME = set("""
here are is some a an few more other picks pick ideas suit might titles films film movies movie ones one
you your may
not have seen then about of and or with without from the for to in on by that this these those like similar
suitable children child kids family s also instead else different newer older recent classic classics
new old good great best top popular lesser known well less obscure i d think enjoy would could try
starring directed written featuring set what if how but sure ok okay let me show shows series tv books
book novel novels reads picked list lists been some more sorry none there isn t no catalog find couldn
before after since until
""".split())
# The benchmark's own phrase table: moods, audiences, styles and subjects a heading may name.
# Phrases of several words count only whole ("black and white" is a style; "white" alone is not).
PHRASE_PHRASES = ("black and white", "time travel", "true story", "true stories", "based on a true story",
                  "real life", "feel good", "live action", "high school", "outer space", "world war ii",
                  "second world war", "first world war", "science fiction", "d day", "d day landings",
                  "world war", "date night", "girls night", "sea animals", "ancient egypt", "fairy tale",
                  "fairy tales", "coming of age", "martial arts", "film noir", "super hero", "super heroes")
PHRASES = set("""
funny lighter dark darker scary spooky creepy gory tense gripping romantic sad moving uplifting heartwarming
emotional exciting fun thrilling intense quirky clever smart thoughtful intelligent cerebral easy cosy cozy
wholesome silly silent foreign independent indie arthouse teens teen adults grown-ups animated cartoon
space sharks shark dinosaur dinosaurs war wars christmas holiday halloween zombies zombie vampires vampire
aliens alien robots robot superhero superheroes heroes spy spies agent agents heist mafia mob gangster
gangsters cars racing sports sport boxing football baseball basketball music dance college wedding musicals
sea ocean animals animal nature dogs dog cats cat horses horse ancient egypt archaeology history historical
western cowboys detective murder mystery mysteries crime courtroom prison disaster monster monsters magic
witches wizards dragons fantasy language languages gore violence violent brutality blood decade era earth
planet marvel disney pixar noir ww2 wwii sword swords sorcery italian french british english asian japanese
korean chinese indian spanish german european american civilization civilizations archeology
""".split())
_WORD = re.compile(r"[a-z0-9][a-z0-9'\-]*")


def resolve_texts(conversations: list[dict]) -> list[dict]:
    """Fill each turn's "user" text from the source dialogue the gold names (the texts stay in
    ../shared: the CRS Arena texts carry no licence to copy)."""
    cache: dict[str, dict] = {}
    for conversation in conversations:
        for turn in conversation["turns"]:
            if "user" in turn:
                continue
            source = turn["source"]
            texts = cache.get(source["corpus"]) or cache.setdefault(source["corpus"], _load(source["corpus"]))
            if source["dialogue"] not in texts:
                raise SystemExit(f"no dialogue {source['dialogue']} in {SOURCES[source['corpus']]}")
            turn["user"] = texts[source["dialogue"]][source["utterance"]]
    return conversations


def _load(corpus: str) -> dict[str, dict[int, str]]:
    path = SOURCES[corpus]
    if not path.is_file():
        raise SystemExit(f"the source texts are not at {path} (the shared data folder beside the checkout)")
    out: dict[str, dict[int, str]] = {}
    if corpus == "crsarena_dial":
        for dialogue in json.loads(path.read_text(encoding="utf-8")):
            turns = dialogue["conversation"]
            out[dialogue["conversation ID"]] = {i: t["utterance"] for i, t in enumerate(turns)}
        return out
    for line in path.read_text(encoding="utf-8").splitlines():
        dialogue = json.loads(line)
        mentions = dialogue["movieMentions"]

        def named(match: re.Match) -> str:
            return mentions.get(match.group(1)) or match.group(0)

        out[str(dialogue["conversationId"])] = {
            i: re.sub(r"@(\d+)", named, m["text"]).replace("  ", " ")
            for i, m in enumerate(dialogue["messages"])}
    return out


def genre_names(item: CatalogItem) -> list[str]:
    return [f" {normalize(g)} " for g in item.genres]


def has_genre(item: CatalogItem, genre: str) -> bool:
    wanted = GENRE_NAMES.get(genre) or MORE_GENRE_NAMES.get(genre) or (normalize(genre),)
    return any(f" {w} " in name for name in genre_names(item) for w in wanted)


SUFFIX = r"(s|es|'s|ing|ed|er|ers|ling|led)?"


def says(text: str, phrase: str, compound: bool = True) -> bool:
    """Whether `phrase` is in `text` as whole words (with an ending such as a plural or "-ing";
    hyphens read as spaces); a stem of 7 letters or more ("archaeolog", "communicat") also as the
    start of a word; a phrase of two words also with the words up to three apart in either order
    ("travels back in time" for "time travel"). `compound=False` refuses a word that starts a
    hyphenated compound ("Italian-American" is not "Italian")."""
    text, phrase = text.lower(), phrase.lower().replace("-", " ")
    flat = text.replace("-", " ")
    if not compound:
        return re.search(r"(?<![\w-])" + re.escape(phrase) + SUFFIX + r"(?![\w-])", text) is not None
    if re.search(r"(?<![\w])" + re.escape(phrase) + SUFFIX + r"(?![\w])", flat):
        return True
    if len(phrase) >= 7 and " " not in phrase and re.search(r"(?<![\w])" + re.escape(phrase), flat):
        return True
    words = phrase.split()
    if len(words) == 2:
        a, b = (re.escape(w) + SUFFIX for w in words)
        gap = r"(?:\W+\w+){0,3}\W+"
        return re.search(rf"(?<![\w]){a}{gap}{b}(?![\w])|(?<![\w]){b}{gap}{a}(?![\w])", flat) is not None
    return False


def item_text(item: CatalogItem) -> str:
    return " ".join([item.title.lower(), item.plot.lower(), " ".join(g.lower() for g in item.genres)])


def core_genres(item: CatalogItem) -> set[str]:
    """The item's genres as plain words ("Action Film" -> action), for "like <title>"."""
    words = set()
    for g in item.genres:
        name = normalize(g)
        for w in ("action", "adventure", "comedy", "drama", "horror", "thriller", "romance", "romantic",
                  "sci fi",
                  "science fiction", "fantasy", "crime", "mystery", "animation", "animated", "family", "war",
                  "western", "musical", "music", "documentary", "biography", "history", "historical", "sport",
                  "suspense", "superhero", "teen", "spy", "disaster", "martial arts", "noir"):
            if f" {w} " in f" {name} ":
                words.add({"romantic": "romance", "science fiction": "sci fi", "animated": "animation",
                           "historical": "history", "suspense": "thriller"}.get(w, w))
    return words


def lookalike(item: CatalogItem, liked: CatalogItem) -> bool:
    """Whether the item's title shares a word (or its first five letters) with the liked title:
    "The Pianist" for "like The Piano", or the liked title's own series, is no answer to "like"."""
    def stems(title: str) -> set[str]:
        return {w[:5] for w in normalize(title).split() if len(w) >= 4 and w not in LOOKALIKE_STOP}
    return bool(stems(item.title) & stems(liked.title))


LOOKALIKE_STOP = {"with", "from", "that", "this", "what", "when", "your", "movie", "story", "part", "chapter"}


def misfits(item: CatalogItem, c: dict, find_title) -> list[str]:
    """The constraints (gold keys) the item's catalog record does not show it meets; [] = fits."""
    out = []
    if c.get("genre") and not any(has_genre(item, g) for g in c["genre"]):
        out.append("genre")
    if c.get("genres_all") and not all(has_genre(item, g) for g in c["genres_all"]):
        out.append("genres_all")
    if any(has_genre(item, g) for g in c.get("not_genre", ())):
        out.append("not_genre")
    if c.get("subgenre") and not any(has_genre(item, g) or says(item.plot.lower(), g) for g in c["subgenre"]):
        out.append("subgenre")
    if c.get("era") and (item.year is None or not c["era"][0] <= item.year <= c["era"][1]):
        out.append("era")
    people = people_of(item)
    if c.get("person") and not all(p.lower() in people for p in c["person"]):
        out.append("person")
    if c.get("person_any") and not any(p.lower() in people for p in c["person_any"]):
        out.append("person_any")
    if any(p.lower() in people for p in c.get("not_person", ())):
        out.append("not_person")
    if c.get("kind") and kind_of(item) != c["kind"]:
        out.append("kind")
    if c.get("child") and not child_friendly(item):
        out.append("child")
    text = item_text(item)
    if c.get("topic") and not any(says(text, w) for w in c["topic"]):
        out.append("topic")
    if any(says(text, w) for w in c.get("not_words", ())):
        out.append("not_words")
    title = f" {normalize(item.title)} "
    if any(f" {normalize(t)} " in title for t in c.get("not_title", ())):
        out.append("not_title")
    for key, need in (("like", any), ("like_all", all)):
        liked = [i for i in (find_title(t) for t in c.get(key, ())) if i is not None]
        if not liked:
            continue
        if any(item == i or lookalike(item, i) for i in liked) or not need(
                bool(core_genres(item) & core_genres(i)) for i in liked):
            out.append(key)
    if c.get("true_story") and not (any(has_genre(item, g) for g in TRUE_STORY_GENRES)
                                    or TRUE_STORY_PLOT.search(item.plot)):
        out.append("true_story")
    for origin in c.get("origin", ()):
        record = " ".join([*(g.lower() for g in item.genres), *(lang.lower() for lang in item.languages),
                           item.plot.lower()])
        if not any(says(record, w, compound=False) for w in ORIGINS[origin]):
            out.append("origin")
    return out


@lru_cache(maxsize=4)
def vocabulary(catalog_path: str) -> tuple[frozenset[str], frozenset[str]]:
    """(every genre name of the catalog, whole; every full person name), normalised. A word of a
    longer genre name is no genre ("Extraterrestrial life" does not make "life" one)."""
    info = json.loads(Path(catalog_path).read_text(encoding="utf-8"))
    genre_words: set[str] = set()
    persons: set[str] = set()
    for entry in info.values():
        for value in entry.get("genre") or ():
            name = normalize(re.sub(r"#\d+|\(.*?\)", "", value)).strip()
            if name:
                genre_words.add(name)
        for role in ("director", "writer", "star", "actor"):
            persons.update(normalize(n) for n in entry.get(role) or () if len(n.split()) >= 2)
    return frozenset(genre_words), frozenset(persons)


def heading(text: str) -> str:
    """The sentence that introduces a list: the one ending just before the first "1."."""
    match = re.search(r"(^|\n)\s*1[.)]\s", text)
    if not match:
        return ""
    before = text[:match.start()].strip()
    return re.split(r"(?<=[.!?])\s+", before)[-1] if before else ""


def off_vocabulary(text: str, shown: list[str], named: list[str], catalog_path: str) -> list[str]:
    """Topic words of the reply's heading that neither the catalog (a genre word, a person's full
    name, the full title of an item shown, named or liked: one word of a title is no topic) nor the
    phrase table knows. A word of the user's own message is no excuse: "black and white" must not
    come back as "picks about white", nor a shown title's word ("White House Down") make it one."""
    genre_words, persons = vocabulary(catalog_path)
    h = f" {normalize(heading(text))} "
    phrases = {normalize(t) for t in shown + named if t} | set(PHRASE_PHRASES)
    phrases |= {g for g in genre_words if " " in g and g in h}
    for phrase in sorted(phrases, key=len, reverse=True):
        h = h.replace(f" {normalize(phrase)} ", " ")
    words = h.split()
    kept, i = [], 0
    while i < len(words):
        for n in (3, 2):
            if " ".join(words[i:i + n]) in persons:
                i += n
                break
        else:
            kept.append(words[i])
            i += 1
    unknown = []
    for w in kept:
        w = w.strip("'-")
        if not w or w[0].isdigit() or w in HEADING_FRAME or w in PHRASES or w in table_makers():
            continue
        if w in genre_words and w not in STOP_TOPICS:
            continue
        unknown.append(w)
    return unknown


@lru_cache(maxsize=1)
def table_makers() -> frozenset[str]:
    """The words of the studios and kinds the project's phrase table tells by credits ("pixar", "anime"):
    written down, so no misreading."""
    table = json.loads((ROOT / "assets" / "reading" / "phrase_table_v1.json").read_text(encoding="utf-8"))
    return frozenset(w for name in table.get("makers", {}) for w in normalize(name).split())


# Catalog words that are everyday words too: a heading built on them is a misreading, not a topic.
STOP_TOPICS = set("""
right plays play white black whole thing things something anything watch watching want tonight weekend
please thanks thank really quite just maybe perhaps kind sort type types bit lot lots long short first
second third last next number time day night today am is was be go get got give me my mine
""".split()) - PHRASES


def refers_by_name(text: str, item: Optional[CatalogItem]) -> bool:
    return item is not None and normalize(item.title) in normalize(text)


def pick_answer(turn: Turn, previous: list[CatalogItem]) -> str:
    """"Which would you pick?": one of the items shown before, named, and no new list."""
    named = [i for i in previous if refers_by_name(turn.text, i)]
    listed = [i for i in turn.items if i not in previous]
    if named and not listed and len(named) <= 2:
        return "yes"
    return "partly" if named else "no"


def answers_strict(turn: Turn, previous: list[CatalogItem], find_title) -> str:
    """yes / partly / no, strict: a list answers only when its first title fits every constraint."""
    spec = turn.spec
    aspect = spec.get("aspect")
    if spec["expect"] == "list":
        fitting = [not misfits(i, turn.constraints, find_title) for i in turn.items]
        if fitting and fitting[0] and not contradicts(turn):
            return "yes"
        return "partly" if any(fitting) else "no"
    if spec["expect"] == "answer" and aspect == "pick":
        return pick_answer(turn, previous)
    if spec["expect"] == "answer" and (turn.about is None or aspect in ("why", "opinion", "origin", "runtime",
                                                                         "setting")):
        # Asked about a title the catalog lacks, or for what the record holds only in part: the
        # item named (or the lack said plainly) and no new list.
        listed = bool(new_items(turn))
        named = refers_by_name(turn.text, turn.about) if turn.about else bool(LACKS.search(turn.text))
        if aspect == "why" and turn.about is not None:
            named = named and bool(set(core_genres(turn.about)) & set(_WORD.findall(normalize(turn.text)))
                                   or any(p.lower() in turn.text.lower() for p in people_of(turn.about)))
        return "yes" if named and not listed else "partly" if named or not listed else "no"
    return answers(turn)


def contradicts(turn: Turn) -> bool:
    """The shared check ("I'll leave those out" with nothing turned down, "picks without comedy"
    for a comedy), except that a user who restates what they ruled out earlier ("I already said I
    don't like romance") may be told it is left out."""
    if not contradicts_request(turn):
        return False
    ruled_out = any(k.startswith("not_") and v for k, v in turn.constraints.items())
    restated = ruled_out and not turn.spec.get("set")
    if not restated:
        return True
    plain = turn.text
    for match in LEFT_OUT.finditer(turn.text):
        if match.group(1).lower().startswith("leave"):
            plain = plain.replace(match.group(0), " ")
    return contradicts_request(Turn(turn.spec, turn.message, plain, turn.items, turn.constraints,
                                    turn.earlier, turn.rejected, turn.about, turn.named))


def unresolved(turn: Turn) -> Optional[bool]:
    """For a turn that refers to an item (a question about it, or turning it down): True when the
    reply does not name the item asked about, or shows a turned-down item again; None otherwise."""
    spec = turn.spec
    if spec.get("about") and spec["expect"] == "answer" and spec.get("aspect") != "pick":
        if turn.about is None:
            return None  # a title the catalog lacks: scored by answers
        return not refers_by_name(turn.text, turn.about)
    if spec.get("reject"):
        return any(i in turn.rejected for i in turn.items)
    return None


STACKED = re.compile(r"\b(here are|here is|here's)\b", re.I)
TAUTOLOGY = re.compile(r"\((\d{4})\) (is|was) from \1\b")


def unnatural_strict(turn: Turn) -> list[str]:
    """The shared natural-English checks plus what the issue saw: stacked openers, a heading of
    more than 12 words, "X (1998) is from 1998", "I'll leave those out" with nothing turned down."""
    problems = unnatural(turn)
    if len(STACKED.findall(turn.text.split("\n1.")[0])) >= 2:
        problems.append("stacked openers")
    if len(heading(turn.text).split()) > 12:
        problems.append("long heading")
    if TAUTOLOGY.search(turn.text):
        problems.append("year stated twice")
    if contradicts(turn) and "contradicts the request" not in problems:
        problems.append("contradicts the request")
    # What a spliced human turn gives away (CRB-CRS): a doubled title, a lower-case "i", small talk
    # nobody began, a pick the reply itself says it does not know.
    if DOUBLED.search(turn.text):
        problems.append("title said twice")
    if LOWER_I.search(turn.text):
        problems.append("lower-case i")
    if SMALL_TALK.search(turn.text) and not HOW_ARE_YOU.search(turn.message):
        problems.append("answers small talk nobody began")
    if turn.items and DISOWNS.search(turn.text):
        problems.append("disowns its own pick")
    if FILLER.search(turn.text):
        problems.append("chat filler")
    problems += badly_joined(turn.text)
    return problems


# How a reply made of pieces fails to read as one: read on the text as shown, titles ending in
# "(year)". A title is a noun, so what follows it must continue its sentence or start a new one
# after a stop.
_AFTER_TITLE = r"\(\d{4}\)\s+"
JOIN_FAULTS = (
    ("'who' after a title", re.compile(_AFTER_TITLE + r"who\b")),
    ("a question run on after a title",
     re.compile(_AFTER_TITLE + r"(would|did|do|does|have|has|how|what)\b")),
    ("a sentence run on after a title", re.compile(
        _AFTER_TITLE + r"(I|Is|Was|Or|And|that (is|was)|it (is|was)|[a-z]+ (movie|film) (is|was))\b")),
    ("praise with no verb after a title",
     re.compile(_AFTER_TITLE + r"(really|pretty|so|very) (good|great)\b")),
    ("two clauses run together", re.compile(
        r"\b(?!so\b|and\b|but\b|then\b|or\b|well\b)[a-z]+ (how|what) about\b|"
        r"\b(?!if\b|and\b|but\b|so\b|because\b|when\b|as\b|that\b|think\b|hope\b)[a-z]+ I "
        r"(really|also|just|like|love|loved|enjoy|enjoyed|think|would)\b")),
    ("trails off", re.compile(r"\w\.\.(?!\.)|\w\.\.\.|…")),
    ("pans its own pick", re.compile(r"\b(not the (greatest|best)|not as good as|thought not)\b", re.I)),
    ("closes while the conversation goes on", re.compile(
        r"\b(last|final) (recommendation|suggestion)\b|\bfor the day\b|\bhope (that )?I (gave|helped)\b",
        re.I)),
)
_YEAR_END = re.compile(r"\(\d{4}\)")


def badly_joined(text: str) -> list[str]:
    """What in a reply does not join: a title followed by a run-on, two clauses with no stop between,
    and a last title left hanging off a sentence about the one before ("A (1980) is a fav and B (2017)")."""
    found = [name for name, pattern in JOIN_FAULTS if pattern.search(text)]
    ends = [m.end() for m in _YEAR_END.finditer(text)]
    if len(ends) >= 2:
        between = text[ends[-2]:ends[-1]]
        tail = text[ends[-1]:].strip(" .!?")
        if not tail and re.match(r"\s+\w[\w' ,]*?\s(and|or)\s", between, re.I) and not re.match(
                r"\s*(,\s*)?(and|or)\b", between, re.I):
            found.append("a title left hanging")
    return found


FILLER = re.compile(r"\b(lol|haha+|ummm*|hmm+|lmao)\b|\bI think so\?", re.I)


DOUBLED = re.compile(r"(?<!\w)([A-Z][^()\n]{6,}?) and \1(?!\w)")
LOWER_I = re.compile(r"(^|[\s,.!?])i('m|'d|'ve|'ll)?\s", re.M)
SMALL_TALK = re.compile(r"\bI'?m (alright|fine|good|great|well|doing (well|good|great))\b", re.I)
HOW_ARE_YOU = re.compile(r"\bhow('s| is| are)? (are )?(you|u|it going|things|your day)\b", re.I)
DISOWNS = re.compile(r"\b(i don'?t know (that|this) one|ha(ve|s)n'?t seen (it|that|this)|"
                     r"have not seen (it|that|this)|not seen that one|have note seen)\b", re.I)
CLAIMS = {"funny": (re.compile(r"\b(funny|humou?rous|hilarious|comedy|comedic)\b", re.I), ("comedy",)),
          "scary": (re.compile(r"\b(scary|frightening|terrifying|horror)\b", re.I), ("horror", "thriller"))}


def false_facts_strict(turn: Turn, persons: frozenset[str], titles: frozenset[str]) -> list[str]:
    """The shared false-fact check, less a person or title the shown item's own plot names: "(Ryan
    Gosling)" in The Notebook's plot is a true credit the cast list lacks, and a plot quoted in
    the reply may name another film."""
    items = [*turn.items, *([turn.about] if turn.about else []), *turn.named]
    plots = " ".join(i.plot.lower() for i in items)
    found = [f for f in false_facts(turn, persons, titles)
             if not (f.split(" ", 1)[0] in ("person", "title") and f.split(" ", 1)[1].lower() in plots)]
    # A kind of film said of one shown title that its genres do not bear out ("The Notebook, a
    # humorous one"); only sentences that name a single shown title.
    for sentence in re.split(r"(?<=[.!?])\s+|\n", turn.text):
        named = [i for i in turn.items if i.title and i.title in sentence]
        quoted = sentence.strip().rstrip(".").strip()[-25:].lower()
        if len(named) != 1 or (len(quoted) >= 12 and quoted in plots):
            continue  # a sentence of a plot quoted in the reply is the catalog's, not a claim
        for claim, (pattern, genres) in CLAIMS.items():
            if pattern.search(sentence.replace(named[0].title, "")) and not any(
                    has_genre(named[0], g) for g in genres):
                found.append(f"calls {named[0].title} {claim}")
    return found
