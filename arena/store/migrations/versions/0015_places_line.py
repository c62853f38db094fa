"""The line of a place count that did not reach the platform (`platform_studies.places_line`;
arena/store/platform_studies.py): the arena pushes its place count to the platform on its own, and a
refusal or a network failure is kept here so every replica's Studies page shows it until a push succeeds.

Revision ID: 0015
Revises: 0014
"""

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("platform_studies", sa.Column("places_line", sa.Text))


def downgrade() -> None:
    with op.batch_alter_table("platform_studies") as batch:
        batch.drop_column("places_line")
