"""The compact rows leaderboards are computed from (table `board_dialogues`, the `votes` columns).

Every save of a dialogue writes its row in the same transaction
(`Store._put_dialogue`): its system, audience, user, crowd, whether it was a
battle's, whether a system failed a turn, its user turns, its label (with
whether the label was flagged and when it was given), its style (mean
characters and items per system reply), how many aspect ratings it holds and,
once it has a label (a verdict or aspect ratings), that label's order within
the participant's session (`arena.store.session_order`).
A board then reads a few numbers per dialogue and vote instead of parsing
every dialogue whole; the metric tables beside it read the `scores` rows and
only the dialogues with aspect ratings whole. Dialogues stored before these
rows existed get theirs at the next read (`board_rows`).

`BoardRowsStore` is a part of `arena.store.Store`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Optional, cast

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from arena.dialogue import Dialogue
from arena.store import schema as t
from arena.store.part import StorePart
from arena.store.session_order import LABEL_ORDER_SCOPE, next_order
from arena.store.statements import upsert, utc_key
from arena.crowd.study import STUDY_KEY, crowd_of_metadata

# Metadata key of a dialogue whose satisfaction label is flagged; its value says why (`arena.crowd.counting`
# re-exports it: the store writes it into the compact rows, so it is defined below the store).
LABEL_FLAG = "label_flag"
BOARD_SCORES = ("rdl", "core.overall")  # the automatic scores a board averages
DIALOGUE_FIELDS = (
    "dialogue_id",
    "crs_id",
    "user_kind",
    "user_id",
    "crowd",
    "in_battle",
    "failed",
    "num_turns",
    "sentiment",
    "label_flagged",
    "label_at",
    "reply_length",
    "items_shown",
    "aspect_ratings",
    "label_order",
    "rdl",
    "core",
)
VOTE_FIELDS = (
    "vote_id",
    "crs_a",
    "crs_b",
    "choice",
    "dialogue_a",
    "dialogue_b",
    "user_kind",
    "user_id",
    "study",
    "session_order",
)


def dialogue_style(d: Dialogue) -> tuple[float, float]:
    """(mean characters per system reply, mean items shown per system reply)."""
    replies = d.agent_turns()
    if not replies:
        return 0.0, 0.0
    return (
        sum(len(u.text) for u in replies) / len(replies),
        sum(len(u.items) for u in replies) / len(replies),
    )


def board_row(d: Dialogue) -> dict[str, Any]:
    """The dialogue's `board_dialogues` row."""
    length, items = dialogue_style(d)
    return {
        "dialogue_id": d.dialogue_id,
        "crs_id": d.crs_id,
        "user_kind": d.user.kind.value,
        "user_id": d.user.id,
        "crowd": crowd_of_metadata(d.metadata) if (d.metadata or {}).get(STUDY_KEY) else None,
        "in_battle": int(d.in_battle),
        "failed": int(d.system_failed()),
        "num_turns": d.num_turns,
        "sentiment": d.feedback.sentiment if d.feedback else None,
        "label_flagged": int(bool(d.metadata.get(LABEL_FLAG))),
        "label_at": utc_key(d.feedback.timestamp) if d.feedback else None,
        "reply_length": float(length),
        "items_shown": float(items),
        "aspect_ratings": len(d.ratings) + sum(len(u.ratings) for u in d.utterances),
        "label_order": None,  # assigned when stored (`BoardRowsStore._put_board_row`)
    }


@dataclass(frozen=True)
class BoardRows:
    """Everything the boards need, read in one snapshot: tuples in the order of `DIALOGUE_FIELDS` and
    `VOTE_FIELDS` (votes in the order they were cast), hidden dialogue ids, flagged votes (id -> reason)."""

    dialogues: list[tuple]
    votes: list[tuple]
    hidden: frozenset[str]
    flags: dict[str, str]


def _label_time(d: Dialogue) -> tuple[str, str, str]:
    return (utc_key(d.feedback.timestamp) if d.feedback else "~", utc_key(d.created_at), d.dialogue_id)


def label_orders_of(rows: BoardRows) -> dict[str, int]:
    """dialogue id -> its label's order within its participant's session, from the compact rows."""
    at = DIALOGUE_FIELDS.index("label_order")
    return {r[0]: int(r[at]) for r in rows.dialogues if r[at] is not None}


def _fetch_all(conn: Connection, query: Any) -> list[tuple]:
    """All rows of `query` through the driver's own cursor: SQLAlchemy's row objects would cost more than
    the query itself for a few hundred thousand small rows. Runs in `conn`'s transaction (its snapshot)."""
    sql = str(query.compile(dialect=conn.dialect, compile_kwargs={"literal_binds": True}))
    cursor = conn.connection.cursor()  # the driver's own cursor, through the pool's connection
    try:
        cursor.execute(sql)
        return cast(list[tuple], cursor.fetchall())  # a list from both drivers (sqlite3, psycopg)
    finally:
        cursor.close()


