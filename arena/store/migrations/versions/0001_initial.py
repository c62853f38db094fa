"""The schema as it was before migrations were managed by Alembic (the store's "version 1").

A database made by that code is recognised by its `schema_version` table and
stamped at this revision without running it; this revision recreates the same
tables, columns, keys and indexes for a new database.

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

# Migrations keep their own copy of column types: later edits to arena.store.schema must not change history.
FLOAT8: sa.types.TypeEngine[float] = sa.REAL().with_variant(postgresql.DOUBLE_PRECISION(), "postgresql")


def _key(name: str) -> sa.Column:
    # The old DDL said "TEXT PRIMARY KEY" without NOT NULL; keep the same column definition.
    return sa.Column(name, sa.Text, primary_key=True, nullable=True)


def upgrade() -> None:
    op.create_table("meta", _key("key"), sa.Column("value", sa.Text, nullable=False))
    op.create_table(
        "dialogues",
        _key("dialogue_id"),
        sa.Column("crs_id", sa.Text, nullable=False),
        sa.Column("user_kind", sa.Text, nullable=False),
        sa.Column("user_id", sa.Text, nullable=False),
        sa.Column("ended", sa.Integer, nullable=False),
        sa.Column("sentiment", sa.Text),
        sa.Column("num_turns", sa.Integer, nullable=False),
        sa.Column("created_at", sa.Text, nullable=False),
        sa.Column("updated_at", sa.Text, nullable=False),
        sa.Column("data", sa.Text, nullable=False),
    )
    op.create_index("dialogues_crs", "dialogues", ["crs_id", "created_at"])
    op.create_index("dialogues_kind", "dialogues", ["user_kind", "created_at"])
    op.create_index("dialogues_created", "dialogues", ["created_at"])
    op.create_table(
        "scores",
        sa.Column("dialogue_id", sa.Text, sa.ForeignKey("dialogues.dialogue_id", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("metric", sa.Text, nullable=False),
        sa.Column("value", FLOAT8),
        sa.Column("scorer", sa.Text, nullable=False),
        sa.Column("version", sa.Text, nullable=False),
        sa.Column("model", sa.Text),
        sa.Column("error", sa.Text),
        sa.Column("details", sa.Text, nullable=False),
        sa.Column("scored_at", sa.Text, nullable=False),
        sa.PrimaryKeyConstraint("dialogue_id", "metric"),
    )
    op.create_index("scores_metric", "scores", ["metric"])
    op.create_table(
        "votes",
        _key("vote_id"),
        sa.Column("battle_id", sa.Text, nullable=False),
        sa.Column("dialogue_a", sa.Text, nullable=False),
        sa.Column("dialogue_b", sa.Text, nullable=False),
        sa.Column("crs_a", sa.Text, nullable=False),
        sa.Column("crs_b", sa.Text, nullable=False),
        sa.Column("choice", sa.Text, nullable=False),
        sa.Column("user_kind", sa.Text, nullable=False),
        sa.Column("created_at", sa.Text, nullable=False),
        sa.Column("data", sa.Text, nullable=False),
    )
    op.create_index("votes_created", "votes", ["created_at"])
    op.create_table(
        "runs", _key("run_id"),
        sa.Column("state", sa.Text, nullable=False),
        sa.Column("updated_at", sa.Text, nullable=False),
    )
    version = op.create_table("schema_version", sa.Column("version", sa.Integer, nullable=False))
    op.bulk_insert(version, [{"version": 1}])


def downgrade() -> None:
    for table in ("schema_version", "runs", "votes", "scores", "dialogues", "meta"):
        op.drop_table(table)
