"""Schema version 4: the journal at its version 2 (an after-image kept as the columns it changes).

Revision ID: 0004
Revises: 0003
"""

from alembic import op
from mnemoscope.storage.native.db import schema_tables

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    schema_tables.MIGRATIONS[3](op.get_bind())
