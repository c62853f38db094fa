"""The compact rows a board is ranked from: one per dialogue and one per vote, as arrays.

A board needs, per dialogue, its system, whether it was used, its counted
label, its two automatic scores, its style (mean reply length, mean items
shown) and whether a system failed a turn; per vote, its two systems, the
choice, its two dialogues, who voted and the vote's order within their
session. The background job reads these rows from the store's
`board_dialogues` table and the `votes` columns (`arena.store.board_rows`)
without parsing a dialogue; `from_objects` makes the same rows from
`Dialogue` and `Vote` objects, so a board computed from a list of dialogues
and one computed by the job run the same code (`webapp.leaderboard.ranking`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import pandas as pd

from arena.dialogue import Dialogue, Vote
from webapp.leaderboard.style_control import dialogue_style
from webapp.leaderboard.vote_counting import NO_SESSION_IDS

DIALOGUE_COLUMNS = ["dialogue_id", "crs_id", "num_turns", "rated", "satisfied", "rdl", "core", "reply_length",
                    "items_shown", "failed"]
VOTE_COLUMNS = ["vote_id", "crs_a", "crs_b", "choice", "dialogue_a", "dialogue_b", "user_id", "session_order"]


@dataclass(frozen=True)
class BoardData:
    """`dialogues`: `DIALOGUE_COLUMNS` (`rated`: its label counts; `satisfied` only where rated; scores NaN when
    missing); `votes`: `VOTE_COLUMNS`, in the order they were cast."""

    dialogues: pd.DataFrame
    votes: pd.DataFrame

    @classmethod
    def from_objects(cls, dialogues: Iterable[Dialogue], votes: Iterable[Vote]) -> "BoardData":
        rows = []
        for d in dialogues:
            rdl, core = d.scores.get("rdl"), d.scores.get("core.overall")
            length, items = dialogue_style(d)
            rated = d.feedback is not None
            rows.append((d.dialogue_id, d.crs_id, d.num_turns, rated,
                         rated and d.feedback.sentiment == "satisfied",
                         rdl.value if rdl is not None and rdl.value is not None else float("nan"),
                         core.value if core is not None and core.value is not None else float("nan"),
                         length, items, d.system_failed()))
        votes = list(votes)
        if all(v.timestamp is not None for v in votes):
            votes = sorted(votes, key=lambda v: v.timestamp)  # stable: equal times keep input order
        orders = session_orders(votes)
        return cls(pd.DataFrame(rows, columns=DIALOGUE_COLUMNS),
                   pd.DataFrame([(v.vote_id, v.crs_a, v.crs_b, v.choice, v.dialogue_a, v.dialogue_b,
                                  v.user_id, orders.get(v.vote_id)) for v in votes], columns=VOTE_COLUMNS))


def session_orders(votes: list[Vote]) -> dict[str, int]:
    """vote id -> its order within its participant's session, for votes in cast order: the rule the store
    applies when it stores them (`arena.store.session_order`; pooled ids get none)."""
    seen: dict[str, int] = {}
    out = {}
    for v in votes:
        if v.user_id not in NO_SESSION_IDS:
            seen[v.user_id] = out[v.vote_id] = seen.get(v.user_id, 0) + 1
    return out
