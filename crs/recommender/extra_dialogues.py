"""More training dialogues for the ReDial recommender than the iEvaLM files hold.

The iEvaLM ReDial training file has 930 dialogues; the IARD data set (the
project's copy is in `assets/iard/`) holds 259 more ReDial dialogues, annotated
with dialogue acts, whose utterances name films as ReDial writes them,
"Frozen (2013)". `iard_turns` turns each of them
into iEvaLM-style training turns: for every recommender utterance that names
catalog films, the utterances before it (user first, an empty user turn when the
recommender opened) and the films it names as targets.

`linked_item_sets` reads the other dataset's training dialogues (OpenDialKG's
for ReDial and back) as the sets of films each names, linked to this catalog by
normalised title and year; many OpenDialKG dialogues are about films.

Only IARD dialogues of ReDial's training range are read: ReDial numbers its test
conversations from `FIRST_TEST_ID` up, and a dialogue already in the iEvaLM
files (`skip_ids`) is read once.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable, Optional

from arena.catalogs.catalog import Catalog
from arena.corpus.loading import load_dialogues
from arena.dialogue import Dialogue, Role
from arena.titles.phrases import normalize
from crs.recommender.training import Turn, read_rows

FIRST_TEST_ID = 20001  # ReDial's test conversations are numbered from here up
_YEAR = re.compile(r"\((\d{4})\)")
MAX_TITLE_WORDS = 12


class TitleIndex:
    """Catalog items by normalised title and year, first in catalog order on a tie."""

    def __init__(self, catalog: Catalog):
        self.by_key: dict[tuple[str, Optional[int]], str] = {}
        by_title: dict[str, list[str]] = {}
        for item in catalog.items:
            self.by_key.setdefault((normalize(item.title), item.year), item.item_id)
            by_title.setdefault(normalize(item.title), []).append(item.item_id)
        self.only_one = {title: ids[0] for title, ids in by_title.items() if len(ids) == 1}

    def find(self, title: str, year: Optional[int]) -> Optional[str]:
        """The item of this title and year; without a year, the one item of that title."""
        key = normalize(title)
        if year is not None:
            return self.by_key.get((key, year))
        return self.only_one.get(key)

    def in_text(self, text: str) -> list[str]:
        """Items named "Title (Year)" in `text`, in order: the longest title ending at each year."""
        out = []
        for match in _YEAR.finditer(text):
            words = text[: match.start()].split()
            year = int(match.group(1))
            for length in range(min(MAX_TITLE_WORDS, len(words)), 0, -1):
                item_id = self.by_key.get((normalize(" ".join(words[-length:])), year))
                if item_id is not None:
                    out.append(item_id)
                    break
        return out


def _merged_utterances(dialogue: Dialogue) -> list[tuple[bool, str]]:
    """(from the user, text), consecutive utterances of one side joined."""
    merged: list[tuple[bool, str]] = []
    for utterance in dialogue.utterances:
        is_user, text = utterance.role == Role.USER, utterance.text.strip()
        if merged and merged[-1][0] == is_user:
            merged[-1] = (is_user, f"{merged[-1][1]} {text}".strip())
        else:
            merged.append((is_user, text))
    return merged


def iard_turns(path: Path, catalog: Catalog, skip_ids: set[str]) -> list[Turn]:
    """Training turns from the IARD ReDial dialogues at `path` (see the module docstring)."""
    titles = TitleIndex(catalog)
    turns = []
    for dialogue in load_dialogues(Path(path), default_crs_id="iard"):
        conversation_id = dialogue.dialogue_id
        if not conversation_id.isdigit() or int(conversation_id) >= FIRST_TEST_ID or conversation_id in skip_ids:
            continue
        utterances = _merged_utterances(dialogue)
        if utterances and not utterances[0][0]:
            utterances.insert(0, (True, ""))
        named: list[str] = []
        for index, (is_user, text) in enumerate(utterances):
            items = titles.in_text(text)
            if not is_user and items and index > 0:
                context = [t for _, t in utterances[:index]]
                turns.append(Turn(f"iard:{conversation_id}", context, list(dict.fromkeys(items)), list(named)))
            named.extend(i for i in items if i not in named)
    return turns


def linked_item_sets(paths: Iterable[Path], other: Catalog, catalog: Catalog) -> list[list[str]]:
    """Per dialogue of the iEvaLM files `paths` (turns over the catalog `other`), the items of
    `catalog` it names (linked by title and year), dialogues naming none left out."""
    titles = TitleIndex(catalog)
    other_by_name = {}
    for item in other.items:
        other_by_name.setdefault(item.name, item)
    linked: dict[str, str] = {}
    for name, item in other_by_name.items():
        found = titles.find(item.title, item.year)
        if found is not None:
            linked[name] = found
    sets: dict[str, set[str]] = {}
    for key, row in read_rows(paths):
        names = list(row.get("entity") or ()) + list(row.get("rec") or ())
        items = {linked[n] for n in names if n in linked}
        if items:
            sets.setdefault(key, set()).update(items)
    return [sorted(items) for _, items in sorted(sets.items())]
