"""schema_tables.py: the native tables for SQLAlchemy, loaded at the first use of a name such as
schema.memories, and the columns schema.py names for the SQL that runs without it."""

from __future__ import annotations

import subprocess
import sys

import pytest
from mnemoscope.storage.native.db import schema, schema_tables


def test_the_columns_sql_is_written_with_are_the_tables_columns_in_order() -> None:
    defined = {t.name: tuple(c.name for c in t.columns) for t in schema_tables.all_tables()}
    assert list(defined.items()) == list(schema.TABLE_COLUMNS.items())


def test_a_table_named_through_schema_is_the_one_schema_tables_defines() -> None:
    assert schema.memories is schema_tables.memories
    assert schema.MIGRATIONS is schema_tables.MIGRATIONS
    assert set(schema.MIGRATIONS) == set(range(schema.SCHEMA_VERSION))


def test_schema_loads_sqlalchemy_only_when_a_table_is_named() -> None:
    script = (
        "import sys\n"
        "from mnemoscope.storage.native.db import schema\n"
        "before = 'sqlalchemy' in sys.modules\n"
        "schema.write_probes(); schema.structure_problems({})\n"
        "probed = 'sqlalchemy' in sys.modules\n"
        "schema.memories\n"
        "print(before, probed, 'sqlalchemy' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False", "True"]


def test_a_column_named_from_outside_goes_into_sql_only_when_the_table_has_it() -> None:
    assert schema.column_of("memories", "channel") == "channel"
    with pytest.raises(KeyError):
        schema.column_of("memories", "channel; DROP TABLE memories")
