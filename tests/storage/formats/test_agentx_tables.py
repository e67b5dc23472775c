"""AgentX's PostgreSQL tables as Mnemoscope reads them (storage/formats/agentx_tables.py): the
layer of each memory type, what makes a database AgentX's, and the tables read from a real
PostgreSQL (tests/helpers/postgres_server.py) holding the seed's schema (helpers/agentx_db.py)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from helpers import agentx_db
from helpers.postgres_server import postgres_server  # noqa: F401 (fixture)
from mnemoscope.storage.formats.agentx_tables import (
    AUDIT,
    LOG_COLUMNS,
    LOGS,
    TIMELINE,
    TIMELINE_COLUMNS,
    Column,
    is_agentx,
    layer_of,
    read_tables,
)
from mnemoscope.storage.model import Layer


@pytest.mark.parametrize(("memory_type", "layer"), [
    ("fact", Layer.SEMANTIC), ("entity", Layer.SEMANTIC), ("semantic", Layer.SEMANTIC),
    ("episodic", Layer.EPISODIC), ("turn", Layer.EPISODIC), ("conversation", Layer.EPISODIC),
    ("strategy", Layer.PROCEDURAL), ("tool", Layer.PROCEDURAL),
    ("goal", Layer.WORKING), ("working", Layer.WORKING),
    ("core", Layer.CORE), ("social", Layer.SOCIAL),
    ("  Goal ", Layer.WORKING),  # as typed by hand: any case, spaces around
    ("STRATEGY", Layer.PROCEDURAL),
    ("hunch", Layer.SEMANTIC),  # a type the seed does not name: a fact like any other
    ("", Layer.SEMANTIC),
    (None, Layer.SEMANTIC),
])
def test_each_memory_type_has_its_layer(memory_type: Any, layer: Layer) -> None:
    assert layer_of(memory_type) is layer


def columns(*names: str) -> dict[str, Column]:
    return {name: Column("text", -1) for name in names}


def test_a_database_is_agentxs_when_its_timeline_and_logs_have_the_seeds_columns() -> None:
    seed = {TIMELINE: columns(*TIMELINE_COLUMNS, "embedding"), LOGS: columns(*LOG_COLUMNS, "model")}
    assert is_agentx(seed)
    assert is_agentx({**seed, "orders": columns("id")})  # other tables beside them change nothing
    assert not is_agentx({TIMELINE: seed[TIMELINE]})  # no conversation_logs
    assert not is_agentx({**seed, TIMELINE: columns(*(TIMELINE_COLUMNS - {"channel"}))})  # before the channel columns
    assert not is_agentx({**seed, LOGS: columns(*(LOG_COLUMNS - {"turn_index"}))})
    assert not is_agentx({})


def tables_of(server: Any, database: str) -> dict[str, dict[str, Column]]:
    from psycopg.rows import dict_row

    with server.connect(database, row_factory=dict_row) as connection, connection.cursor() as cursor:
        return read_tables(cursor)


def test_the_seeds_tables_are_read_with_their_columns_types_and_dimensions(agentx: Any) -> None:
    tables = tables_of(agentx.server, agentx.name)
    assert {TIMELINE, LOGS, "tool_invocations", "user_profiles", AUDIT, "schema_version"} <= set(tables)
    assert not [t for t in tables if t.startswith(AUDIT + "_")]  # the monthly partitions: the parent stands for them
    timeline = tables[TIMELINE]
    assert TIMELINE_COLUMNS | {"embedding"} <= set(timeline)
    assert timeline["embedding"] == Column("vector", agentx_db.DIMENSIONS)
    assert timeline["metadata"].type == "jsonb" and timeline["summary"] == Column("text", -1)
    assert timeline["channel"].type == "varchar"
    assert is_agentx(tables)


def test_only_the_current_schemas_tables_are_read(postgres_server: Any) -> None:  # noqa: F811
    name = "agentx_other_" + uuid.uuid4().hex[:8]
    postgres_server.create_database(name)
    try:
        postgres_server.psql("CREATE TABLE orders (id int, total numeric(10, 2))", name)
        postgres_server.psql("CREATE SCHEMA archive", name)
        postgres_server.psql("CREATE TABLE archive.memory_timeline (id int)", name)
        postgres_server.psql("ALTER TABLE orders DROP COLUMN total", name)
        tables = tables_of(postgres_server, name)
        assert tables == {"orders": {"id": Column("int4", -1)}}  # no dropped column, no other schema
        assert not is_agentx(tables)
    finally:
        postgres_server.drop_database(name)
