"""Alembic owns the schema version; battles under way are shared by all app processes.

Drops the old single-row `schema_version` table (its number stopped at 1 and
would only mislead) and adds `battle_claims`, the battles handed out but not
yet stored, so that several app replicas pair systems from one count.

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.drop_table("schema_version")
    op.create_table(
        "battle_claims",
        sa.Column("claim_id", sa.Text, primary_key=True),
        sa.Column("crs_low", sa.Text, nullable=False),
        sa.Column("crs_high", sa.Text, nullable=False),
        sa.Column("user_kind", sa.Text, nullable=False),
        sa.Column("expires_at", sa.Text, nullable=False),
    )
    op.create_index("battle_claims_expires", "battle_claims", ["expires_at"])


def downgrade() -> None:
    op.drop_index("battle_claims_expires", "battle_claims")
    op.drop_table("battle_claims")
    version = op.create_table("schema_version", sa.Column("version", sa.Integer, nullable=False))
    op.bulk_insert(version, [{"version": 1}])
