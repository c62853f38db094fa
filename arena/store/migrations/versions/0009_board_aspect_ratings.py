"""Each dialogue's compact row counts its aspect ratings (`board_dialogues.aspect_ratings`), so the metric
tables beside the leaderboards read whole only the dialogues that have some. The rows are emptied here and
rebuilt from the dialogues at the next board read (`BoardRowsStore._fill_missing_board_rows`), which parses
each stored dialogue once.

Revision ID: 0009
Revises: 0008
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("DELETE FROM board_dialogues")
    op.add_column(
        "board_dialogues", sa.Column("aspect_ratings", sa.Integer, nullable=False, server_default="0")
    )


def downgrade() -> None:
    with op.batch_alter_table("board_dialogues") as batch:
        batch.drop_column("aspect_ratings")
