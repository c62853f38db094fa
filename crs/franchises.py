"""Which catalog entries belong to the same franchise as a title, read from the catalog once.

Two readings, for two uses:
- `variants`: the title and those sharing its title's stem ("Toy Story 2" for "Toy Story",
  "Batman Returns" for "Batman"): what a turn-down or a "seen it" leaves out;
- `franchise`: those, plus entries whose title holds the stem anywhere ("Rogue One: A Star Wars
  Story") and entries that share a franchise name with it: a name of two words in the plots of a
  few entries only, neither of which any plot writes in lower case ("Darth Vader", "Bruce Wayne",
  not "North Pole" or "Death Star"), or on OpenDialKG a rare graph tag that is also a word of some
  title ("Batman"). A request "like Star Wars" wants other films than the
  saga, and "not a Batman one" rules out Justice League, whose plot names Bruce Wayne.
A name held by many plots ("New York", "World War") is a place or a time, not a franchise.
A rare head word counts too: titles that open with the same word as the stem, when that word opens
few titles, is no everyday English word and no plot writes it in lower case ("Jurassic World" for
"Jurassic Park"; "Star" or "Back" open too many titles, "Wind" is an everyday word).
A shared word and shared leads count as well: a title that shares a word of its title with the item
(its first five letters) and its director or one of its first three stars ("Finding Dory" beside "Finding
Nemo", both Andrew Stanton's; "Monsters University" beside "Monsters, Inc.", both Billy Crystal's), for
sequels often change the title's head ("2 Fast 2 Furious").
"""

from __future__ import annotations

import re
from collections import defaultdict

from arena.catalogs.catalog import Catalog, CatalogItem, everyday_words
from arena.titles.phrases import FUNCTION_WORDS, normalize

_SEQUEL_MARK = re.compile(r"\s+(\d+|ii|iii|iv|v|vi|part \w+|chapter \w+|returns|begins|forever|reloaded|revolutions|"
                          r"\d+ ?d)$")
# A numbered sequel ("Jaws 2", "Jaws 3-D"): it makes a short one-word title a franchise of its own.
_NUMBERED = re.compile(r"^(\w{4}) (\d+|ii|iii|iv)( d)?$")
# Two capitalised words in a row: "Luke Skywalker", "Bruce Wayne" ("When The", "In New" are not names).
_NAME = re.compile(r"\b([A-Z][a-z][\w'-]+ [A-Z][a-z][\w'-]+)\b")
_LOWER_WORD = re.compile(r"\b[a-z][\w'-]+")
MAX_NAME_ENTRIES = 12  # a name in more plots than this is a place or a time ("New York")
MAX_HEAD_TITLES = 8  # a first word opening more titles than this names no one series ("Star", "Love")
LEAD_STARS = 3  # the stars a sequel keeps: the first few credited


def title_stems(item: CatalogItem) -> set[str]:
    """The first five letters of each word of four letters or more of the title, function words aside."""
    return {w[:5] for w in normalize(item.title).split() if len(w) >= 4 and w not in FUNCTION_WORDS}


def _leads(item: CatalogItem) -> set[str]:
    return set(item.people.get("director", ())) | set(item.people.get("star", ())[:LEAD_STARS])


def _title_head(item: CatalogItem) -> str:
    """The title before its subtitle, normalised: "Star Wars: The Last Jedi" -> "star wars"."""
    return normalize(re.split(r":| - | – ", item.title)[0])


def franchise_key(item: CatalogItem, short: frozenset[str] = frozenset()) -> str:
    """"Toy Story 2" -> "toy story", "Batman Returns" -> "batman"; "" when too short to tell, unless
    the key is one of `short` (four-letter titles with numbered sequels: "Jaws")."""
    title = re.sub(r"^(the|a|an) ", "", _title_head(item))
    while (shorter := _SEQUEL_MARK.sub("", title)) != title:
        title = shorter
    words = title.split()
    if len(words) > 2:
        words = words[:2]
    key = " ".join(words)
    return key if len(key) >= 5 or key in short else ""


