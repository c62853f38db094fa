"""Crowdsourced studies: versioned study files, their participants and the quota cells they hold
(see arena/store/studies.py), and each vote's study (NULL: the open arena), so the open arena's pairing
counts only its own battles.

Revision ID: 0004
Revises: 0003
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("votes", sa.Column("study", sa.Text))
    op.create_table(
        "study_files",
        sa.Column("study_id", sa.Text, primary_key=True),
        sa.Column("version", sa.Integer, primary_key=True),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("saved_by", sa.Text, nullable=False),
        sa.Column("saved_at", sa.Text, nullable=False),
    )
    op.create_table(
        "study_participants",
        sa.Column("study_id", sa.Text, primary_key=True),
        sa.Column("pseudonym", sa.Text, primary_key=True),
        sa.Column("study_version", sa.Integer, nullable=False),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("data", sa.Text, nullable=False),
        sa.Column("started_at", sa.Text, nullable=False),
        sa.Column("updated_at", sa.Text, nullable=False),
        sa.Column("completed_at", sa.Text),
    )
    op.create_table(
        "study_claims",
        sa.Column("claim_id", sa.Text, primary_key=True),
        sa.Column("study_id", sa.Text, nullable=False),
        sa.Column("cell", sa.Text, nullable=False),
        sa.Column("pseudonym", sa.Text, nullable=False),
        sa.Column("state", sa.Text, nullable=False),
        sa.Column("expires_at", sa.Text, nullable=False),
    )
    op.create_index("study_claims_cell", "study_claims", ["study_id", "cell", "state"])


def downgrade() -> None:
    op.drop_index("study_claims_cell", "study_claims")
    op.drop_table("study_claims")
    op.drop_table("study_participants")
    op.drop_table("study_files")
    with op.batch_alter_table("votes") as batch:
        batch.drop_column("study")
