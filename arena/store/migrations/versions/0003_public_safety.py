"""Tables for a public deployment: durable scoring jobs, vote origins and flags, hidden dialogues and
the moderation log (see arena/store/moderation.py and arena/store/votes.py).

Revision ID: 0003
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "scoring_jobs",
        sa.Column("dialogue_id", sa.Text, primary_key=True),
        sa.Column("state", sa.Text, nullable=False),
        sa.Column("force", sa.Integer, nullable=False, server_default="0"),
        sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
        sa.Column("error", sa.Text),
        sa.Column("queued_at", sa.Text, nullable=False),
        sa.Column("updated_at", sa.Text, nullable=False),
    )
    op.create_index("scoring_jobs_state", "scoring_jobs", ["state", "queued_at"])
    op.create_table(
        "vote_origins",
        sa.Column("vote_id", sa.Text, primary_key=True),
        sa.Column("battle_id", sa.Text, nullable=False, unique=True),
        sa.Column("user_key", sa.Text, nullable=False),
        sa.Column("ip_key", sa.Text, nullable=False),
        sa.Column("started_at", sa.Text),
        sa.Column("cast_at", sa.Text, nullable=False),
    )
    op.create_index("vote_origins_ip", "vote_origins", ["ip_key", "cast_at"])
    op.create_index("vote_origins_user", "vote_origins", ["user_key", "cast_at"])
    op.create_table(
        "vote_flags",
        sa.Column("vote_id", sa.Text, primary_key=True),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("flagged_at", sa.Text, nullable=False),
    )
    op.create_table(
        "hidden_dialogues",
        sa.Column("dialogue_id", sa.Text, primary_key=True),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("actor", sa.Text, nullable=False),
        sa.Column("hidden_at", sa.Text, nullable=False),
    )
    op.create_table(
        "moderation_log",
        sa.Column("entry_id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("action", sa.Text, nullable=False),
        sa.Column("target", sa.Text, nullable=False),
        sa.Column("actor", sa.Text, nullable=False),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("detail", sa.Text, nullable=False),
        sa.Column("created_at", sa.Text, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("moderation_log")
    op.drop_table("hidden_dialogues")
    op.drop_table("vote_flags")
    op.drop_index("vote_origins_user", "vote_origins")
    op.drop_index("vote_origins_ip", "vote_origins")
    op.drop_table("vote_origins")
    op.drop_index("scoring_jobs_state", "scoring_jobs")
    op.drop_table("scoring_jobs")
