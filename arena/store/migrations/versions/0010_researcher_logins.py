"""Researcher logins in the store (`researcher_logins`: a digest of the login cookie's token, the user name,
an expiry), so that every app process sharing the database accepts a login made on any of them.

Revision ID: 0010
Revises: 0009
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

FLOAT8: sa.types.TypeEngine[float] = sa.REAL().with_variant(postgresql.DOUBLE_PRECISION(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "researcher_logins",
        sa.Column("digest", sa.Text, primary_key=True),
        sa.Column("username", sa.Text, nullable=False),
        sa.Column("expires_at", FLOAT8, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("researcher_logins")
