"""AgenticX: its session store, its workspace memory index and its workspace.

Read from agenticx 0.6.5 (agenticx/memory/session_store.py, workspace_memory.py).
``~/.agenticx/memory/sessions.sqlite`` (``SessionStore``) holds per session a
scratchpad (``scratchpad``: one row per key, values JSON behind the
``"\\x1eagx-json-v1:"`` prefix, older rows plain strings), ``todos`` (a JSON list),
``session_summaries`` (append-only, the newest eight per session kept) and
``session_messages`` (a search copy of each session's messages.json, with an
FTS5 index kept by triggers). ``~/.agenticx/memory/main.sqlite``
(``WorkspaceMemoryStore``) indexes the workspace markdown (``files``, ``chunks``,
contentless FTS5 ``chunks_fts``) and archives conversation turns (``turns`` +
contentless ``turns_fts``). The workspace itself is ``~/.agenticx/workspace``:
MEMORY.md, IDENTITY.md, USER.md, SOUL.md and memory/*.md, read as workspace
markdown.

Session summaries are episodic memories, editable and deletable: a plain table
AgenticX reads as is, except that it lists sessions by their summaries, so the
last summary of a session is not deleted. The index is read-only: its FTS5 tables are contentless, so
a changed or removed row cannot be taken out of them, and AgenticX rebuilds the
chunks from the markdown anyway (edit the workspace files instead). What the
index holds that no longer matches the workspace is reported as problems, and
chunks of files that are gone are shown so their text is not lost.
"""

from __future__ import annotations

import json
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

from ..errors import UnsupportedError
from ..looking import is_dir
from ..model import GLOBAL_CHANNEL, Layer, ScratchEntry, Session, Turn
from ..native.markdown import MarkdownSource
from ..source import Snapshot
from ..timeutil import parse_time, utcnow
from . import FormatMatch
from .base import (
    Contents,
    FormatSource,
    index_drift,
    json_object,
    make_memory,
    plain_row,
    reading,
    sqlite_files,
    sqlite_tables,
)

SCRATCHPAD_JSON_PREFIX = "\x1eagx-json-v1:"
SESSION_TABLES = {
    "scratchpad": {"session_id", "key", "value", "updated_at"},
    "session_summaries": {"id", "session_id", "summary", "created_at"},
}
INDEX_TABLES = {
    "files": {"path", "hash", "mtime", "size"},
    # created_at, not OpenClaw's hash/updated_at: the two indexes look alike otherwise.
    "chunks": {"id", "path", "text", "start_line", "end_line", "created_at"},
}


def decode_scratchpad_value(raw: str) -> Any:
    """What AgenticX's ``_decode_scratchpad_value`` returns: typed JSON behind the
    prefix, legacy rows as the plain string they are."""
    if not raw.startswith(SCRATCHPAD_JSON_PREFIX):
        return raw
    try:
        return json.loads(raw[len(SCRATCHPAD_JSON_PREFIX):])
    except json.JSONDecodeError:
        return raw


