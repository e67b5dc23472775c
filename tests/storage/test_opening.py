"""Opening a store: what a path holds (the native kinds and where each lives, foreign formats
claiming their files from the native reading, the stores a folder holds a few levels down, a table
mapping kept only for a SQLite file no format reads); every part a path holds in one MemoryStore, a
new workspace made and never made over a store, and each path that holds no store answered with
what to do instead. (The server openers: test_opening_servers.py.)"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from formats.test_mem0 import _template, mem0_store  # noqa: F401 (fixtures)
from mnemoscope.storage import Curator, MemoryQuery
from mnemoscope.storage.embedders.base import HashingEmbedder
from mnemoscope.storage.errors import StoreError, UnmappedTableError, UnreadableStoreError, WrapsStoresError
from mnemoscope.storage.journal.log import Journal
from mnemoscope.storage.model import Kind
from mnemoscope.storage.native.markdown.source import MarkdownSource
from mnemoscope.storage.opening import (
    built,
    create_workspace,
    detect,
    detect_everything,
    open_store,
    remember_mapping,
    stores_in,
)
from mnemoscope.storage.source import StoreParts
from mnemoscope.storage.detect.table_mapping import TableMapping, remembered_mapping


def _table(path: Path, table: str) -> Path:
    con = sqlite3.connect(path)
    with con:
        con.execute(f"CREATE TABLE {table} (id TEXT PRIMARY KEY, body TEXT)")
        con.execute(f"INSERT INTO {table} VALUES ('f1', 'Dana prefers tea')")
    con.close()
    return path


def test_each_native_kind_is_found_where_it_lives(demo_path: Path, markdown_only: Path, chroma_only: Path,
                                                  tmp_path: Path) -> None:
    assert detect(demo_path) == {Kind.SQLITE: demo_path / "memory.db", Kind.CHROMA: demo_path / "vectors",
                                 Kind.MARKDOWN: demo_path}
    assert detect(demo_path / "memory.db") == {Kind.SQLITE: demo_path / "memory.db"}
    assert detect(demo_path / "vectors" / "chroma.sqlite3") == {Kind.CHROMA: demo_path / "vectors"}
    assert detect(markdown_only) == {Kind.MARKDOWN: markdown_only}
    assert detect(chroma_only) == {Kind.CHROMA: chroma_only}
    (tmp_path / "empty").mkdir()
    assert detect(tmp_path / "empty") == {}
    assert detect(demo_path / "MEMORY.md") == {}


def test_a_format_claims_its_files_from_the_native_reading(mem0_store) -> None:  # noqa: F811 (the fixture)
    root, _ids = mem0_store
    found, matches = detect_everything(root)
    assert [m.format for m in matches] == ["mem0"]
    assert Kind.CHROMA not in found  # mem0's Chroma directory is read as mem0's, not as a bare one


def test_detection_sees_a_part_added_since_the_last_look(sqlite_only: Path) -> None:
    assert detect_everything(sqlite_only) == ({Kind.SQLITE: sqlite_only / "memory.db"}, [])
    (sqlite_only / "MEMORY.md").write_text("# Memory\n\n- Dana prefers tea\n", encoding="utf-8")
    found, _ = detect_everything(sqlite_only)
    assert set(found) == {Kind.SQLITE, Kind.MARKDOWN}


def test_stores_are_listed_under_a_folder_each_once_and_not_walked_into(demo_path: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(demo_path, home / "projects" / "demo")
    shutil.copytree(demo_path, home / "notes", ignore=shutil.ignore_patterns("memory.db*", "vectors"))
    (home / "apps").mkdir()
    _table(home / "apps" / "facts.db", "facts")
    _table(home / "apps" / "cache.db", "cache")  # an application's own database: not listed
    (home / "node_modules" / "pkg").mkdir(parents=True)
    shutil.copytree(demo_path, home / "node_modules" / "pkg" / "demo")  # skipped: never stores, often huge
    walked: list[Path] = []
    found = stores_in([home, home / "notes"], max_depth=3, progress=walked.append)
    assert found == [
        (home / "apps" / "facts.db", "SQLite memory table facts (not mapped yet)"),
        (home / "notes", "Mnemoscope workspace (markdown)"),
        (home / "projects" / "demo", "Mnemoscope workspace (memory.db, Chroma, markdown)"),
    ]
    assert home / "projects" / "demo" / "memory" not in walked  # a store is not walked into
    assert [p for p, _ in stores_in([home], max_depth=1)] == [home / "apps" / "facts.db", home / "notes"]
    assert stores_in([home], max_depth=3, cancelled=lambda: True) == []
    assert stores_in([home], max_depth=3, max_folders=1) == []


def test_a_mapping_is_remembered_only_for_a_file_no_format_reads(
    demo_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MNEMOSCOPE_HOME", str(tmp_path / "mnemoscope-home"))
    notes = _table(tmp_path / "app.db", "notes")
    mapping = TableMapping("notes", {"content": "body", "id": "id"})
    kept = remember_mapping(notes, mapping)
    assert kept.parent == tmp_path / "mnemoscope-home" and remembered_mapping(notes) == mapping
    with open_store(notes) as store:  # the mapping opens it
        assert [m.content for m in store.page()] == ["Dana prefers tea"]
    with pytest.raises(UnreadableStoreError, match="already read as a Mnemoscope store"):
        remember_mapping(demo_path / "memory.db", TableMapping("memories", {"content": "content", "id": "id"}))
    with pytest.raises(UnreadableStoreError, match="cannot be mapped so"):
        remember_mapping(notes, TableMapping("notes", {"content": "text"}))
    remember_mapping(notes, None)
    assert remembered_mapping(notes) is None


def test_every_part_of_a_workspace_opens_as_one_store(demo_path: Path) -> None:
    with open_store(demo_path) as store:
        assert store.kinds == [Kind.SQLITE, Kind.CHROMA, Kind.MARKDOWN]
        assert store.location == str(demo_path) and store.opened_as == (str(demo_path), None)
        assert not store.read_only and store.count() > 200
    with open_store(demo_path / "memory.db", read_only=True) as store:  # a file opens its folder's store
        assert store.root == demo_path and store.read_only
        assert Kind.SQLITE in store.kinds


def test_a_single_part_opens_alone(markdown_only: Path, chroma_only: Path) -> None:
    with open_store(markdown_only) as store:
        assert store.kinds == [Kind.MARKDOWN] and store.count() > 100
        Curator(store).edit(store.page(MemoryQuery(), 1)[0].id, content="- Dana prefers green tea")
    assert (markdown_only / ".mnemoscope").is_dir()  # its journal is a sidecar beside the files
    with open_store(chroma_only, read_only=True) as store:
        assert store.kinds == [Kind.CHROMA] and store.count() > 0


def test_a_new_workspace_is_made_records_its_embedder_and_is_never_made_over_a_store(tmp_path: Path,
                                                                                     demo_path: Path) -> None:
    with create_workspace(tmp_path / "new", HashingEmbedder(64)) as store:
        assert store.count() == 0 and store.settings.embedder == "mnemoscope-hashing-64"
        memory_id = store.add_memory("Dana prefers tea", channel="_global")
    assert sorted(p.name for p in (tmp_path / "new").iterdir() if not p.name.startswith("memory.db-")) == [
        "memory.db", "vectors"]
    with open_store(tmp_path / "new") as store:
        assert store.get(memory_id).content == "Dana prefers tea"
        assert store.embedder().name == "mnemoscope-hashing-64"
    with pytest.raises(StoreError, match="already holds a memory store; not overwriting it"):
        create_workspace(demo_path)
    (tmp_path / "folder-with-files").mkdir()
    (tmp_path / "folder-with-files" / "readme.txt").write_text("not a store")
    create_workspace(tmp_path / "folder-with-files").close()  # other files are no store


def test_a_missing_path_is_unreadable(tmp_path: Path) -> None:
    with pytest.raises(UnreadableStoreError, match=f"{tmp_path / 'nowhere'} does not exist"):
        open_store(tmp_path / "nowhere")
    with pytest.raises(UnreadableStoreError, match="does not exist"):
        open_store(tmp_path / "nowhere" / "memory.db")


def test_an_empty_folder_and_a_stray_file_say_what_a_store_would_hold(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(UnreadableStoreError, match="Nothing recognisable in folder") as refused:
        open_store(tmp_path / "empty")
    assert not isinstance(refused.value, WrapsStoresError)
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(UnreadableStoreError, match="Nothing recognisable in file .*MEMORY.md"):
        open_store(tmp_path / "notes.txt")


def test_a_sqlite_file_holding_no_store_offers_a_table_mapping(tmp_path: Path) -> None:
    path = tmp_path / "app.db"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE notes (id TEXT PRIMARY KEY, body TEXT)")
    con.close()
    with pytest.raises(UnmappedTableError, match="Map one of its tables to memories") as refused:
        open_store(path)
    assert refused.value.path == str(path) and refused.value.exit_code == 2


def test_a_folder_wrapping_stores_lists_them(demo_path: Path, markdown_only: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "work").mkdir(parents=True)
    demo_path.rename(home / "work" / "agent")
    markdown_only.rename(home / "notes")
    with pytest.raises(WrapsStoresError, match="is no memory store itself but holds 2") as refused:
        open_store(home)
    assert refused.value.folder == str(home)
    assert refused.value.inside == [(str(home / "notes"), "Mnemoscope workspace (markdown)"),
                                    (str(home / "work" / "agent"), "Mnemoscope workspace (memory.db, Chroma, markdown)")]
    assert f"mnemoscope discover {home}" in str(refused.value)


def test_built_makes_one_store_over_what_an_opener_found(markdown_only: Path, tmp_path: Path) -> None:
    source = MarkdownSource.open(markdown_only)
    journal = Journal.sidecar(tmp_path / "journal", read_only=False)
    store = built(StoreParts(markdown_only, [source], journal, location="notes on a share",
                             opened_as=("notes on a share", None)))
    assert store.location == "notes on a share" and store.opened_as == ("notes on a share", None)
    assert store.kinds == [Kind.MARKDOWN]
    store.close()
