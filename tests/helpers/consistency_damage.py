"""Damage of every native kind, planted in a demo workspace with the raw tools (sqlite3 on
memory.db, chromadb's own client on vectors/, plain file edits on markdown)."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import chromadb
from chromadb.config import Settings


def rows(path: Path, sql: str, params: tuple = ()) -> list[tuple]:
    con = sqlite3.connect(path / "memory.db")
    try:
        return con.execute(sql, params).fetchall()
    finally:
        con.close()


def plant_damage(path: Path) -> dict[str, str]:
    """One inconsistency of every native kind but vector-dimension (see its own test); returns
    each kind's record id as the check should report it."""
    mirrored = rows(path, "SELECT id, md_file, content FROM memories WHERE md_file IS NOT NULL ORDER BY id")
    plain = [r[0] for r in rows(path, "SELECT id FROM memories WHERE md_file IS NULL ORDER BY id")]
    (gone_id, gone_file, _), (unbulleted, unbulleted_file, unbulleted_text), (edited, edited_file, edited_text) = mirrored[:3]
    no_vector, tampered, relabelled, stale_fts, no_fts = plain[:5]

    con = sqlite3.connect(path / "memory.db")
    with con:
        con.execute("DELETE FROM memories WHERE id = ?", (gone_id,))  # its vector and bullet stay behind
        (rowid, content, tags), = con.execute("SELECT rowid, content, tags FROM memories WHERE id = ?", (stale_fts,))
        con.execute("INSERT INTO memories_fts(memories_fts, rowid, content, tags) VALUES ('delete', ?, ?, ?)",
                    (rowid, content, tags))
        con.execute("INSERT INTO memories_fts(rowid, content, tags) VALUES (?, 'words nobody wrote', '[]')", (rowid,))
        (rowid_missing, content, tags), = con.execute("SELECT rowid, content, tags FROM memories WHERE id = ?", (no_fts,))
        con.execute("INSERT INTO memories_fts(memories_fts, rowid, content, tags) VALUES ('delete', ?, ?, ?)",
                    (rowid_missing, content, tags))
    con.close()

    client = chromadb.PersistentClient(path=str(path / "vectors"), settings=Settings(anonymized_telemetry=False))
    try:
        col = client.get_collection("memories", embedding_function=None)
        col.delete(ids=[no_vector])
        noise = random.Random(3)
        col.update(ids=[tampered], embeddings=[[noise.uniform(-1, 1) for _ in range(256)]])
        col.update(ids=[relabelled], metadatas=[{"status": "archived"}])
    finally:
        client.close()

    unbulleted_path = path / unbulleted_file
    lines = unbulleted_path.read_text(encoding="utf-8").splitlines(keepends=True)
    unbulleted_path.write_text("".join(ln for ln in lines if unbulleted_text not in ln), encoding="utf-8")
    edited_path = path / edited_file
    edited_path.write_text(edited_path.read_text(encoding="utf-8").replace(
        edited_text, edited_text.replace("keep the public API stable", "keep the public API frozen")), encoding="utf-8")

    from mnemoscope.storage.native.markdown.blocks import record_id_for as block_id

    gone_text = next(r[2] for r in mirrored if r[0] == gone_id)
    return {
        "missing-vector": f"vec:memories:{no_vector}",
        "orphan-vector": f"vec:memories:{gone_id}",
        "stale-vector": f"vec:memories:{tampered}",
        "vector-metadata-mismatch": f"vec:memories:{relabelled}",
        "missing-bullet": block_id(unbulleted_file, unbulleted_text),
        "orphan-bullet": block_id(gone_file, gone_text),
        "text-mismatch": block_id(edited_file, edited_text.replace("stable", "frozen")),
        "stale-fts": f"fts:{rowid}",
        "missing-fts": f"fts:{rowid_missing}",
    }


def found(report) -> dict[str, list[str]]:
    return {kind: [f.record for f in report.items(kind)] for kind in report.counts()}

