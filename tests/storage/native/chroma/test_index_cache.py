"""Where a local directory's record index is kept (index_cache.py): in this process and, when
big, in the user's cache folder (never in the store), found again only at the change token it
was made at; an unchanged directory opened again reads its kept index instead of its records."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.chroma_dirs import chroma_client
from mnemoscope.storage import Curator, MemoryQuery, open_store
from mnemoscope.storage.native.chroma import index, index_cache
from mnemoscope.storage.native.chroma.index import RecordIndexBuilder
from mnemoscope.storage.native.chroma.local import RecordReading


class _OtherReading(RecordReading):
    """Records read as another tool means them (as mem0's reading does)."""


def _written(path: Path, n: int) -> None:
    """n records with text, times and channels, as an agent writes them."""
    col = chroma_client(path).get_or_create_collection("facts", embedding_function=None)
    col.add(
        ids=[f"r{i:04d}" for i in range(n)],
        embeddings=[[float(i % 7), 1.0, 0.5, float(i % 3)] for i in range(n)],
        documents=[f"fact {i} about topic {i % 9}" for i in range(n)],
        metadatas=[{"created_at": f"2026-01-{1 + i % 28:02d}T10:00:00Z", "channel": ["_global", "alpha"][i % 2]}
                   for i in range(n)],
    )


def _index(token: str, n: int) -> index.RecordIndex:
    builder = RecordIndexBuilder(token)
    for i in range(n):
        builder.add(f"r{i}", {"status": "active", "salience": i / max(n, 1)}, None)
    return builder.index()


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache folder of the test's own, and nothing kept in this process from another test."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(index_cache, "_INDEXES", {})
    return tmp_path / "cache"


def test_the_key_names_the_database_the_collection_and_the_reading(tmp_path: Path) -> None:
    db = tmp_path / "chroma.sqlite3"
    key = index_cache.cache_key(db, "c1", RecordReading)
    assert key == index_cache.cache_key(tmp_path / "." / "chroma.sqlite3", "c1", RecordReading)
    assert len({key, index_cache.cache_key(db, "c2", RecordReading), index_cache.cache_key(db, "c1", _OtherReading),
                index_cache.cache_key(tmp_path / "other.sqlite3", "c1", RecordReading)}) == 4


def test_an_index_is_found_again_only_at_its_token(_own_cache: Path) -> None:
    assert index_cache.cached_index("k", "t1") is None
    small = _index("t1", 3)
    index_cache.keep_index(small, "k")
    assert index_cache.cached_index("k", "t1") is small
    assert index_cache.cached_index("k", "t2") is None
    assert not list(_own_cache.rglob("*.npz")), "a small index is read again, not written to a file"


def test_a_big_index_is_kept_in_the_cache_folder_and_loaded_from_there(
    _own_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(index_cache, "_PERSIST_FROM", 10)
    big = _index("t1", 12)
    index_cache.keep_index(big, "k")
    [kept] = _own_cache.rglob("*.npz")
    index_cache._INDEXES.clear()  # another process, or a later open
    loaded = index_cache.cached_index("k", "t1")
    assert loaded is not None and loaded is not big
    assert loaded.ids_at(slice(None)) == big.ids_at(slice(None)) and (loaded.salience == big.salience).all()
    index_cache._INDEXES.clear()
    assert index_cache.cached_index("k", "t2") is None and kept.exists()


def test_the_process_and_the_folder_keep_only_the_last_few(_own_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(index_cache, "_PERSIST_FROM", 1)
    monkeypatch.setattr(index_cache, "_PERSISTED_KEPT", 3)
    for n in range(6):
        index_cache.keep_index(_index(f"t{n}", 2), f"k{n}")
    assert list(index_cache._INDEXES) == [f"k{n}" for n in range(6 - index_cache._INDEXES_KEPT, 6)]
    assert len(list(_own_cache.rglob("*.npz"))) == 3


def test_the_index_is_kept_between_opens_until_the_directory_changes(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(index_cache, "_PERSIST_FROM", 1)
    _written(tmp_path / "store", n=30)
    with open_store(tmp_path / "store") as store:
        first = [m.id for m in store.page(MemoryQuery(), 20)]
    assert list((tmp_path / "cache").rglob("*.npz"))
    index_cache._INDEXES.clear()
    built: list[int] = []
    real = index.RecordIndexBuilder.index

    def counted(self):
        built.append(1)
        return real(self)

    monkeypatch.setattr(index.RecordIndexBuilder, "index", counted)
    with open_store(tmp_path / "store") as store:
        assert [m.id for m in store.page(MemoryQuery(), 20)] == first
        assert not built, "an unchanged directory reads its kept index"
        target = first[0]
        Curator(store).edit(target, content="edited through Mnemoscope")
        assert store.get(target).content == "edited through Mnemoscope"
        assert target in [m.id for m in store.page(MemoryQuery(contains="edited through"), 20)]
    assert built, "a changed directory builds its index again"
