"""The platform ids of a study's workers (PROLIFIC_PID or worker_id, and SESSION_ID), kept only so the
researchers can approve or reject their submissions (the payment sheet), apart from every table that is
exported or mirrored, and deleted when the study is closed (see arena/store/studies.py).

Revision ID: 0006
Revises: 0005
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "study_platform_ids",
        sa.Column("study_id", sa.Text, primary_key=True),
        sa.Column("pseudonym", sa.Text, primary_key=True),
        sa.Column("worker_id", sa.Text, nullable=False),
        sa.Column("session_id", sa.Text, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("study_platform_ids")
