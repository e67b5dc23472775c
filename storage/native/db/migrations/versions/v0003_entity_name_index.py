"""Schema version 3: entities found by name in any case through an index.

Revision ID: 0003
Revises: 0002
"""

from alembic import op
from mnemoscope.storage.native.db import schema_tables

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    schema_tables.MIGRATIONS[2](op.get_bind())
