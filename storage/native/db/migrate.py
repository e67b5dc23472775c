"""Alembic, run on a connection the store already holds (imported only when a database needs
upgrading: an up-to-date open never loads Alembic).

The revisions live in ``migrations/versions``: revision ``"0001"`` is schema version 1, and so on.
The version table (``meta.schema_version``) is the truth older readers and SQLite tools see: a
database it says is at version n whose ``alembic_version`` says otherwise (none: memory.db files
from before Alembic) is stamped at n first. One naming a revision this code does not know (a
newer Mnemoscope's) is refused.
"""

from __future__ import annotations

from pathlib import Path

from ...errors import UnreadableStoreError
from ...sqlite_engine import AnyConnection as Connection

SCRIPTS = Path(__file__).with_name("migrations")


def revision_of(version: int) -> str:
    return f"{version:04d}"


def upgrade(conn: Connection, found: int) -> None:
    """Take the database on conn from schema version found to the newest, in conn's transaction."""
    from alembic import command
    from alembic.config import Config
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory
    from alembic.util import CommandError

    config = Config()
    config.set_main_option("script_location", str(SCRIPTS))
    config.attributes["connection"] = conn
    try:
        stamped = MigrationContext.configure(conn).get_current_revision()
        if stamped is not None:
            ScriptDirectory.from_config(config).get_revision(stamped)  # raises for an unknown one
        if found > 0 and stamped != revision_of(found):
            command.stamp(config, revision_of(found), purge=True)
        command.upgrade(config, "head")
    except CommandError as exc:  # alembic_version names a revision this code does not have
        raise UnreadableStoreError(
            f"The store was migrated by another Mnemoscope ({exc}); upgrade Mnemoscope to open it."
        ) from None
