"""Mnemoscope's own JSONL export, read back: one memory per line, as ``Memory.to_dict`` writes it.

``mnemoscope export --format jsonl`` writes every memory of a store (every status) with its
layer, channel, tags, times, counters, provenance and metadata. Opened, the file lists those
memories read-only; imported (``mnemoscope import export.jsonl DEST``), it restores them:
transfer.py keeps each memory's id where it was a memory.db row, and its provenance as it was.
A line that is not such a record is left out and reported, never guessed at.

The CSV export (the window's File > Export, one row per memory with the columns CSV_HEADER
names) is read back the same way: it restores content, layer, channel, tags, status, times,
counters, salience and confidence. It has no provenance, metadata or source column, so its
memories come back without them, under new ids. The markdown export is a document to read (tags,
times and provenance left out), not a copy: it is not read back.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

from .. import bounded_json
from ..detect.looks import is_file
from ..model import GLOBAL_CHANNEL, OPTIONAL_FIELDS, Kind, Layer, Memory, Provenance, SourceRef, Status
from ..source import Capabilities, revision_of
from ..timeutil import parse_time, utcnow
from .base import Contents, FormatSource
from .match import FormatMatch

FORMAT = "mnemoscope-export"
SUFFIX = ".jsonl"
CSV_SUFFIX = ".csv"
# The CSV export's columns, in order (transfer.CSV_FIELDS writes them): its header is what
# detection checks.
CSV_HEADER = ("id", "channel", "layer", "status", "content", "created_at", "updated_at", "last_accessed",
              "access_count", "salience", "confidence", "tags")
# The keys every line of an export has (Memory.to_dict): what detection checks on the first line.
RECORD_KEYS = frozenset({"id", "content", "layer", "channel", "source", "status", "provenance"})


class ExportSource(FormatSource):
    kind = Kind.MARKDOWN  # a text file beside the workspace's markdown, not a database
    format = FORMAT
    label = "Mnemoscope JSONL export"
    keeps = frozenset(OPTIONAL_FIELDS)  # what the exported store kept (null where it kept none)
    read_only_reason = "an export is a copy; import it into a workspace to curate it"

    def __init__(self, path: Path) -> None:
        super().__init__(path.parent, [path])
        if path.suffix.lower() == CSV_SUFFIX:
            self.label = "Mnemoscope CSV export"

    def capabilities(self, record_id: str | None = None) -> Capabilities:
        return Capabilities(read_only=True, read_only_reason=self.read_only_reason, keyword_search=True)

    def load(self) -> Contents:
        contents = Contents()
        path = self.files[0]
        seen: set[str] = set()
        with open(path, encoding="utf-8", errors="replace", newline="") as handle:
            records = _csv_records(handle) if path.suffix.lower() == CSV_SUFFIX else _jsonl_records(handle)
            for number, record in records:
                try:
                    if isinstance(record, ValueError):  # a line that is not JSON
                        raise record
                    memory = _memory(record, path.name, number)
                except (ValueError, TypeError, KeyError, AttributeError) as exc:
                    contents.problems.append(f"{path.name}:{number} is not an exported memory ({exc}); left out")
                    continue
                if memory.id in seen:
                    contents.problems.append(f"{path.name}:{number} repeats {memory.id}; the first one is read")
                    continue
                seen.add(memory.id)
                contents.memories.append(memory)
        return contents


def _jsonl_records(handle: Any) -> Iterator[tuple[int, Any]]:
    for number, line in enumerate(handle, start=1):
        if line.strip():
            try:
                yield number, bounded_json.loads(line)
            except ValueError as exc:
                yield number, exc


def _csv_records(handle: Any) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each row of a CSV export as the record the JSONL export would hold, with the line it starts
    on; an empty cell is a value the export did not have."""
    import csv

    reader = csv.DictReader(handle)
    start = reader.line_num + 2  # the header's line, then the first row's
    for row in reader:
        record: dict[str, Any] = {k: v for k, v in row.items() if k in CSV_HEADER and v not in ("", None)}
        record["content"] = row.get("content") or ""
        record["channel"] = row.get("channel") or ""
        record["tags"] = [t for t in (row.get("tags") or "").split(";") if t]
        record |= {"provenance": {}, "metadata": {}, "source": {"kind": "csv", "format": FORMAT}}
        yield start, record
        start = reader.line_num + 1


def _memory(record: dict[str, Any], file_name: str, line: int) -> Memory:
    if not isinstance(record, dict) or not RECORD_KEYS <= record.keys():
        raise ValueError("missing " + ", ".join(sorted(RECORD_KEYS - set(record))) if isinstance(record, dict)
                         else "not a JSON object")
    content = record["content"]
    if not isinstance(content, str) or not isinstance(record["id"], str) or not record["id"]:
        raise TypeError("id and content must be text")
    provenance = record["provenance"] or {}
    created = parse_time(record.get("created_at")) or utcnow()
    updated = parse_time(record.get("updated_at")) or created
    metadata = record.get("metadata") or {}
    return Memory(
        id=record["id"],
        source=SourceRef(Kind.MARKDOWN, f"{file_name}:{line}", path=file_name, line_start=line, line_end=line,
                         format=FORMAT),
        layer=Layer(record["layer"]),
        channel=record["channel"] or GLOBAL_CHANNEL,
        content=content,
        created_at=created,
        updated_at=updated,
        last_accessed=parse_time(record.get("last_accessed")) or updated,
        access_count=_number(record.get("access_count"), int),
        salience=_number(record.get("salience"), float),
        confidence=_number(record.get("confidence"), float),
        conversations=_number(record.get("conversations"), int),
        tags=tuple(str(t) for t in record.get("tags") or ()),
        metadata={**metadata, "exported_source": record["source"]} if isinstance(metadata, dict) else {},
        status=Status(record["status"]),
        provenance=Provenance(
            promoted_from=provenance.get("promoted_from"),
            derived_from=tuple(provenance.get("derived_from") or ()),
            imported_from=provenance.get("imported_from"),
        ),
        revision=revision_of(record),
    )


def was_memory_db_row(memory: Memory) -> bool:
    """Whether an exported memory was a row of memory.db (its id then names it there too)."""
    source = memory.metadata.get("exported_source") or {}
    return source.get("kind") in (Kind.SQLITE.value, Kind.POSTGRESQL.value) and not source.get("format")


def _first_record(path: Path) -> dict[str, Any] | None:
    try:
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    record = bounded_json.loads(line)
                    return record if isinstance(record, dict) else None
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return None


def _csv_header(path: Path) -> tuple[str, ...]:
    import csv  # (imported for a .csv file only: detection asks every folder)

    try:
        with open(path, encoding="utf-8", newline="") as handle:
            return tuple(next(csv.reader(handle), ()))
    except (OSError, UnicodeDecodeError, csv.Error):
        return ()


def detect(path: Path) -> list[FormatMatch]:
    if path.suffix.lower() == CSV_SUFFIX and is_file(path):
        if _csv_header(path) != CSV_HEADER:
            return []
        return [FormatMatch(FORMAT, "Mnemoscope CSV export", path, open=partial(ExportSource, path), journal_dir=None)]
    if path.suffix != SUFFIX or not is_file(path):
        return []
    record = _first_record(path)
    if record is None or not RECORD_KEYS <= record.keys():
        return []
    return [FormatMatch(FORMAT, ExportSource.label, path, open=partial(ExportSource, path), journal_dir=None)]


def _number(value: Any, kind: type[float] | type[int]) -> Any:
    """A counter or score as exported; None (or an empty CSV cell) where the exported store kept none."""
    return None if value in (None, "") else kind(value)
