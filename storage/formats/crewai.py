"""CrewAI's storage folder (``db_storage_path()``: the platform data dir of the project).

Older CrewAI (0.x) keeps long-term memory in SQLite
(``long_term_memory_storage.db``, table ``long_term_memories``: task_description,
metadata JSON with agent/quality/suggestions, datetime as epoch text, score) and
short-term and entity memory as Chroma persistent directories
(``short_term/<agent roles>/``, ``entities/<agent roles>/``). CrewAI 1.x keeps one
unified memory in a LanceDB table ``memories`` under ``memory/`` (crewai 1.15
lancedb_storage.py: id, content, scope, categories_str, metadata_str, importance,
created_at, last_accessed, source, private, vector).

Long-term rows can be deleted (CrewAI looks them up by exact task description,
so editing one would orphan it). The Chroma directories open as any Chroma
directory does. LanceDB needs the optional ``lancedb`` package (the ``crewai``
extra); without it the table is said unread (storage/extras.py), never counted as empty. LanceDB
memories are read-only: an edit would need the crew's embedder for a new vector.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

from .. import bounded_json
from ..detect.looks import is_dir, is_file, names
from ..model import GLOBAL_CHANNEL, Layer, Memory, SourceRef
from ..native.chroma.local import ChromaSource
from ..source import Snapshot
from ..timeutil import parse_time, utcnow
from .base import Contents, FormatSource, json_object, make_memory, plain_row, sqlite_tables
from .match import FormatMatch
from .sql_backed import SqlFormatSource, TableSpec, row_revision

LTM_FILE = "long_term_memory_storage.db"
LTM_COLUMNS = {"id", "task_description", "metadata", "datetime", "score"}
RAG_TYPES = {"short_term": "short-term memory", "entities": "entity memory"}
LANCE_TABLE = "memories"


class CrewLongTermSource(SqlFormatSource):
    """CrewAI's long-term memories read with SQL where they live (sql_backed.py): filtered,
    counted and paged in SQLite in id order (CrewAI appends them as tasks finish), a Memory
    built only for the rows returned. The channel is metadata's agent; the time is epoch text."""

    format = "crewai"
    label = "CrewAI long-term memory"
    deletable = True
    read_only_reason = "CrewAI finds long-term memories by their exact task description, so an edit would orphan it"
    layer = Layer.PROCEDURAL

    def __init__(self, path: Path) -> None:
        super().__init__(path.parent, [path], path)
        self.id_prefix = f"crewai-ltm:{path.name}:"
        self.spec = TableSpec(
            "long_term_memories", key="id", text="task_description", channel_sql=AGENT_SQL, created_sql=EPOCH_SQL,
        )
        self._location = f"{path.name}:long_term_memories/"

    def load(self) -> Contents:
        return Contents()

    def memory_of(self, row: sqlite3.Row) -> Memory:
        meta = json_object(row["metadata"])
        created = parse_time(_epoch_text(row["datetime"])) or utcnow()
        return Memory(
            id=f"{self.id_prefix}{row['id']}",
            source=SourceRef(self.kind, f"{self._location}{row['id']}", path=self.path.name, format=self.format),
            layer=Layer.PROCEDURAL,
            channel=str(meta.get("agent") or GLOBAL_CHANNEL),
            content=ltm_text(row["task_description"], meta),
            created_at=created,
            updated_at=created,
            last_accessed=created,
            metadata={"task_description": row["task_description"], "score": row["score"],
                      **{k: v for k, v in meta.items() if k != "agent"}},
            revision=row_revision(row),
        )

    def text_sql(self) -> str:
        # What a person reads is the task and its suggestions (in metadata): both, as one JSON array.
        return "json_array(task_description, metadata)"

    def text_of(self, raw: Any) -> str:
        try:
            task, meta = bounded_json.loads(raw)
        except (TypeError, ValueError):
            return ""
        return ltm_text(task, json_object(meta))

    def odd_rows_for(self, needles: Sequence[str]) -> str:
        """Rows whose suggestions are not all text (str() writes them otherwise than JSON does),
        and, for a needle holding "; " (what joins them), rows with more than one."""
        joined = "> 1" if any(";" in n for n in needles) else "> 1e9"
        return (
            "CASE WHEN json_valid(metadata) THEN CASE WHEN json_type(metadata, '$.suggestions') = 'array' THEN "
            f"json_array_length(metadata, '$.suggestions') {joined} OR EXISTS (SELECT 1 FROM "
            "json_each(metadata, '$.suggestions') AS s WHERE s.type <> 'text') ELSE 0 END ELSE 0 END"
        )

    def _row_id(self, record_id: str) -> int:
        return int(record_id[len(self.id_prefix):])

    def read_record(self, record_id: str) -> Snapshot | None:
        rows = self.rows("SELECT * FROM long_term_memories WHERE id = ?", (self._row_id(record_id),))
        return plain_row(rows[0]) if rows else None

    def write_record(self, record_id: str, expected: Snapshot | None, new: Snapshot | None) -> Snapshot | None:
        # No updates: a long-term row is deleted or put back whole, never edited.
        return self.write_row(self.path, "long_term_memories", {"id": self._row_id(record_id)}, record_id, expected, new)


