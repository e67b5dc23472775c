"""The native store on each database it runs on, behind one face, for tests that must give the
same results on SQLite (memory.db in a folder) and PostgreSQL (a real server, see postgres_server).

    def test_x(native):            # parametrized ["sqlite", "postgresql"]
        source = native.source()   # a writable SqliteSource / PostgresSource (creates the store)
        with native.open() as store: ...
        native.execute("UPDATE memories SET content = ? WHERE id = ?", ("x", memory_id))  # another program

``native.load_demo()`` fills the store with the demo workspace's memory.db rows (the same rows on
both databases; no vectors or markdown, as the ``sqlite_only`` fixture).
"""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
import uuid
from pathlib import Path
from typing import Any

import pytest
from mnemoscope.storage import open_store
from mnemoscope.storage.native.db import schema
from mnemoscope.storage.native.db.sqlite_source import SqliteSource
from mnemoscope.storage.store import MemoryStore

BACKENDS = ["sqlite", "postgresql"]


class SqliteBackend:
    name = "sqlite"

    def __init__(self, root: Path) -> None:
        self.root = root
        self.root.mkdir(parents=True, exist_ok=True)

    def source(self, *, read_only: bool = False) -> Any:
        return SqliteSource.open(self.root / "memory.db", create=not read_only, read_only=read_only)

    def open(self, *, read_only: bool = False) -> MemoryStore:
        if not (self.root / "memory.db").exists():
            self.source().close()
        return open_store(self.root, read_only=read_only)

    def execute(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with contextlib.closing(sqlite3.connect(self.root / "memory.db")) as con:
            rows = con.execute(sql, params).fetchall()
            con.commit()
            return rows

    def load_demo(self, demo_db: Path) -> None:
        shutil.copy2(demo_db, self.root / "memory.db")


class PostgresBackend:
    name = "postgresql"

    def __init__(self, server: Any, root: Path) -> None:
        self.server = server
        self.root = root
        self.database = "t_" + uuid.uuid4().hex[:12]
        self.url = server.create_database(self.database)
        self.location = server.url(self.database, password=False)

    def source(self, *, read_only: bool = False) -> Any:
        from mnemoscope.storage.native.db.postgres_source import PostgresSource

        return PostgresSource.open(self.url, location=self.location, create=not read_only, read_only=read_only)

    def open(self, *, read_only: bool = False) -> MemoryStore:
        from mnemoscope.storage.native.db.postgres_source import open_postgres_store
        from mnemoscope.storage.opening import built

        return built(open_postgres_store(self.url, root=self.root, location=self.location, read_only=read_only,
                                         create=not read_only))

    def execute(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        return self.server.psql(sql.replace("?", "%s"), self.database, params)

    def load_demo(self, demo_db: Path) -> None:
        """Every row of the demo's memory.db, copied table by table (journal tables aside)."""
        source = self.source()
        try:
            with contextlib.closing(sqlite3.connect(demo_db)) as con, source.engine.begin() as conn:
                con.row_factory = sqlite3.Row
                for table in schema.metadata.sorted_tables:
                    if table.name in ("meta", "audit", "audit_targets"):
                        continue
                    rows = [dict(r) for r in con.execute(f'SELECT * FROM "{table.name}"')]
                    if rows:
                        conn.execute(table.insert(), rows)
                for table in ("turns",):  # serial columns continue after the copied ids
                    conn.exec_driver_sql(
                        f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), coalesce(max(id), 0) + 1, false) FROM {table}"
                    )
        finally:
            source.close()


@pytest.fixture(params=BACKENDS)
def native(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    if request.param == "sqlite":
        yield SqliteBackend(tmp_path / "ws")
        return
    server = request.getfixturevalue("postgres_server")
    backend = PostgresBackend(server, tmp_path / "server-folder")
    yield backend
    server.drop_database(backend.database)


@pytest.fixture
def native_demo(native: Any, demo_path: Path) -> Any:
    """The native backend holding the demo workspace's memory.db rows."""
    native.load_demo(demo_path / "memory.db")
    return native
