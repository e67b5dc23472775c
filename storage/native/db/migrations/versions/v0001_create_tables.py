"""Schema version 1: the native tables; FTS5 on SQLite; full-text index and revision counter on
PostgreSQL.

Revision ID: 0001
Revises:
"""

from alembic import op
from mnemoscope.storage.native.db import schema_tables

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    schema_tables.MIGRATIONS[0](op.get_bind())
