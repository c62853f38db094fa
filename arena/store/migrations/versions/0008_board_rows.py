"""Compact rows the leaderboards are computed from: one per dialogue (`board_dialogues`: system, audience,
user, crowd, battle, label, failure and style; see arena/store/board_rows.py) and each vote's user id as a
column, so a board never parses a whole dialogue or vote. Votes stored before this revision get their user
id from their JSON here; dialogues get their row on their next save or at the next board refresh.

Revision ID: 0008
Revises: 0007
"""

import json

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

FLOAT8: sa.types.TypeEngine[float] = sa.REAL().with_variant(postgresql.DOUBLE_PRECISION(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "board_dialogues",
        sa.Column("dialogue_id", sa.Text, sa.ForeignKey("dialogues.dialogue_id", ondelete="CASCADE"),
                  primary_key=True),
        sa.Column("crs_id", sa.Text, nullable=False),
        sa.Column("user_kind", sa.Text, nullable=False),
        sa.Column("user_id", sa.Text, nullable=False),
        sa.Column("crowd", sa.Text),
        sa.Column("in_battle", sa.Integer, nullable=False),
        sa.Column("failed", sa.Integer, nullable=False),
        sa.Column("num_turns", sa.Integer, nullable=False),
        sa.Column("sentiment", sa.Text),
        sa.Column("label_flagged", sa.Integer, nullable=False),
        sa.Column("label_at", sa.Text),
        sa.Column("reply_length", FLOAT8, nullable=False),
        sa.Column("items_shown", FLOAT8, nullable=False),
    )
    op.add_column("votes", sa.Column("user_id", sa.Text))
    conn = op.get_bind()
    votes = sa.table(
        "votes", sa.column("vote_id", sa.Text), sa.column("data", sa.Text), sa.column("user_id", sa.Text)
    )
    rows = conn.execute(sa.select(votes.c.vote_id, votes.c.data)).all()
    for start in range(0, len(rows), 1000):
        conn.execute(
            sa.update(votes).where(votes.c.vote_id == sa.bindparam("id")).values(user_id=sa.bindparam("uid")),
            [
                {"id": r[0], "uid": json.loads(r[1]).get("user_id", "anonymous")}
                for r in rows[start : start + 1000]
            ],
        )


def downgrade() -> None:
    with op.batch_alter_table("votes") as batch:
        batch.drop_column("user_id")
    op.drop_table("board_dialogues")
