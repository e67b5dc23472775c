"""Schema version 5: the journal at its version 3 (each step's changes in audit_changes).

Revision ID: 0005
Revises: 0004
"""

from alembic import op
from mnemoscope.storage.native.db import schema_tables

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    schema_tables.MIGRATIONS[4](op.get_bind())
