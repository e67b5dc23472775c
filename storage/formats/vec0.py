"""sqlite-vec: connections that load the vec0 extension, for the formats whose vectors live in vec0
tables (the five-layer agent's facts DB, ...).

This machine's stdlib sqlite3 may not load extensions (Debian's Python cannot); pysqlite3-binary's
can, and comes with Mnemoscope's default install on x86-64 Linux, as sqlite-vec does everywhere.
vec_dbapi() names the DB-API module whose connections load it, or says why none does; where none
does, the vec0 tables' vectors are reported as not read and everything else is read as usual.
"""

from __future__ import annotations

import importlib
import os
import sqlite3
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..sqlite_files import BUSY_TIMEOUT, read_only_connection

# Set to "off" to read vec0 tables as if sqlite-vec could not load (an extension that crashes).
VEC_SWITCH = "MNEMOSCOPE_SQLITE_VEC"


@lru_cache(maxsize=1)
def _loading_dbapi() -> tuple[Any, str]:
    try:
        import sqlite_vec
    except ImportError:
        return None, "the sqlite-vec package is not installed (pip install sqlite-vec)"
    for name in ("sqlite3", "pysqlite3.dbapi2"):
        try:
            module = importlib.import_module(name)
            con = module.connect(":memory:")
        except ImportError:
            continue
        try:
            con.enable_load_extension(True)
            sqlite_vec.load(con)
            return module, ""
        except (AttributeError, module.Error):
            continue
        finally:
            con.close()
    return None, ("this Python's SQLite cannot load extensions (pysqlite3-binary's can: pip install "
                  "pysqlite3-binary, on x86-64 Linux)")


def vec_dbapi() -> tuple[Any, str]:
    """A DB-API module whose connections load sqlite-vec, or None and why not."""
    if os.environ.get(VEC_SWITCH, "").lower() in ("off", "0", "no"):
        return None, f"sqlite-vec is turned off ({VEC_SWITCH})"
    return _loading_dbapi()


def load_vec(con: Any) -> None:
    """Load sqlite-vec into con (a connection of vec_dbapi()'s module)."""
    import sqlite_vec

    con.enable_load_extension(True)
    sqlite_vec.load(con)
    con.enable_load_extension(False)


def vec_reader(path: Path) -> Any:
    """A connection to path with sqlite-vec loaded that writes no byte of it (sqlite_files's
    read-only connections: no -wal or -shm left behind, nor another program's folded in);
    None where sqlite-vec cannot load."""
    module, _why = vec_dbapi()
    if module is None:
        return None
    con = read_only_connection(path, BUSY_TIMEOUT, dbapi=module, prepare=load_vec)
    con.isolation_level = None
    con.row_factory = module.Row
    return con


def dbapi_errors() -> tuple[type[BaseException], ...]:
    """The errors a vec_dbapi() connection raises (its module's and sqlite3's)."""
    module, _why = vec_dbapi()
    return (sqlite3.Error,) if module is None or module is sqlite3 else (sqlite3.Error, module.Error)
