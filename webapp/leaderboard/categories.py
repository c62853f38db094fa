"""Category boards: the leaderboard of one slice of the data, as LMArena's category boards.

People and simulators are already kept apart (`arena.crowd.counting.Participants`);
these categories cut further, by the dataset a system was trained on and by
dialogue length. A battle belongs to a category only when both of its
conversations do, so a category's ratings compare like with like; the minimum
vote count then applies to the battles of that category alone.

The registry is one dictionary: a new cut is one `register(Category(...))`
with a test on a stored `Dialogue`, and the Leaderboard's picker lists it
under its group.

The crowd is a dimension of its own (`arena.crowd.counting.Participants`): the open arena, or one
crowdsourced study (`arena.crowd.study`), never mixed, so a study's results are
ranked on their own (researchers' Studies tab) and the public board shows the
open arena only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Optional

from arena.dialogue import Dialogue, Vote

# At most this many user turns makes a conversation "short".
SHORT_USER_TURNS = 3
ALL = "all"


@dataclass(frozen=True)
class Category:
    key: str  # stable id: in the page's picker and its API
    label: str  # what people read
    keep: Callable[[Dialogue], bool]  # whether a dialogue belongs to the slice
    group: str = ""  # the picker groups categories by this ("Dataset", "Dialogue length", ...)
    # The same test on a board's compact rows (a DataFrame with `crs_id` and `num_turns`, the user turns):
    # a boolean Series. The background boards use it (webapp.leaderboard.board_select).
    keep_rows: Optional[Callable[[Any], Any]] = None


CATEGORIES: dict[str, Category] = {}


def register(category: Category) -> Category:
    """Add a category (a key already taken is refused, so two cuts never share a name)."""
    if category.key in CATEGORIES:
        raise ValueError(f"category {category.key!r} is already registered")
    CATEGORIES[category.key] = category
    return category


def dataset_of(crs_id: str) -> str:
    """The dataset a system was trained on, from its id (`kbrd_redial` -> `redial`)."""
    return crs_id.rsplit("_", 1)[-1] if "_" in crs_id else ""


def _user_turns(d: Dialogue) -> int:
    return len(d.user_turns())


def _dataset_rows(name: str) -> Callable[[Any], Any]:
    def keep(rows: Any) -> Any:
        systems = rows["crs_id"]
        return systems.isin([s for s in set(systems) if dataset_of(s) == name])  # a few systems, many rows
    return keep


register(Category(ALL, "Everything", lambda d: True, keep_rows=lambda rows: rows["crs_id"].notna()))
register(Category("redial", "Systems trained on ReDial", lambda d: dataset_of(d.crs_id) == "redial", "Dataset",
                  _dataset_rows("redial")))
register(Category("opendialkg", "Systems trained on OpenDialKG", lambda d: dataset_of(d.crs_id) == "opendialkg",
                  "Dataset", _dataset_rows("opendialkg")))
register(Category("short", f"Conversations of at most {SHORT_USER_TURNS} user turns",
                  lambda d: _user_turns(d) <= SHORT_USER_TURNS, "Dialogue length",
                  lambda rows: rows["num_turns"] <= SHORT_USER_TURNS))
register(Category("long", f"Conversations of more than {SHORT_USER_TURNS} user turns",
                  lambda d: _user_turns(d) > SHORT_USER_TURNS, "Dialogue length",
                  lambda rows: rows["num_turns"] > SHORT_USER_TURNS))


def choices() -> list[tuple[str, str]]:
    """(text people read, key) for a picker: everything first, then each group's categories."""
    return [(f"{c.group}: {c.label}" if c.group else c.label, c.key) for c in CATEGORIES.values()]


def label_of(category: str) -> str:
    return CATEGORIES[category].label if category in CATEGORIES else category


def select(category: str, dialogues: Iterable[Dialogue], votes: Iterable[Vote]) -> tuple[list[Dialogue], list[Vote]]:
    """The dialogues of `category` and the votes whose two dialogues are both in it."""
    if category not in CATEGORIES:
        raise ValueError(f"unknown category {category!r}; one of {', '.join(CATEGORIES)}")
    dialogues, votes = list(dialogues), list(votes)
    if category == ALL:
        return dialogues, votes
    keep = CATEGORIES[category].keep
    kept = [d for d in dialogues if keep(d)]
    ids = {d.dialogue_id for d in kept}
    return kept, [v for v in votes if v.dialogue_a in ids and v.dialogue_b in ids]

