"""Where a local directory's record indexes (index.RecordIndex) are kept between calls and opens:
the last few in this process, and the big ones in the user's cache folder (never in the store),
so that the next open of an unchanged directory loads its index instead of reading every record.
An index is found again only at the change token it was made at."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from .index import RecordIndex

_INDEX_FORMAT = 2  # 2: a record with no time in its metadata sorts by the time Chroma stored it
_INDEXES: dict[str, RecordIndex] = {}  # the last few indexes read in this process, by cache key
_INDEXES_KEPT = 4
_PERSIST_FROM = 5_000  # records from which an index is kept in the user's cache folder
_PERSISTED_KEPT = 16  # indexes kept there, the most recently written


def cache_key(db: Path, collection_id: str, reading: type) -> str:
    """The key of a collection's index: its database, the collection and how its records are read."""
    where = f"{os.path.realpath(db)}|{collection_id}|{reading.__module__}.{reading.__qualname__}|{_INDEX_FORMAT}"
    return hashlib.sha1(where.encode("utf-8", "replace")).hexdigest()


def cached_index(key: str, token: str) -> RecordIndex | None:
    """The index kept under key, made at this change token: from this process, else from the
    user's cache folder (None: none)."""
    found = _INDEXES.get(key)
    if found is None or found.token != token:
        found = RecordIndex.load(_index_cache_path(key), token)
    if found is not None:
        _remember(key, found)
    return found


def keep_index(index: RecordIndex, key: str) -> None:
    """Keep a newly built index: in this process, and in the user's cache folder when it is big."""
    _keep_on_disk(index, key)
    _remember(key, index)


def _remember(key: str, index: RecordIndex) -> None:
    _INDEXES[key] = index
    while len(_INDEXES) > _INDEXES_KEPT:
        _INDEXES.pop(next(iter(_INDEXES)))


def _index_cache_path(key: str) -> Path:
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("mnemoscope", "Mnemoscope")) / "chroma-index" / f"{key}.npz"


def _keep_on_disk(index: RecordIndex, key: str) -> None:
    """Keep the index in the user's cache folder (never in the store), the most recent few; a
    failure is no error."""
    if len(index) < _PERSIST_FROM:
        return  # read again in a moment: not worth a file
    path = _index_cache_path(key)
    index.save(path)
    try:
        kept = sorted(path.parent.glob("*.npz"), key=lambda f: f.stat().st_mtime, reverse=True)
        for old in kept[_PERSISTED_KEPT:]:
            old.unlink(missing_ok=True)
    except OSError:
        pass
