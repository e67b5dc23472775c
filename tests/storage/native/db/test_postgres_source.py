"""What only the PostgreSQL store has to prove: ranking by PostgreSQL's full-text search, a change
token other sessions' commits move, and errors that say what is wrong without the password."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest
from helpers.postgres_server import postgres_server  # noqa: F401 (fixture)
from mnemoscope.storage import MemoryQuery
from mnemoscope.storage.errors import SecretRefusedError, StoreFileError, UnreadableStoreError
from mnemoscope.storage.journal.tables import JOURNAL_VERSION
from mnemoscope.storage.native.db import schema
from mnemoscope.storage.native.db.postgres_source import PostgresSource, open_postgres_store


@pytest.fixture
def database(postgres_server: Any, request: pytest.FixtureRequest) -> Any:
    name = "pg_" + request.node.name.lower()[:40].replace("-", "_").replace("[", "_").replace("]", "")
    postgres_server.create_database(name)
    yield name
    postgres_server.drop_database(name)


def test_keyword_search_ranks_the_memory_matching_the_whole_text_first(postgres_server: Any, database: str) -> None:
    source = PostgresSource.open(postgres_server.url(database), create=True)
    one_word = source.add_memory("Invoices are sent monthly")
    both = source.add_memory("Invoices for the webshop go out on Monday")
    phrase = source.add_memory("The webshop invoices: monthly, by mail; webshop invoices matter")
    assert [m.id for m in source.keyword_search('"webshop invoices"', MemoryQuery(), 10)][0] == phrase
    ranked = [m.id for m in source.keyword_search("webshop monday", MemoryQuery(), 10)]
    assert ranked[0] == both and one_word not in ranked
    indexes = postgres_server.psql("SELECT indexdef FROM pg_indexes WHERE indexname = 'ix_memories_fts'", database)
    assert "to_tsvector('simple'::regconfig" in indexes[0][0] and "gin" in indexes[0][0]
    source.close()


def test_the_change_token_moves_on_another_sessions_commit_only(postgres_server: Any, database: str) -> None:
    source = PostgresSource.open(postgres_server.url(database), create=True)
    memory_id = source.add_memory("polled")
    token = source.change_token()
    with postgres_server.connect(database, autocommit=False) as other:
        other.execute("UPDATE memories SET salience = 0.9 WHERE id = %s", (memory_id,))
        assert source.change_token() == token  # not committed: nothing to see yet
        other.commit()
    assert source.change_token() != token
    token = source.change_token()
    postgres_server.psql("INSERT INTO sessions (id, started_at) VALUES ('s9', '2026-01-01T00:00:00+00:00')", database)
    assert source.change_token() != token
    source.close()


def test_a_wrong_password_is_refused_and_the_message_holds_no_password(postgres_server: Any, database: str) -> None:
    PostgresSource.open(postgres_server.url(database), create=True).close()
    wrong = "hunter2-not-it"
    url = postgres_server.url(database).replace(postgres_server.url(database).split(":")[2].split("@")[0], wrong)
    with pytest.raises(SecretRefusedError) as refused:
        open_postgres_store(url, root=Path("/nonexistent"), location=postgres_server.url(database, password=False))
    message = str(refused.value)
    assert "refused the login" in message
    assert wrong not in message and postgres_server.password not in message


def test_a_missing_database_and_an_unreachable_server_say_so(postgres_server: Any) -> None:
    with pytest.raises(UnreadableStoreError, match="no such database") as missing:
        PostgresSource.open(postgres_server.url("no_such_db"))
    assert postgres_server.password not in str(missing.value)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    url = postgres_server.url("x").replace(f":{postgres_server.port}/", f":{closed_port}/")
    with pytest.raises(StoreFileError, match="Cannot reach") as unreachable:
        PostgresSource.open(url)
    assert postgres_server.password not in str(unreachable.value)


def test_a_database_without_the_schema_is_refused_and_left_as_it_was(postgres_server: Any, database: str) -> None:
    with pytest.raises(UnreadableStoreError, match="holds no Mnemoscope store"):
        PostgresSource.open(postgres_server.url(database))
    assert postgres_server.psql("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'", database) == [(0,)]
    postgres_server.psql("CREATE TABLE orders (id int)", database)
    with pytest.raises(UnreadableStoreError, match="orders"):
        PostgresSource.open(postgres_server.url(database), create=True)
    assert postgres_server.psql("SELECT tablename FROM pg_tables WHERE schemaname = 'public'", database) == [("orders",)]


def test_a_created_store_is_stamped_and_a_newer_one_is_refused(postgres_server: Any, database: str) -> None:
    PostgresSource.open(postgres_server.url(database), create=True).close()
    current = schema.SCHEMA_VERSION
    assert postgres_server.psql("SELECT version_num FROM alembic_version", database) == [(f"{current:04d}",)]
    assert postgres_server.psql("SELECT value FROM meta WHERE key = 'schema_version'", database) == [(str(current),)]
    postgres_server.psql(f"UPDATE meta SET value = '{current + 1}' WHERE key = 'schema_version'", database)
    with pytest.raises(UnreadableStoreError, match=f"schema version {current + 1}.*Upgrade Mnemoscope"):
        PostgresSource.open(postgres_server.url(database))


def test_a_version_1_database_is_migrated_by_alembic(postgres_server: Any, database: str) -> None:
    PostgresSource.open(postgres_server.url(database), create=True).close()
    postgres_server.psql("DROP INDEX ix_memories_status_updated", database)
    postgres_server.psql("DROP INDEX ix_entities_lower_name", database)
    postgres_server.psql("UPDATE meta SET value = '1' WHERE key = 'schema_version'", database)
    postgres_server.psql("UPDATE alembic_version SET version_num = '0001'", database)
    # the journal as it was before its version 3: each step's changes in its audit row
    postgres_server.psql("DROP TABLE audit_changes", database)
    postgres_server.psql("ALTER TABLE audit ADD COLUMN changes TEXT NOT NULL DEFAULT '[]'", database)
    postgres_server.psql("UPDATE meta SET value = '2' WHERE key = 'journal_version'", database)
    with pytest.raises(UnreadableStoreError, match="without read-only"):
        PostgresSource.open(postgres_server.url(database), read_only=True)
    PostgresSource.open(postgres_server.url(database)).close()
    assert postgres_server.psql("SELECT value FROM meta WHERE key = 'schema_version'", database) == [
        (str(schema.SCHEMA_VERSION),)]
    assert postgres_server.psql("SELECT value FROM meta WHERE key = 'journal_version'", database) == [(str(JOURNAL_VERSION),)]
    assert postgres_server.psql("SELECT 1 FROM pg_trigger WHERE tgname = 'audit_changes_revision'", database)
    assert not postgres_server.psql("SELECT 1 FROM information_schema.columns WHERE table_name = 'audit' "
                                    "AND column_name = 'changes'", database)
    assert postgres_server.psql("SELECT 1 FROM pg_indexes WHERE indexname = 'ix_memories_status_updated'", database)
    assert postgres_server.psql("SELECT 1 FROM pg_indexes WHERE indexname = 'ix_entities_lower_name'", database)
