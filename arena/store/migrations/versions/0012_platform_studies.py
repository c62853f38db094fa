"""Platform studies: the link from an arena study to its study on a recruiting platform (its id there, the
status and place count last read, and when), so the Studies page can publish, pause and close it there.

Revision ID: 0012
Revises: 0011
"""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "platform_studies",
        sa.Column("study_id", sa.Text, primary_key=True),
        sa.Column("platform", sa.Text, nullable=False),
        sa.Column("platform_study_id", sa.Text, nullable=False),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("places", sa.Integer, nullable=False),
        sa.Column("synced_at", sa.Text, nullable=False),
    )
    op.create_index("platform_studies_platform_id", "platform_studies", ["platform_study_id"], unique=True)


def downgrade() -> None:
    op.drop_index("platform_studies_platform_id", table_name="platform_studies")
    op.drop_table("platform_studies")
