"""Conversation starts: a first message claims its key here before its conversation is created, so that
the same first message reaching two app processes at once (a client retrying through a load balancer)
starts one conversation, not two.

Revision ID: 0011
Revises: 0010
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

FLOAT8: sa.types.TypeEngine[float] = sa.REAL().with_variant(postgresql.DOUBLE_PRECISION(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "conversation_starts",
        sa.Column("start_key", sa.Text, primary_key=True),
        sa.Column("dialogue_id", sa.Text, nullable=False),
        sa.Column("expires_at", FLOAT8, nullable=False),
    )
    op.create_index("conversation_starts_dialogue", "conversation_starts", ["dialogue_id"])
    op.create_index("conversation_starts_expires", "conversation_starts", ["expires_at"])


def downgrade() -> None:
    op.drop_index("conversation_starts_expires", table_name="conversation_starts")
    op.drop_index("conversation_starts_dialogue", table_name="conversation_starts")
    op.drop_table("conversation_starts")
