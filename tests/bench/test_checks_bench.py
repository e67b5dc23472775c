"""check, scan and discover against the best a person would write for the same answer.

- check: the consistency check of a native store (its full-text index against its rows) against
  FTS5's own integrity check of that index, run by hand on the same file.
- scan: the findings scan of a native store against a person's loop over ``SELECT id, content``
  applying the shipped rules, each compiled once and run where its needles say it may match.
- discover: finding the stores of a generated home (stores among many other files, node_modules
  and .git folders included) against one os.walk of it looking for memory.db files.

Sizes: check and scan at 1M native memories, discover at 50 stores among 100k files with
MNEMOSCOPE_BENCH_SCALE=full; 100k / 10k memories and 10 stores among 20k files otherwise.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from bench import native_store
from bench.harness import Row, cached_store, paired_medians_s, record, sizes
from mnemoscope.storage import MemoryStore, open_store
from mnemoscope.storage.consistency import check
from mnemoscope.storage.detect.discover import discover
from mnemoscope.storage.findings import default_rules, scan_store
from mnemoscope.storage.native.db.sqlite_source import SqliteSource

pytestmark = pytest.mark.bench
HOME_VERSION = 1
STORES_PER_FILE = 50 / 100_000


def _native(size: int) -> Path:
    return cached_store("native", size, native_store.VERSION, native_store.build)


@pytest.fixture(scope="module", params=sizes(full=[1_000_000], ci=[100_000]), ids=lambda n: f"{n // 1000}k")
def checked(request: pytest.FixtureRequest) -> Iterator[tuple[MemoryStore, Path, int]]:
    path = _native(request.param)
    with open_store(path, read_only=True) as store:
        yield store, path / "memory.db", request.param


def test_check_against_fts5s_integrity_check(checked: tuple[MemoryStore, Path, int]) -> None:
    store, db, size = checked
    con = sqlite3.connect(db)  # the statement takes the write lock; rolled back, it writes nothing

    def project() -> None:
        report = check(store)
        assert report.checked["memory rows"] == size and not report.by_kind

    def baseline() -> None:
        con.execute("INSERT INTO memories_fts(memories_fts, rank) VALUES ('integrity-check', 1)")
        con.rollback()

    try:
        project_s, baseline_s = paired_medians_s(project, baseline, repeat=5, warmup=1)
    finally:
        con.close()
    row = record(Row("checks", "check (consistent store)", size, project_s, "FTS5 integrity-check", baseline_s, 2.0))
    assert row.bounded


@pytest.fixture(scope="module", params=sizes(full=[1_000_000], ci=[10_000]), ids=lambda n: f"{n // 1000}k")
def scanned(request: pytest.FixtureRequest) -> Iterator[tuple[MemoryStore, Path, int]]:
    path = _native(request.param)
    with open_store(path, read_only=True) as store:
        yield store, path / "memory.db", request.param


def test_scan_against_the_rules_over_one_sql_pass(scanned: tuple[MemoryStore, Path, int]) -> None:
    store, db, size = scanned
    rules = default_rules().rules
    answers: dict[str, tuple[int, int]] = {}

    def project() -> None:
        report = scan_store(store)
        answers["project"] = (report.scanned, len(report.findings))

    def baseline() -> None:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        scanned = matched = 0
        for _memory_id, content in con.execute("SELECT id, content FROM memories WHERE status IN ('active', 'archived')"):
            scanned += 1
            lowered = content.lower()
            for rule in rules:
                if rule.needles and not any(n in lowered for n in rule.needles):
                    continue
                matched += sum(1 for m in rule.pattern.finditer(content) if m.start(rule.group) < m.end(rule.group))
        con.close()
        answers["baseline"] = (scanned, matched)

    repeat = 3 if size >= 1_000_000 else 5
    project_s, baseline_s = paired_medians_s(project, baseline, repeat=repeat, warmup=1)
    assert answers["project"] == answers["baseline"]  # the same memories read; no finding in them either way
    row = record(Row("checks", "scan", size, project_s, "SELECT id, content + the rules in a loop", baseline_s, 2.0))
    assert row.bounded


def build_home(root: Path, files: int) -> None:
    """A home of projects: sources, node_modules and .git folders (files of a few bytes), one
    project in four with an agent's memory.db (a few memories) in its agent folder."""
    stores = max(1, round(files * STORES_PER_FILE))
    projects = stores * 4
    for p in range(projects):
        project = root / "projects" / f"p{p:03d}"
        for n in range(files // projects):
            kind = n % 10
            if kind < 5:
                folder = project / "src" / f"mod{n % 7}"
            elif kind < 8:
                folder = project / "node_modules" / f"pkg{n % 11}" / "lib"
            else:
                folder = project / ".git" / "objects" / f"{n % 13:02x}"
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"f{n}.txt").write_bytes(b"x" * 64)
        if p % 4 == 0:
            source = SqliteSource.open(project / "agent" / "memory.db", create=True)
            for i in range(3):
                source.add_memory(f"project {p} fact {i}")
            source.close()


@pytest.mark.parametrize("files", sizes(full=[100_000], ci=[20_000]), ids=lambda n: f"{n // 1000}k files")
def test_discover_against_one_walk(files: int) -> None:
    home = cached_store("discover-home", files, HOME_VERSION, build_home)
    answers: dict[str, set[str]] = {}

    def project() -> None:
        found = discover([home])
        assert all(store.memories == 3 for store in found)
        answers["project"] = {str(store.path) for store in found}

    def baseline() -> None:
        answers["baseline"] = {folder for folder, _dirs, names in os.walk(home) if "memory.db" in names}

    project_s, baseline_s = paired_medians_s(project, baseline, repeat=5, warmup=1)
    assert answers["project"] == answers["baseline"] and len(answers["project"]) == round(files * STORES_PER_FILE)
    row = record(Row("checks", f"discover ({len(answers['project'])} stores, with counts)", files, project_s,
                     "one os.walk", baseline_s, 3.0, guard=6.0))
    assert row.bounded
