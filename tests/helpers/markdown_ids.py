"""Markdown ids are keyed by content; tests name blocks by file and first line instead."""

from __future__ import annotations

from pathlib import Path

from mnemoscope.storage import Kind, MemoryQuery, MemoryStore, open_store


def md_id(store_or_path: MemoryStore | Path, rel: str, line: int) -> str:
    """The id of the markdown block of rel that starts at line (1-based)."""
    if not isinstance(store_or_path, MemoryStore):
        with open_store(store_or_path) as store:
            return md_id(store, rel, line)
    query = MemoryQuery(kinds=(Kind.MARKDOWN,), statuses=())
    for memory in store_or_path.page(query, limit=store_or_path.count(query)):
        if memory.source.path == rel and memory.source.line_start == line:
            return memory.id
    raise AssertionError(f"no markdown block starts at {rel}:{line}")
