"""Each vote and each label carries its order within the participant's session (`votes.session_order`,
`board_dialogues.label_order`; arena/store/session_order.py). Rows already stored are numbered here from
their timestamps: a participant's votes by the time they were cast, their labels by the time they were given
(a dialogue with aspect ratings but no verdict by the time it was created), equal times by id. Pooled ids
("anonymous", empty) get no number. Unique indexes keep two rows of one participant from sharing a number.

Revision ID: 0014
Revises: 0013
"""

from itertools import groupby
from typing import Any, Sequence

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None

POOLED_IDS = ("", "anonymous")
CHUNK = 1000


def _numbered(rows: Sequence[Any]) -> list[dict[str, Any]]:
    """(id, user id, ...) rows sorted by user and time -> {"id", "n"} with n counting from 1 per user."""
    out = []
    for _, group in groupby(rows, key=lambda r: r[1]):
        out += [{"id": r[0], "n": n} for n, r in enumerate(group, start=1)]
    return out


def _write(table: Any, key: str, column: str, values: list[dict[str, Any]]) -> None:
    conn = op.get_bind()
    statement = sa.update(table).where(table.c[key] == sa.bindparam("id")).values({column: sa.bindparam("n")})
    for start in range(0, len(values), CHUNK):
        conn.execute(statement, values[start:start + CHUNK])


def upgrade() -> None:
    op.add_column("votes", sa.Column("session_order", sa.Integer))
    op.add_column("board_dialogues", sa.Column("label_order", sa.Integer))
    conn = op.get_bind()
    votes = sa.table("votes", sa.column("vote_id", sa.Text), sa.column("user_id", sa.Text),
                     sa.column("created_at", sa.Text), sa.column("session_order", sa.Integer))
    rows = conn.execute(
        sa.select(votes.c.vote_id, votes.c.user_id)
        .where(votes.c.user_id.is_not(None), votes.c.user_id.not_in(POOLED_IDS))
        .order_by(votes.c.user_id, votes.c.created_at, votes.c.vote_id)).all()
    _write(votes, "vote_id", "session_order", _numbered(rows))
    board = sa.table("board_dialogues", sa.column("dialogue_id", sa.Text), sa.column("user_id", sa.Text),
                     sa.column("sentiment", sa.Text), sa.column("aspect_ratings", sa.Integer),
                     sa.column("label_at", sa.Text), sa.column("label_order", sa.Integer))
    dialogues = sa.table("dialogues", sa.column("dialogue_id", sa.Text), sa.column("created_at", sa.Text))
    rows = conn.execute(
        sa.select(board.c.dialogue_id, board.c.user_id)
        .select_from(board.join(dialogues, dialogues.c.dialogue_id == board.c.dialogue_id))
        .where(sa.or_(board.c.sentiment.is_not(None), board.c.aspect_ratings > 0),
               board.c.user_id.not_in(POOLED_IDS))
        .order_by(board.c.user_id, sa.func.coalesce(board.c.label_at, "~"), dialogues.c.created_at,
                  board.c.dialogue_id)).all()
    _write(board, "dialogue_id", "label_order", _numbered(rows))
    op.create_index("votes_session_order", "votes", ["user_id", "session_order"], unique=True)
    op.create_index("board_dialogues_label_order", "board_dialogues", ["user_id", "label_order"], unique=True)


def downgrade() -> None:
    op.drop_index("board_dialogues_label_order", table_name="board_dialogues")
    op.drop_index("votes_session_order", table_name="votes")
    with op.batch_alter_table("board_dialogues") as batch:
        batch.drop_column("label_order")
    with op.batch_alter_table("votes") as batch:
        batch.drop_column("session_order")
