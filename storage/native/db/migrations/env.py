"""Alembic's environment: migrations run on the connection the caller hands in
(``config.attributes["connection"]``), inside the caller's transaction."""

from alembic import context
from mnemoscope.storage.native.db import schema_tables


def run_migrations() -> None:
    context.configure(
        connection=context.config.attributes["connection"],
        target_metadata=schema_tables.metadata,
        render_as_batch=True,  # SQLite alters tables by copying them
    )
    with context.begin_transaction():
        context.run_migrations()


if hasattr(context, "config"):  # Alembic is running this file (importing it alone runs nothing)
    run_migrations()
