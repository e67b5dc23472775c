"""Everything a store holds, read straight from disk, to compare before and after."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import chromadb
from chromadb.config import Settings

CONTENT_TABLES = ("memories", "relations", "entities", "sessions", "turns", "scratchpad")


def state_of(root: Path) -> dict[str, Any]:
    root = Path(root)
    state: dict[str, Any] = {"files": {}, "sql": {}, "chroma": {}}
    for path in sorted(root.rglob("*.md")):
        state["files"][path.relative_to(root).as_posix()] = path.read_bytes()
    db = root / "memory.db"
    if db.exists():
        con = sqlite3.connect(db)
        try:
            for table in CONTENT_TABLES:
                state["sql"][table] = con.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall()
        finally:
            con.close()
    vectors = root / "vectors" if (root / "vectors").is_dir() else root
    if (vectors / "chroma.sqlite3").exists():
        client = chromadb.PersistentClient(path=str(vectors), settings=Settings(anonymized_telemetry=False))
        for col in client.list_collections():
            name = col if isinstance(col, str) else col.name
            got = client.get_collection(name).get(include=["documents", "metadatas", "embeddings"])
            records = {}
            for i, rid in enumerate(got["ids"]):
                records[rid] = (
                    got["documents"][i],
                    tuple(sorted((got["metadatas"][i] or {}).items())),
                    tuple(round(float(x), 5) for x in got["embeddings"][i]),
                )
            state["chroma"][name] = records
    return state


def sql_rows(root: Path, sql: str, *params: Any) -> list[tuple]:
    con = sqlite3.connect(Path(root) / "memory.db")
    try:
        return con.execute(sql, params).fetchall()
    finally:
        con.close()
