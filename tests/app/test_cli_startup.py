"""Start-up: what the command line loads before it does anything.

`mnemoscope --help` and `--version` must not load a database library (SQLAlchemy, Chroma),
nor numpy, markdown-it or Qt: each command imports what it runs. Checked in a fresh
interpreter by the modules it loaded, not by a clock (this machine is shared and noisy;
tests/bench/test_startup_bench.py times it).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

HEAVY = ("sqlalchemy", "chromadb", "numpy", "markdown_it", "PySide6")


def loaded_after(code: str, timeout: float = 120) -> dict:
    """Run code in a fresh interpreter; the heavy top-level packages it loaded, and its output."""
    probe = f"""
import json, sys
{code}
print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & {set(HEAVY)!r})), file=sys.stderr)
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=timeout)
    *err, last = done.stderr.strip().splitlines() or [""]
    assert done.returncode == 0, done.stderr
    return {"heavy": json.loads(last), "stdout": done.stdout, "stderr": "\n".join(err)}


RUN_MAIN = """
from mnemoscope.app.cli import main
try:
    code = main({argv!r})
except SystemExit as exc:
    code = exc.code
assert code in (0, None), code
"""


@pytest.mark.parametrize(
    "argv",
    [["--help"], ["-h"], ["--version"], ["ls", "--help"], ["edit", "--help"], ["import", "--help"]],
    ids=" ".join,
)
def test_help_and_version_load_no_database_library(argv: list[str]) -> None:
    run = loaded_after(RUN_MAIN.format(argv=argv))
    assert run["heavy"] == []
    assert run["stdout"].startswith("usage: mnemoscope" if argv != ["--version"] else "mnemoscope ")


def test_console_script_help_and_version() -> None:
    exe = shutil.which("mnemoscope", path=str(Path(sys.executable).parent))
    assert exe, "the mnemoscope console script is installed with the package"
    for argv in (["--help"], ["--version"]):
        run = loaded_after(f"""
import runpy
sys.argv = [{exe!r}, *{argv!r}]
try:
    runpy.run_path({exe!r}, run_name="__main__")
except SystemExit as exc:
    assert exc.code in (0, None), exc.code
""")
        assert run["heavy"] == [], (argv, run["heavy"])
    assert run["stdout"].strip() == f"mnemoscope {version('mnemoscope')}"


def test_storage_package_loads_its_names_on_first_use() -> None:
    run = loaded_after("""
import mnemoscope.storage as storage
assert not [m for m in sys.modules if m.startswith('mnemoscope.storage.')], 'the package imports nothing'
from mnemoscope.storage import Kind, Layer, Order, Status, StoreError
from mnemoscope.storage import *
for name in storage.__all__:
    getattr(storage, name)
assert set(storage.__all__) <= set(dir(storage))
import mnemoscope.storage.opening as opening_module
assert storage.open_store is opening_module.open_store
try:
    storage.no_such_name
except AttributeError:
    pass
else:
    raise AssertionError('unknown names must raise AttributeError')
print(len(storage.__all__))
""")
    # Every public name, the store and the Curator included, without a database library.
    assert run["heavy"] == [], run["heavy"]
    assert int(run["stdout"]) >= 29


def test_opening_spells_the_source_file_names_as_the_sources_do() -> None:
    from mnemoscope.storage import opening
    from mnemoscope.storage.native.chroma.files import CHROMA_FILE
    from mnemoscope.storage.native.db.rows import DB_NAME

    assert (opening.DB_NAME, opening.CHROMA_FILE) == (DB_NAME, CHROMA_FILE)


def test_a_missing_sidecar_journal_is_read_without_sqlalchemy(tmp_path: Path) -> None:
    run = loaded_after(f"""
from pathlib import Path
from mnemoscope.storage.journal.log import Journal
journal = Journal.sidecar(Path({str(tmp_path)!r}), read_only=True)
assert journal.read_setting('settings') is None
assert journal.pending() == [] and journal.history() == [] and journal.count() == 0
assert journal.next_to_undo() is None and journal.changes(1) == []
journal.close()
""")
    assert "sqlalchemy" not in run["heavy"]
    assert not (tmp_path / ".mnemoscope").exists()


@pytest.mark.parametrize("fixture", ["markdown_only", "sqlite_only"])
def test_a_store_without_chroma_never_loads_chromadb(fixture: str, request: pytest.FixtureRequest) -> None:
    path = request.getfixturevalue(fixture)
    for command in ("ls", "info"):
        run = loaded_after(RUN_MAIN.format(argv=[command, str(path), "--json"]))
        assert "chromadb" not in run["heavy"], (command, run["heavy"])
        assert json.loads(run["stdout"])


