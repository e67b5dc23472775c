"""Schema version 2: one index per order a page is asked in.

Revision ID: 0002
Revises: 0001
"""

from alembic import op
from mnemoscope.storage.native.db import schema_tables

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    schema_tables.MIGRATIONS[1](op.get_bind())
