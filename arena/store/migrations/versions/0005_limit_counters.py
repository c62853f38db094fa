"""Hard limits and the login lockout counted in the store (see arena/store/limits.py): a row per limited
key, locked while an admission is counted, and a row per admitted action within the moving window.

Revision ID: 0005
Revises: 0004
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

FLOAT8: sa.types.TypeEngine[float] = sa.REAL().with_variant(postgresql.DOUBLE_PRECISION(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "limit_keys",
        sa.Column("scope", sa.Text, primary_key=True),
        sa.Column("key", sa.Text, primary_key=True),
        sa.Column("failures", sa.Integer, nullable=False),
        sa.Column("last_at", FLOAT8, nullable=False),
        sa.Column("blocked_until", FLOAT8, nullable=False),
    )
    op.create_table(
        "limit_hits",
        sa.Column("hit_id", sa.Text, primary_key=True),
        sa.Column("scope", sa.Text, nullable=False),
        sa.Column("key", sa.Text, nullable=False),
        sa.Column("at", FLOAT8, nullable=False),
    )
    op.create_index("limit_hits_key", "limit_hits", ["scope", "key", "at"])


def downgrade() -> None:
    op.drop_index("limit_hits_key", "limit_hits")
    op.drop_table("limit_hits")
    op.drop_table("limit_keys")
