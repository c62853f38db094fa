"""Shared state for several app processes: a version per dialogue (compare-and-set writes of a
conversation under way), leases on scoring jobs and evaluation runs (an owner that renews them;
an expired one is taken over), and a cancel request any process can leave on a run.

Revision ID: 0007
Revises: 0006
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Rows stored before this revision were each written at least once: version 1.
    op.add_column("dialogues", sa.Column("version", sa.Integer, nullable=False, server_default="1"))
    op.add_column("scoring_jobs", sa.Column("owner", sa.Text))
    op.add_column("scoring_jobs", sa.Column("lease_until", sa.Text))
    op.add_column("runs", sa.Column("owner", sa.Text))
    op.add_column("runs", sa.Column("lease_until", sa.Text))
    op.add_column("runs", sa.Column("cancel_requested", sa.Integer, nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("cancel_requested")
        batch.drop_column("lease_until")
        batch.drop_column("owner")
    with op.batch_alter_table("scoring_jobs") as batch:
        batch.drop_column("lease_until")
        batch.drop_column("owner")
    with op.batch_alter_table("dialogues") as batch:
        batch.drop_column("version")
