"""The smallest SQLite database a test of SQLite files needs: one table t (v) with one row (1)."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def one_row_database(path: Path) -> Path:
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (v)")
    con.execute("INSERT INTO t VALUES (1)")
    con.commit()
    con.close()
    return path
