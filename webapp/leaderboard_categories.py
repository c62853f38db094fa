"""Category boards: the leaderboard of one slice of the data, as LMArena's category boards.

People and simulators are already kept apart by `compute_leaderboard(user_kind=...)`;
these categories cut further, by the dataset a system was trained on and by
dialogue length. A battle belongs to a category only when both of its
conversations do, so a category's ratings compare like with like.

The crowd is a dimension of its own (`select_crowd`): the open arena, or one
crowdsourced study (`arena.study`), never mixed, so a study's results are
ranked on their own and the public board shows the open arena only.
"""

from __future__ import annotations

from typing import Callable, Collection, Iterable, Mapping, Optional

from arena.dialogue import Dialogue, Vote
from arena.study import crowd_of_dialogue, crowd_of_vote

# At most this many user turns makes a conversation "short".
SHORT_USER_TURNS = 3


def dataset_of(crs_id: str) -> str:
    """The dataset a system was trained on, from its id (`kbrd_redial` -> `redial`)."""
    return crs_id.rsplit("_", 1)[-1] if "_" in crs_id else ""


def _user_turns(d: Dialogue) -> int:
    return len(d.user_turns())


CATEGORIES: Mapping[str, tuple[str, Callable[[Dialogue], bool]]] = {
    "all": ("Everything", lambda d: True),
    "redial": ("Systems trained on ReDial", lambda d: dataset_of(d.crs_id) == "redial"),
    "opendialkg": ("Systems trained on OpenDialKG", lambda d: dataset_of(d.crs_id) == "opendialkg"),
    "short": (f"Conversations of at most {SHORT_USER_TURNS} user turns",
              lambda d: _user_turns(d) <= SHORT_USER_TURNS),
    "long": (f"Conversations of more than {SHORT_USER_TURNS} user turns",
             lambda d: _user_turns(d) > SHORT_USER_TURNS),
}


def select(category: str, dialogues: Iterable[Dialogue], votes: Iterable[Vote]) -> tuple[list[Dialogue], list[Vote]]:
    """The dialogues of `category` and the votes whose two dialogues are both in it."""
    if category not in CATEGORIES:
        raise ValueError(f"unknown category {category!r}; one of {', '.join(CATEGORIES)}")
    dialogues, votes = list(dialogues), list(votes)
    if category == "all":
        return dialogues, votes
    keep = CATEGORIES[category][1]
    kept = [d for d in dialogues if keep(d)]
    ids = {d.dialogue_id for d in kept}
    return kept, [v for v in votes if v.dialogue_a in ids and v.dialogue_b in ids]


def select_crowd(crowd: Optional[str], dialogues: Iterable[Dialogue], votes: Iterable[Vote], *,
                 left_out_users: Collection[str] = ()) -> tuple[list[Dialogue], list[Vote]]:
    """The dialogues and votes of one crowd ("open" or a study id; None: every crowd), without
    those of `left_out_users` (a study's flagged workers, by stored user id)."""
    dialogues = [d for d in dialogues if (crowd is None or crowd_of_dialogue(d) == crowd)
                 and d.user.id not in left_out_users]
    votes = [v for v in votes if (crowd is None or crowd_of_vote(v) == crowd) and v.user_id not in left_out_users]
    return dialogues, votes