def _shown(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


class AgenticxSessionSource(FormatSource):
    format = "agenticx"
    label = "AgenticX session store"
    editable_fields = ("content",)

    def __init__(self, path: Path, tables: dict[str, set[str]]) -> None:
        super().__init__(path.parent, [path])
        self.path = path
        self.tables = tables
        self.id_prefix = f"agx:{path.name}:"

    def load(self) -> Contents:
        contents = Contents()
        with reading(self.path) as con:
            summaries = con.execute("SELECT * FROM session_summaries ORDER BY session_id, created_at").fetchall()
            scratch = con.execute("SELECT * FROM scratchpad ORDER BY session_id, key").fetchall()
            todos = con.execute("SELECT * FROM todos").fetchall() if "todos" in self.tables else []
            messages = (
                con.execute("SELECT * FROM session_messages ORDER BY session_id, id").fetchall()
                if "session_messages" in self.tables else []
            )
        for row in summaries:
            meta = json_object(row["metadata"]) if "metadata" in row.keys() else {}
            contents.memories.append(
                make_memory(
                    self, row["id"], row["summary"], location=f"{self.path.name}:session_summaries/{row['id']}",
                    path=self.path.name, created=parse_time(row["created_at"]) or utcnow(),
                    layer=Layer.EPISODIC, channel=row["session_id"],
                    metadata={"session_id": row["session_id"], **{f"summary.{k}": v for k, v in meta.items()}},
                    snapshot=plain_row(row),
                )
            )
        for row in scratch:
            value = decode_scratchpad_value(str(row["value"]))
            at = parse_time(row["updated_at"]) or utcnow()
            contents.scratch.append(ScratchEntry(row["session_id"], row["key"], _shown(value), at))
        for row in todos:
            at = parse_time(row["updated_at"]) or utcnow()
            contents.scratch.append(ScratchEntry(row["session_id"], "todos", str(row["data"]), at))
        for row in messages:
            turns = contents.turns.setdefault(row["session_id"], [])
            at = parse_time(row["timestamp"]) or parse_time(row["indexed_at"]) or utcnow()
            turns.append(Turn(row["session_id"], len(turns), row["role"], row["content"], at))
        starts: dict[str, datetime] = {}
        for session_id, at in (
            [(m.channel, m.created_at) for m in contents.memories]
            + [(e.session_id, e.updated_at) for e in contents.scratch]
            + [(sid, t.timestamp) for sid, ts in contents.turns.items() for t in ts]
        ):
            starts[session_id] = min(starts.get(session_id, at), at)
        for session_id in sorted(starts):
            turns = contents.turns.get(session_id, [])
            contents.sessions.append(Session(session_id, session_id, f"session {session_id}", starts[session_id], len(turns)))
        return contents

    def read_record(self, record_id: str) -> Snapshot | None:
        with reading(self.path) as con:
            row = con.execute("SELECT * FROM session_summaries WHERE id = ?", (self._row_id(record_id),)).fetchone()
        return plain_row(row) if row is not None else None

    def _row_id(self, record_id: str) -> str:
        return record_id[len(self.id_prefix):]

    def edit_snapshot(self, snap: Snapshot, requested: dict[str, Any], now: str) -> Snapshot:
        return {**snap, "summary": requested["content"]}

    def write_record(self, record_id: str, expected: Snapshot | None, new: Snapshot | None) -> Snapshot | None:
        return self.write_row(
            self.path, "session_summaries", {"id": self._row_id(record_id)}, record_id, expected, new,
            updates=("summary",), before=self._refuse_last_summary,
        )

    @staticmethod
    def _refuse_last_summary(con: Any, current: Any, new: Snapshot | None) -> None:
        if current is None or new is not None:
            return
        (others,) = con.execute(
            "SELECT count(*) FROM session_summaries WHERE session_id = ? AND id != ?", (current["session_id"], current["id"])
        ).fetchone()
        if not others:
            raise UnsupportedError(
                f"AgenticX lists sessions by their summaries; deleting the last one would hide session "
                f"{current['session_id']} from its history. Edit the summary instead."
            )


class AgenticxIndexSource(FormatSource):
    format = "agenticx-index"
    label = "AgenticX workspace memory index"
    read_only_reason = (
        "its FTS5 indexes are contentless, so a changed or removed row cannot be taken out of them; "
        "AgenticX rebuilds chunks from the workspace markdown, edit those files instead"
    )

    def __init__(self, path: Path, tables: dict[str, set[str]]) -> None:
        super().__init__(path.parent, [path])
        self.path = path
        self.tables = tables
        self.id_prefix = f"agx-index:{path.name}:"
        self._indexed: list[Path] = []

    def watched(self) -> list[Path]:
        # The drift found in the index changes when the indexed markdown does.
        return self.files + self._indexed

    def load(self) -> Contents:
        contents = Contents()
        with reading(self.path) as con:
            files = con.execute("SELECT * FROM files ORDER BY path").fetchall()
            chunks = con.execute("SELECT rowid AS _rowid, * FROM chunks ORDER BY path, start_line").fetchall()
            turns = con.execute("SELECT * FROM turns ORDER BY session_id, turn_index").fetchall() if "turns" in self.tables else []
            dangling_fts = {
                fts: _dangling_fts_rows(con, fts, table)
                for fts, table in (("chunks_fts", "chunks"), ("turns_fts", "turns"))
                if f"{fts}_docsize" in self.tables and table in self.tables
            }
        hashes = {row["path"]: row["hash"] for row in files}
        problems, orphans = index_drift(hashes, chunks, Path, self.path.name)
        self._indexed = [Path(p) for p in sorted(hashes)]
        contents.problems += problems
        for chunk in orphans:
            self._orphan(chunk, contents)
        for fts, count in dangling_fts.items():
            if count:
                contents.problems.append(f"{fts} has {count} entr{'y' if count == 1 else 'ies'} whose row no longer exists")
        for row in turns:
            at = parse_time(row["created_at"]) or utcnow()
            contents.memories.append(
                make_memory(
                    self, row["id"], row["text"], location=f"{self.path.name}:turns/{row['id']}", path=self.path.name,
                    created=at, accessed=row["last_accessed"], access_count=row["access_count"] or 0,
                    layer=Layer.EPISODIC, channel=row["avatar_id"] or row["session_id"],
                    metadata={"session_id": row["session_id"], "role": row["role"], "turn_index": row["turn_index"]},
                    snapshot=plain_row(row),
                )
            )
        return contents

    def _orphan(self, chunk: Any, contents: Contents) -> None:
        at = parse_time(chunk["created_at"]) if "created_at" in chunk.keys() else None
        name = Path(chunk["path"]).name
        contents.memories.append(
            make_memory(
                self, chunk["id"], chunk["text"], location=f"{name}:{chunk['start_line']}-{chunk['end_line']} (file gone)",
                path=self.path.name, created=at or utcnow(), layer=Layer.SEMANTIC, channel=GLOBAL_CHANNEL,
                metadata={"indexed_path": chunk["path"], "dangling": True},
                snapshot={k: v for k, v in plain_row(chunk).items() if k != "embedding"},
            )
        )


def _dangling_fts_rows(con: Any, fts: str, table: str) -> int:
    # A contentless FTS5 table keeps one docsize row per indexed rowid.
    return con.execute(
        f'SELECT count(*) FROM "{fts}_docsize" WHERE id NOT IN (SELECT rowid FROM "{table}")'
    ).fetchone()[0]


def _has(tables: dict[str, set[str]], wanted: dict[str, set[str]]) -> bool:
    return all(cols <= tables.get(name, set()) for name, cols in wanted.items())


def detect(path: Path) -> list[FormatMatch]:
    path = Path(path)
    folders = [path, path / "memory"] if is_dir(path) else [path]
    matches = []
    for candidate in (f for folder in folders for f in sqlite_files(folder)):
        tables = sqlite_tables(candidate)
        if _has(tables, SESSION_TABLES):
            matches.append(FormatMatch(
                "agenticx", AgenticxSessionSource.label, candidate,
                open=partial(AgenticxSessionSource, candidate, tables),
            ))
        elif _has(tables, INDEX_TABLES) and "chunks_fts" in tables:
            matches.append(FormatMatch(
                "agenticx-index", AgenticxIndexSource.label, candidate,
                open=partial(AgenticxIndexSource, candidate, tables),
            ))
    workspace = path / "workspace"
    if matches and is_dir(path) and MarkdownSource.detect(workspace):
        # ~/.agenticx: the workspace beside memory/ is part of the same store.
        matches.append(FormatMatch(
            "markdown", "AgenticX workspace markdown", workspace,
            open=partial(MarkdownSource.open, workspace), journal_dir=path,
        ))
    return matches
