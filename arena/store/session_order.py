"""Each vote's and each label's order within its participant's session (1 for their first, 2 for the next...).

The order is assigned when the row is first stored, in the same transaction, under a lock on the
participant's `limit_keys` row (`Limits._lock_keys`): two app processes storing a vote of the same
participant at once take the lock one after the other, and the second reads the first's committed row
before counting, so no two rows of one participant ever share a number. The unique indexes
`votes_session_order` and `board_dialogues_label_order` (revision 0014) hold the same rule in the schema.
A row stored again (a re-save, a restore) keeps its number. Votes and dialogues of a pooled id (no session
known: "anonymous", empty) get no order: there is no session to count in.

Rows stored before revision 0014 got their order from their timestamps in the migration.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Optional

import sqlalchemy as sa
from sqlalchemy.engine import Connection

NO_SESSION_IDS = frozenset({"", "anonymous"})  # as `arena.crowd.rater_check.POOLED_IDS`
VOTE_ORDER_SCOPE = "session-order:vote"
LABEL_ORDER_SCOPE = "session-order:label"

Lock = Callable[[Connection, list[tuple[str, str]], float], Any]


def next_order(conn: Connection, lock: Lock, *, scope: str, table: sa.Table, key: str, key_value: str,
               user_id: Optional[str], column: str) -> Optional[int]:
    """The order of the row of `table` whose `key` is `key_value`: the one it already has, else one more than
    the participant's highest (None for a pooled id). Call inside the write transaction that stores it."""
    if user_id is None or user_id in NO_SESSION_IDS:
        return None
    order = table.c[column]
    kept = conn.execute(sa.select(order).where(table.c[key] == key_value)).first()
    if kept is not None and kept[0] is not None:
        return int(kept[0])
    lock(conn, [(scope, user_id)], time.time())
    highest = conn.execute(sa.select(sa.func.max(order)).where(table.c.user_id == user_id)).scalar_one()
    return int(highest or 0) + 1
