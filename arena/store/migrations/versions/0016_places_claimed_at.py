"""When a place push was claimed and not yet confirmed (`platform_studies.places_claimed_at`;
arena/store/platform_studies.py): a replica that claims a push and dies before the platform answers leaves
the claim unconfirmed, and once it is older than the lease another replica's check sends the count again.

Revision ID: 0016
Revises: 0015
"""

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("platform_studies", sa.Column("places_claimed_at", sa.Text))


def downgrade() -> None:
    with op.batch_alter_table("platform_studies") as batch:
        batch.drop_column("places_claimed_at")
