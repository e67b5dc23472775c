"""Opening a store: every part a path holds in one MemoryStore, a new workspace made and never
made over a store, and each path that holds no store answered with what to do instead."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from mnemoscope.storage import Curator, MemoryQuery
from mnemoscope.storage.embedders.base import HashingEmbedder
from mnemoscope.storage.errors import StoreError, UnmappedTableError, UnreadableStoreError, WrapsStoresError
from mnemoscope.storage.journal.log import Journal
from mnemoscope.storage.model import Kind
from mnemoscope.storage.native.markdown.source import MarkdownSource
from mnemoscope.storage.opening import built, create_workspace, open_store
from mnemoscope.storage.source import StoreParts


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