class Franchises:
    def __init__(self, catalog: Catalog):
        self._by_key: dict[str, list[CatalogItem]] = {}
        self._titles: list[tuple[str, CatalogItem]] = []
        names: dict[str, set[str]] = defaultdict(set)
        title_words: set[str] = set()
        common: set[str] = set()  # words some plot writes in lower case: "north", "death", "prince"
        self._short = frozenset(m.group(1) for item in catalog
                                if (m := _NUMBERED.match(_title_head(item))))
        self._by_head: dict[str, list[CatalogItem]] = defaultdict(list)
        self._by_stem: dict[str, list[CatalogItem]] = defaultdict(list)
        for item in catalog:
            for word in title_stems(item):
                self._by_stem[word].append(item)
            key = franchise_key(item, self._short)
            if key:
                self._by_key.setdefault(key, []).append(item)
                self._by_head[key.split()[0]].append(item)
            title = f" {normalize(item.title)} "
            self._titles.append((title, item))
            title_words.update(title.split())
            common.update(w.lower() for w in _LOWER_WORD.findall(item.plot or ""))
            for name in _NAME.findall(item.plot or ""):
                if name.split()[0].lower() not in FUNCTION_WORDS:
                    names[name.lower()].add(item.item_id)
            if item.dataset == "opendialkg":  # graph tags: "Batman" is a franchise where a title bears it
                for tag in item.genres:
                    names["tag:" + tag.lower()].add(item.item_id)
        self._names = {
            name: ids for name, ids in names.items()
            if 2 <= len(ids) <= MAX_NAME_ENTRIES
            and (name[4:] in title_words if name.startswith("tag:") else not common & set(name.split()))
        }
        everyday = everyday_words()
        self._heads = frozenset(head for head, items in self._by_head.items()
                                if len(head) >= 5 and head not in FUNCTION_WORDS and head not in common
                                and head not in everyday and len({i.title for i in items}) <= MAX_HEAD_TITLES)
        self._names_of: dict[str, list[str]] = defaultdict(list)
        for name, ids in self._names.items():
            for item_id in ids:
                self._names_of[item_id].append(name)
        self._items = {item.item_id: item for item in catalog}
        # Each look-up scans every title: done once per item (and title, should two items share an id).
        self._variants: dict[tuple[str, str], tuple[CatalogItem, ...]] = {}
        self._franchise: dict[tuple[str, str], tuple[CatalogItem, ...]] = {}

    def key(self, item: CatalogItem) -> str:
        """The item's franchise key in this catalog ("jaws" too, for its numbered sequels)."""
        return franchise_key(item, self._short)

    def series(self, key: str) -> list[CatalogItem]:
        """The titles of the series a phrase names by its key ("matrix": The Matrix and its sequels);
        empty unless two or more titles share it."""
        key = normalize(key).removeprefix("the ").strip()
        out = list(self._by_key.get(key, ())) if key else []  # the whole key: "italian" is no "italian job"
        return out if len(out) >= 2 else []

    def variants(self, item: CatalogItem) -> list[CatalogItem]:
        """The item and the other titles of its title's stem ("Batman Returns" for "Batman")."""
        cache_key = (item.item_id, item.title)
        if cache_key not in self._variants:
            self._variants[cache_key] = tuple(self._read_variants(item))
        return list(self._variants[cache_key])

    def franchise(self, item: CatalogItem) -> list[CatalogItem]:
        """The variants, titles holding the stem anywhere, and entries sharing a franchise name with
        any of them."""
        cache_key = (item.item_id, item.title)
        if cache_key not in self._franchise:
            self._franchise[cache_key] = tuple(self._read_franchise(item))
        return list(self._franchise[cache_key])

    def _read_variants(self, item: CatalogItem) -> list[CatalogItem]:
        key = franchise_key(item, self._short)
        out = [item]
        if key:
            out += [other for k, others in self._by_key.items() if k == key or k.startswith(key + " ")
                    for other in others]
        return out

    def _read_franchise(self, item: CatalogItem) -> list[CatalogItem]:
        out = {i.item_id: i for i in self.variants(item)}
        key = franchise_key(item, self._short)
        if key and not set(key.split()) & FUNCTION_WORDS:  # "star wars", not "return of"
            for title, other in self._titles:
                if f" {key} " in title:
                    out.setdefault(other.item_id, other)
        head = key.split()[0] if key else ""
        if head in self._heads:  # "Jurassic World" beside "Jurassic Park"
            for other in self._by_head[head]:
                out.setdefault(other.item_id, other)
        leads = _leads(item)
        for word in title_stems(item) if leads else ():  # "Finding Dory": a title word and the same leads
            for other in self._by_stem[word]:
                if _leads(other) & leads:
                    out.setdefault(other.item_id, other)
        names = {name for member in out for name in self._names_of.get(member, ())}  # the saga's, not one film's
        for name in names:
            for item_id in self._names[name]:
                out.setdefault(item_id, self._items[item_id])
        return list(out.values())
