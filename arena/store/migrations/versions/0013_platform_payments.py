"""Platform payments: each submission transition and each bonus payment sent to the recruiting platform
is claimed in a row before the call and marked with its outcome, so that no retry, double click or second
process sends it twice; and each paid worker's row, so that a later payment leaves them out.

Revision ID: 0013
Revises: 0012
"""

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "platform_transitions",
        sa.Column("submission_id", sa.Text, primary_key=True),
        sa.Column("action", sa.Text, primary_key=True),
        sa.Column("study_id", sa.Text, nullable=False),
        sa.Column("state", sa.Text, nullable=False),
        sa.Column("claim_id", sa.Text, nullable=False),
        sa.Column("detail", sa.Text, nullable=False),
        sa.Column("answer", sa.Text, nullable=False),
        sa.Column("actor", sa.Text, nullable=False),
        sa.Column("created_at", sa.Text, nullable=False),
        sa.Column("updated_at", sa.Text, nullable=False),
    )
    op.create_index("platform_transitions_study", "platform_transitions", ["study_id"])
    op.create_table(
        "platform_bonuses",
        sa.Column("study_id", sa.Text, primary_key=True),
        sa.Column("batch_key", sa.Text, primary_key=True),
        sa.Column("state", sa.Text, nullable=False),
        sa.Column("claim_id", sa.Text, nullable=False),
        sa.Column("workers", sa.Integer, nullable=False),
        sa.Column("total", sa.Text, nullable=False),
        sa.Column("bonus_id", sa.Text, nullable=False),
        sa.Column("answer", sa.Text, nullable=False),
        sa.Column("actor", sa.Text, nullable=False),
        sa.Column("created_at", sa.Text, nullable=False),
        sa.Column("updated_at", sa.Text, nullable=False),
    )
    op.create_table(
        "platform_bonus_workers",
        sa.Column("study_id", sa.Text, primary_key=True),
        sa.Column("worker_key", sa.Text, primary_key=True),
        sa.Column("batch_key", sa.Text, nullable=False),
        sa.Column("amount", sa.Text, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("platform_bonus_workers")
    op.drop_table("platform_bonuses")
    op.drop_index("platform_transitions_study", table_name="platform_transitions")
    op.drop_table("platform_transitions")