@pytest.mark.parametrize("first", ["FindingKind", "ConsistencyChecks", "check"])
def test_consistency_names_load_on_first_use(first: str) -> None:
    """No name of the check loads the checks themselves (the workspace's, which read memory.db
    through SQLAlchemy): a store loads them when it runs them. `check` is the function, not its
    module, whichever name is asked for first."""
    run = loaded_after(f"""
import mnemoscope.storage.consistency as consistency
getattr(consistency, {first!r})
print("sqlalchemy" in sys.modules or "mnemoscope.storage.native.copies.check" in sys.modules)
import mnemoscope.storage.consistency.checks  # the module the checks live in, imported first
from mnemoscope.storage.consistency import *
assert callable(check) and not hasattr(check, "__file__"), check
assert sorted(consistency.__all__) == sorted(consistency._EXPORTS)
""")
    assert run["stdout"].strip() == "False"


def test_a_store_without_markdown_never_loads_markdown_it(sqlite_only: Path) -> None:
    """markdown-it parses workspace markdown: `ls`, `info` and a write (`rm`, which the journal
    makes undoable) on a memory.db alone never import it (a fifth of a command's imports)."""
    con = sqlite3.connect(sqlite_only / "memory.db")
    (victim,) = con.execute("SELECT id FROM memories WHERE status = 'active' LIMIT 1").fetchone()
    con.close()
    for argv in (["ls", str(sqlite_only), "--json"], ["info", str(sqlite_only), "--json"], ["rm", str(sqlite_only), victim]):
        run = loaded_after(RUN_MAIN.format(argv=argv))
        assert "markdown_it" not in run["heavy"], (argv, run["heavy"])


def test_a_markdown_workspace_never_loads_sqlalchemy(markdown_only: Path) -> None:
    """SQLAlchemy reads memory.db and the journal: a folder of markdown has neither (the journal
    is read, when there is one, through sqlite3)."""
    for command in ("ls", "info", "search"):
        argv = [command, str(markdown_only), *(["tea"] if command == "search" else []), "--json"]
        run = loaded_after(RUN_MAIN.format(argv=argv))
        assert "sqlalchemy" not in run["heavy"], (command, run["heavy"])
        assert json.loads(run["stdout"])


def test_info_on_a_memory_db_makes_no_engine(sqlite_only: Path) -> None:
    """What every open reads (settings, unfinished steps) and what info counts (tables, the
    journal) go through the store's own sqlite3 connection: no engine (a pool of writable
    connections, each set up for writing) is made."""
    run = loaded_after("""
import mnemoscope.storage.sqlite_engine as engines
made = []
_init = engines.SqliteEngine.__init__
engines.SqliteEngine.__init__ = lambda self, *a, **k: (made.append(a[0]), _init(self, *a, **k))[1]
""" + RUN_MAIN.format(argv=["info", str(sqlite_only), "--json"]) + """
assert made == [], made
""")
    info = json.loads(run["stdout"])
    assert info["journal"]["entries"] >= 0 and info["tables"]["memories"] == info["total"] > 0


def test_curation_commands_on_a_memory_db_never_load_sqlalchemy(sqlite_only: Path) -> None:
    """memory.db's reads, writes and journal go through sqlite3 (storage/sqlite_engine.py): `info`,
    `show`, `rm ID`, `undo`, a purge and `history`, which a person runs one at a time, do not pay
    for importing SQLAlchemy (a quarter of a second here, more than the step itself)."""
    con = sqlite3.connect(sqlite_only / "memory.db")
    victim, purged = (r[0] for r in con.execute("SELECT id FROM memories WHERE status = 'active' LIMIT 2"))
    con.close()
    store = str(sqlite_only)
    for argv in (["info", store], ["show", store, victim], ["rm", store, victim], ["undo", store], ["rm", store, victim],
                 ["rm", store, purged, "--purge"], ["history", store]):
        run = loaded_after(RUN_MAIN.format(argv=argv))
        assert "sqlalchemy" not in run["heavy"], (argv, run["heavy"])
    con = sqlite3.connect(sqlite_only / "memory.db")
    assert con.execute("SELECT status FROM memories WHERE id = ?", (victim,)).fetchone() == ("deleted",)
    assert con.execute("SELECT count(*) FROM memories WHERE id = ?", (purged,)).fetchone() == (0,)
    con.close()