def ltm_text(task: Any, meta: dict[str, Any]) -> str:
    """A long-term memory as a person reads it: the task, then what CrewAI suggested."""
    text = task or ""
    if meta.get("suggestions"):
        text += "\nSuggestions: " + "; ".join(str(s) for s in meta["suggestions"])
    return text


# metadata's agent as the channel (a row with none is _global), as str() writes a text or an integer.
AGENT_SQL = (
    "(CASE WHEN json_valid(metadata) THEN CASE json_type(metadata, '$.agent') "
    "WHEN 'text' THEN nullif(json_extract(metadata, '$.agent'), '') "
    "WHEN 'integer' THEN nullif(CAST(json_extract(metadata, '$.agent') AS TEXT), '0') WHEN 'true' THEN 'True' END END)"
)
# The datetime column (epoch seconds as text, or milliseconds; else ISO text) as a julian day.
_NUMERIC = "(typeof(datetime) IN ('integer', 'real') OR (trim(datetime) <> '' AND trim(datetime) NOT GLOB '*[^0-9.eE+-]*'))"
EPOCH_SQL = (
    f"(CASE WHEN {_NUMERIC} THEN julianday(CAST(datetime AS REAL) / "
    "(CASE WHEN CAST(datetime AS REAL) > 1e11 THEN 1000.0 ELSE 1.0 END), 'unixepoch') ELSE datetime END)"
)


class CrewLanceSource(FormatSource):
    format = "crewai-lancedb"
    label = "CrewAI unified memory (LanceDB)"
    read_only_reason = "an edit needs the crew's embedder for a new vector; Mnemoscope reads LanceDB only"
    needs_package = ("lancedb", "crewai")

    def __init__(self, folder: Path) -> None:
        table_dir = folder / f"{LANCE_TABLE}.lance"
        super().__init__(folder, [table_dir])
        self.folder = folder
        self.id_prefix = "crewai:"

    def watched(self) -> list[Path]:
        versions = self.folder / f"{LANCE_TABLE}.lance" / "_versions"
        return sorted(versions.iterdir()) if versions.is_dir() else []

    def load(self) -> Contents:
        contents = Contents()
        if self.unread_part() is not None:
            return contents
        import lancedb

        try:
            table = lancedb.connect(str(self.folder)).open_table(LANCE_TABLE)
            columns = [f.name for f in table.schema if f.name != "vector"]
            rows = table.to_arrow().select(columns).to_pylist()
        except Exception as exc:  # lancedb raises its own and pyarrow's errors
            contents.problems.append(f"the LanceDB table {LANCE_TABLE} could not be read: {exc}")
            return contents
        for row in rows:
            scope = str(row.get("scope") or "/").strip("/")
            categories = _json_list(row.get("categories_str"))
            memory = make_memory(
                self, str(row["id"]), str(row.get("content") or ""), location=f"{LANCE_TABLE}.lance/{row['id']}",
                path=f"{LANCE_TABLE}.lance", created=row.get("created_at"), accessed=row.get("last_accessed"),
                layer=Layer.SEMANTIC, channel=scope or GLOBAL_CHANNEL, tags=categories,
                metadata={"scope": row.get("scope"), "importance": row.get("importance"),
                          "source": row.get("source") or None, "private": bool(row.get("private")),
                          **json_object(row.get("metadata_str"))},
                snapshot={k: v for k, v in row.items()},
            )
            contents.memories.append(memory)
        return contents


def _epoch_text(value: Any) -> Any:
    try:
        return float(value)
    except (TypeError, ValueError):
        return parse_time(value)


def _json_list(text: Any) -> list[str]:
    try:
        value = bounded_json.loads(text) if text else []
    except (TypeError, json.JSONDecodeError):
        return []
    return [str(v) for v in value] if isinstance(value, list) else []


def _rag_source(path: Path, kind: str) -> ChromaSource:
    source = ChromaSource.open(path, strict=True)
    source.label = f"CrewAI {RAG_TYPES[kind]} ({path.name})"
    return source


def detect(path: Path) -> list[FormatMatch]:
    if is_file(path):
        if LTM_COLUMNS <= sqlite_tables(path).get("long_term_memories", set()):
            return [FormatMatch("crewai", CrewLongTermSource.label, path, open=lambda: CrewLongTermSource(path))]
        return []
    if not is_dir(path):
        return []
    matches = []
    listed = names(path)
    ltm = path / LTM_FILE
    if LTM_FILE in listed and is_file(ltm) and LTM_COLUMNS <= sqlite_tables(ltm).get("long_term_memories", set()):
        matches.append(FormatMatch("crewai", CrewLongTermSource.label, ltm, open=lambda: CrewLongTermSource(ltm)))
    for kind in RAG_TYPES:
        for folder in sorted((path / kind).iterdir()) if kind in listed and is_dir(path / kind) else []:
            if ChromaSource.detect(folder):
                matches.append(FormatMatch(
                    "chroma", f"CrewAI {RAG_TYPES[kind]}", folder, open=partial(_rag_source, folder, kind),
                ))
    lance = f"{LANCE_TABLE}.lance"
    for folder in (path / "memory", path) if "memory" in listed or lance in listed else ():
        if is_dir(folder / lance):
            matches.append(FormatMatch(
                "crewai-lancedb", CrewLanceSource.label, folder, open=partial(CrewLanceSource, folder),
            ))
            break
    return matches