class BoardRowsStore(StorePart):
    """The compact rows of `arena.store.Store` (`board_rows`, `board_version`)."""

    def _put_board_row(self, conn: Connection, d: Dialogue) -> None:
        row = board_row(d)
        if row["sentiment"] is not None or row["aspect_ratings"]:  # a label: numbered in its session
            row["label_order"] = next_order(
                conn, self._lock_keys, scope=LABEL_ORDER_SCOPE, table=t.board_dialogues, key="dialogue_id",
                key_value=d.dialogue_id, user_id=d.user.id, column="label_order")
        upsert(conn, t.board_dialogues, row, ["dialogue_id"])

    def _fill_missing_board_rows(self) -> int:
        """Write the rows of dialogues stored without one (before revision 0008, or emptied by 0009); how
        many."""
        missing = (sa.select(t.dialogues.c.data)
                   .where(~sa.exists().where(t.board_dialogues.c.dialogue_id == t.dialogues.c.dialogue_id)))
        with self.read() as conn:
            first = conn.execute(missing.limit(1)).first()
        if first is None:
            return 0
        with self.write() as conn:
            data = conn.execute(missing).scalars().all()
            # In the order the labels were given, so that each participant's labels are numbered by time.
            for d in sorted((Dialogue.model_validate_json(text) for text in data), key=_label_time):
                self._put_board_row(conn, d)
        return len(data)

    def board_rows(self) -> BoardRows:
        """The compact rows of every dialogue and vote, hidden dialogues and flags, from one snapshot."""
        self._fill_missing_board_rows()
        b, v = t.board_dialogues.c, t.votes.c
        rdl, core = t.scores.alias("rdl"), t.scores.alias("core")
        dialogue_query = sa.select(
            *[getattr(b, f) for f in DIALOGUE_FIELDS[:-2]], rdl.c.value, core.c.value
        ).select_from(
            t.board_dialogues.outerjoin(
                rdl, sa.and_(rdl.c.dialogue_id == b.dialogue_id, rdl.c.metric == BOARD_SCORES[0])
            ).outerjoin(core, sa.and_(core.c.dialogue_id == b.dialogue_id, core.c.metric == BOARD_SCORES[1]))
        )
        vote_query = sa.select(*[getattr(v, f) for f in VOTE_FIELDS]).order_by(v.created_at, v.vote_id)
        with self.read() as conn:
            dialogues = _fetch_all(conn, dialogue_query)
            votes = _fetch_all(conn, vote_query)
            hidden = frozenset(conn.execute(sa.select(t.hidden_dialogues.c.dialogue_id)).scalars())
            flags = {
                r[0]: r[1] for r in conn.execute(sa.select(t.vote_flags.c.vote_id, t.vote_flags.c.reason))
            }
        return BoardRows(dialogues, votes, hidden, flags)

    def board_scores(self) -> list[tuple[str, str, Optional[float]]]:
        """(dialogue id, metric, value: None when unscored) of every stored score, from the `scores` rows
        alone (no details, no dialogue), for the metric tables beside the boards."""
        s = t.scores.c
        with self.read() as conn:
            return _fetch_all(conn, sa.select(s.dialogue_id, s.metric, s.value))

    def board_documents(self, ids: Iterable[str]) -> dict[str, Dialogue]:
        """The named dialogues whole, with their scores (id -> Dialogue; ids not stored are left out): the few
        a board's side tables need whole (those with aspect ratings)."""
        ids, out = sorted(set(ids)), {}
        with self.read() as conn:
            for start in range(0, len(ids), 500):
                chunk = ids[start:start + 500]
                rows = conn.execute(sa.select(t.dialogues.c.dialogue_id, t.dialogues.c.data)
                                    .where(t.dialogues.c.dialogue_id.in_(chunk))).all()
                scores = self._scores_for(conn, [r[0] for r in rows])
                for dialogue_id, data in rows:
                    d = Dialogue.model_validate_json(data)
                    d.scores = scores.get(dialogue_id, {})
                    out[dialogue_id] = d
        return out

    def board_version(self) -> tuple:
        """Changes whenever anything a board counts may have changed (a few aggregate reads, no scan of
        documents): dialogues saved, votes cast, scores, flags, hidden dialogues."""
        def scalar(*columns: Any, table: sa.Table) -> Any:
            return sa.select(*columns).select_from(table).scalar_subquery()

        count = sa.func.count
        with self.read() as conn:
            return tuple(
                conn.execute(
                    sa.select(
                        scalar(count(), table=t.dialogues),
                        scalar(sa.func.max(t.dialogues.c.updated_at), table=t.dialogues),
                        scalar(count(), table=t.votes),
                        scalar(count(), table=t.scores),
                        scalar(sa.func.max(t.scores.c.scored_at), table=t.scores),
                        scalar(count(), table=t.vote_flags),
                        scalar(sa.func.max(t.vote_flags.c.flagged_at), table=t.vote_flags),
                        scalar(count(), table=t.hidden_dialogues),
                        scalar(sa.func.max(t.hidden_dialogues.c.hidden_at), table=t.hidden_dialogues),
                    )
                ).one()
            )
