"""OpenClaw: the workspace markdown, each agent's memory index and its sessions.

A state directory (``~/.openclaw``: ``openclaw.json``, ``workspace/``, ``agents/<id>/``,
``state/openclaw.sqlite``) is one store, named OpenClaw with its workspace and each agent's
database. OpenClaw's memory is the workspace markdown (AGENTS.md, SOUL.md, USER.md, MEMORY.md,
HEARTBEAT.md, memory/YYYY-MM-DD.md), read and edited as workspace markdown, its bootstrap
templates told apart and its recall annotations read (openclaw_workspace.py). Per agent it keeps
a search index of those files and of session transcripts, in two layouts it has shipped:

- older: ``memory/<agentId>.sqlite`` (src/memory/memory-schema.ts: ``files``,
  ``chunks``, FTS5 ``chunks_fts``, sqlite-vec ``chunks_vec``) and transcripts as
  JSONL in ``agents/<agentId>/sessions/`` (``sessions.json`` names them);
- newer (2026.9.2+): ``agents/<agentId>/agent/openclaw-agent.sqlite`` with
  ``memory_index_sources``/``memory_index_chunks`` (+ FTS and vec0 tables) and
  the transcripts as ``transcript_events`` (one JSONL record per row, ordered by
  ``seq``) of ``session_windows``.

Both are read-only here: OpenClaw rebuilds the index from the markdown, and the
transcripts are the record of what was said. Index rows whose file is gone, or
whose file changed since, are reported; chunks no file holds any more are shown
as memories of the agent's channel so their text is not lost. The index's chunks
of session transcripts (source ``sessions``, path ``sessions/<agent>/<session>.jsonl``,
lines = transcript events) are shown as the agent's episodic memories, with the
provenance the index keeps of each (origin class, session kind). A transcript event
OpenClaw stored zstd-compressed (``event_zstd``) is read where the zstandard module
is installed, else counted and said unread. vec0 tables need the sqlite-vec
extension, which is not loaded: they are counted, not read.
"""

from __future__ import annotations

import json
import os
from functools import partial
from pathlib import Path
from typing import Any

from .. import bounded_json
from ..detect.looks import children, is_dir, is_file, names
from ..model import Kind, Layer, Session, Status, Turn
from ..native.markdown.source import MarkdownSource
from ..timeutil import parse_time, utcnow
from .base import (
    Contents,
    FormatSource,
    drift_findings,
    index_drift,
    make_memory,
    reading,
    sqlite_tables,
    vec0_note,
    vec0_tables,
)
from .match import FormatMatch
from .openclaw_workspace import OpenClawWorkspace

CONFIG = "openclaw.json"

AGENT_DB = "openclaw-agent.sqlite"
CHUNK_COLUMNS = {"id", "path", "source", "start_line", "end_line", "hash", "text", "updated_at"}
LAYOUTS = {
    # layout: (files table, chunks table)
    "legacy": ("files", "chunks"),
    "agent-db": ("memory_index_sources", "memory_index_chunks"),
}


class OpenClawAgentSource(FormatSource):
    format = "openclaw"
    label = "OpenClaw agent"
    read_only_reason = (
        "OpenClaw rebuilds its memory index from the workspace markdown (edit those files) "
        "and its transcripts are the record of what was said"
    )

    def __init__(
        self, agent: str, index: Path | None, layout: str, transcripts: Path | None, workspace: Path | None
    ) -> None:
        located = [p for p in (index, transcripts) if p is not None]
        super().__init__(located[0].parent, list(dict.fromkeys(located)))
        self.agent = agent
        self.index = index
        self.layout = layout
        self.transcripts = transcripts
        self.workspace = workspace
        self.label = f"OpenClaw agent {agent}"
        self.id_prefix = f"openclaw:{agent}:"
        self._indexed: list[Path] = []

    def watched(self) -> list[Path]:
        """The index, and each transcript file (a JSONL folder's files, or the agent database)."""
        watched = []
        for path in self.files:
            watched += sorted(path.glob("*.jsonl")) + [path / "sessions.json"] if path.is_dir() else [path]
        # The drift found in the index changes when the indexed markdown does.
        return watched + self._indexed

    def load(self) -> Contents:
        contents = Contents()
        if self.index is not None:
            self._load_index(contents)
        if self.transcripts is not None and self.transcripts.is_dir():
            self._load_jsonl(contents)
        elif self.transcripts is not None:
            self._load_events(contents)
        return contents

    # -- the memory index ---------------------------------------------------------------

    def _load_index(self, contents: Contents) -> None:
        assert self.index is not None
        files_table, chunks_table = LAYOUTS[self.layout]
        with reading(self.index) as con:
            files = con.execute(f'SELECT path, source, hash FROM "{files_table}"').fetchall()
            chunks = con.execute(f'SELECT * FROM "{chunks_table}" ORDER BY path, start_line').fetchall()
            vectors = vec0_tables(con)
            tables = sqlite_tables(self.index)
            kept = _chunk_metadata(con, tables)
            said = _event_times(con, tables)
        memory_files = {row["path"]: row["hash"] for row in files if row["source"] == "memory"}
        memory_chunks = [c for c in chunks if c["source"] == "memory"]
        contents.drift, problems, orphans = index_drift(memory_files, memory_chunks, self._resolve, self.index.name)
        self._indexed = [f for f in map(self._resolve, sorted(memory_files)) if f is not None]
        contents.problems += problems
        for chunk in orphans:
            gone = self.workspace is not None
            contents.memories.append(
                make_memory(
                    self, chunk["id"], chunk["text"],
                    location=f"{chunk['path']}:{chunk['start_line']}-{chunk['end_line']}" + (" (file gone)" if gone else ""),
                    path=self.index.name, created=chunk["updated_at"], layer=_layer_of(chunk["path"]),
                    channel=self.agent,
                    metadata={"indexed_path": chunk["path"], "agent": self.agent, "dangling": gone,
                              **kept.get(chunk["id"], {})},
                    snapshot={k: chunk[k] for k in ("id", "path", "hash", "text")},
                    # Its owner deleted the file: what the index still holds of it is not active.
                    status=Status.DELETED if gone else Status.ACTIVE,
                )
            )
        for chunk in (c for c in chunks if c["source"] == "sessions"):
            contents.memories.append(self._transcript_chunk(chunk, kept.get(chunk["id"], {}), said))
        for table, count in vectors.items():
            contents.problems.append(vec0_note(self.index, table, count))

    def _transcript_chunk(self, chunk: Any, kept: dict[str, Any], said: dict[tuple[str, int], int]) -> Any:
        """A chunk of a session transcript in the index: its lines are the transcript's events
        (line n is event seq n-1), its times theirs where the same database holds them."""
        session = Path(chunk["path"]).stem
        lines = f"{chunk['start_line']}-{chunk['end_line']}"
        indexed = parse_time(chunk["updated_at"])
        times = [said[(session, seq)] for seq in range(chunk["start_line"] - 1, chunk["end_line"]) if (session, seq) in said]
        assert self.index is not None
        return make_memory(
            self, chunk["id"], chunk["text"],
            location=f"session {session}, transcript lines {lines} (memory index of {self.index.name})",
            path=self.index.name, created=min(times, default=chunk["updated_at"]),
            updated=max(times, default=chunk["updated_at"]), layer=Layer.EPISODIC, channel=self.agent,
            metadata={"index_source": "sessions", "session": session, "indexed_path": chunk["path"],
                      "indexed_at": indexed.isoformat() if indexed else None,
                      "agent": self.agent, **kept},
            snapshot={k: chunk[k] for k in ("id", "path", "hash", "text")},
        )

    def consistency_checks(self) -> list[Any]:
        return drift_findings(self)

    def _resolve(self, indexed: str) -> Path | None:
        path = Path(indexed)
        if path.is_absolute():
            return path
        return self.workspace / path if self.workspace is not None else None

    # -- transcripts ----------------------------------------------------------------------

    def _load_jsonl(self, contents: Contents) -> None:
        assert self.transcripts is not None
        titles = _session_titles(self.transcripts / "sessions.json")
        for file in sorted(self.transcripts.glob("*.jsonl")):
            records, bad = [], 0
            for line in file.read_text(encoding="utf-8", errors="replace").splitlines():
                if not line.strip():
                    continue
                try:
                    records.append(bounded_json.loads(line))
                except json.JSONDecodeError:
                    bad += 1
            if bad:
                contents.problems.append(f"{file.name}: {bad} line(s) are not JSON; left out")
            self._add_session(contents, file.stem, records, titles)

    def _load_events(self, contents: Contents) -> None:
        assert self.transcripts is not None
        tables = sqlite_tables(self.transcripts)
        compressed = {"event_zstd", "event_utf8_bytes"} <= tables.get("transcript_events", set())
        columns = "event_json, event_zstd, event_utf8_bytes" if compressed else "event_json"
        with reading(self.transcripts) as con:
            windows = (
                {r["session_id"]: r for r in con.execute("SELECT * FROM session_windows")}
                if "session_windows" in tables else {}
            )
            events = con.execute(
                f"SELECT session_id, seq, {columns} FROM transcript_events ORDER BY session_id, seq"
            ).fetchall()
        by_session: dict[str, list[dict[str, Any]]] = {}
        bad = unread = 0
        for row in events:
            text = row["event_json"] if row["event_json"] is not None or not compressed else _unzstd(row)
            if text is None:
                unread += 1
                continue
            try:
                by_session.setdefault(row["session_id"], []).append(bounded_json.loads(text))
            except json.JSONDecodeError:
                bad += 1
        if bad:
            contents.problems.append(f"{self.transcripts.name}: {bad} transcript event(s) are not JSON; left out")
        if unread:
            contents.problems.append(
                f"{self.transcripts.name}: {unread} transcript event(s) are stored zstd-compressed and could not be "
                "decompressed here (pip install zstandard); left out"
            )
        titles = {sid: (w["display_name"] if "display_name" in w.keys() and w["display_name"] else w["session_key"],
                        w["created_at"]) for sid, w in windows.items()}
        for session_id in sorted(set(by_session) | set(windows)):
            self._add_session(contents, session_id, by_session.get(session_id, []), titles)

    def _add_session(self, contents: Contents, session_id: str, records: list[Any], titles: dict[str, Any]) -> None:
        header = next((r for r in records if isinstance(r, dict) and r.get("type") == "session"), {})
        session_id = str(header.get("id") or session_id)
        title, started = titles.get(session_id, (None, None))
        turns: list[Turn] = []
        for record in records:
            turn = _turn(session_id, len(turns), record)
            if turn is not None:
                turns.append(turn)
        started = parse_time(started) or parse_time(header.get("timestamp")) or (turns[0].timestamp if turns else utcnow())
        contents.turns[session_id] = turns
        contents.sessions.append(
            Session(session_id, self.agent, title or f"{self.agent} session {session_id}", started, len(turns))
        )

    def describe(self) -> dict[str, Any]:
        return {
            **super().describe(),
            "agent": self.agent,
            "layout": self.layout,
            "workspace": str(self.workspace) if self.workspace else None,
        }


def _turn(session_id: str, index: int, record: Any) -> Turn | None:
    if not isinstance(record, dict):
        return None
    kind = record.get("type")
    at = parse_time(record.get("timestamp"))
    if kind == "compaction" and record.get("summary"):
        return Turn(session_id, index, "summary", str(record["summary"]), at or utcnow())
    if kind != "message" or not isinstance(record.get("message"), dict):
        return None
    message = record["message"]
    at = at or parse_time(message.get("timestamp")) or utcnow()
    return Turn(session_id, index, str(message.get("role") or "message"), message_text(message.get("content")), at)


def _unzstd(row: Any) -> str | None:
    """An event OpenClaw stored compressed: one zstd frame of its UTF-8 JSON, of event_utf8_bytes bytes."""
    try:
        import zstandard
    except ImportError:
        return None
    try:
        data = zstandard.ZstdDecompressor().decompress(row["event_zstd"], max_output_size=int(row["event_utf8_bytes"]))
        return bytes(data).decode("utf-8")
    except (zstandard.ZstdError, UnicodeDecodeError, TypeError, ValueError):
        return None


def _event_times(con: Any, tables: dict[str, set[str]]) -> dict[tuple[str, int], int]:
    """(session id, seq) -> when the event was written, for the transcripts kept in the same database."""
    if not {"session_id", "seq", "created_at"} <= tables.get("transcript_events", set()):
        return {}
    return {(r[0], r[1]): r[2] for r in con.execute("SELECT session_id, seq, created_at FROM transcript_events")}


def _chunk_metadata(con: Any, tables: dict[str, set[str]]) -> dict[str, dict[str, Any]]:
    """chunk id -> what the index keeps beside its text: importance, triggers and project key
    (memory_index_chunk_recall_metadata), origin class and session kind
    (memory_index_chunk_provenance), where the index has those tables (2026.9 on)."""
    kept: dict[str, dict[str, Any]] = {}
    if {"chunk_id", "importance", "triggers", "project_key"} <= tables.get("memory_index_chunk_recall_metadata", set()):
        for row in con.execute("SELECT chunk_id, importance, triggers, project_key FROM memory_index_chunk_recall_metadata"):
            values = {"importance": row["importance"], "triggers": row["triggers"], "project": row["project_key"]}
            kept.setdefault(row["chunk_id"], {}).update({k: v for k, v in values.items() if v is not None})
    if {"chunk_id", "origin_class", "session_kind"} <= tables.get("memory_index_chunk_provenance", set()):
        for row in con.execute("SELECT chunk_id, origin_class, session_kind FROM memory_index_chunk_provenance"):
            kept.setdefault(row["chunk_id"], {}).update(origin=row["origin_class"], session_kind=row["session_kind"])
    return kept


def message_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    out = []
    for part in content or []:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text":
            out.append(str(part.get("text", "")))
        elif part.get("type") == "toolCall":
            out.append(f"{part.get('name', '?')}({json.dumps(part.get('arguments') or {}, ensure_ascii=False)})")
        elif part.get("type") == "image":
            out.append("(image)")
    return "\n".join(t for t in out if t)


def _session_titles(path: Path) -> dict[str, tuple[str, Any]]:
    """sessions.json: session key -> entry; the entry names its sessionId."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    titles = {}
    for key, entry in (data.items() if isinstance(data, dict) else []):
        if isinstance(entry, dict) and entry.get("sessionId"):
            titles[str(entry["sessionId"])] = (str(entry.get("displayName") or key), None)
    return titles


def _layer_of(indexed: str) -> Layer:
    return Layer.EPISODIC if indexed.startswith("memory/") else Layer.SEMANTIC


def index_layout(tables: dict[str, set[str]]) -> str | None:
    for layout, (files_table, chunks_table) in LAYOUTS.items():
        if files_table in tables and CHUNK_COLUMNS <= tables.get(chunks_table, set()):
            return layout
    return None


def _workspace(state: Path) -> Path | None:
    """The workspace the state dir's config names, else ``<state>/workspace``."""
    configured = None
    listed = names(state)
    config_file = state / CONFIG
    if CONFIG in listed and is_file(config_file):
        try:
            configured = json.loads(config_file.read_text(encoding="utf-8"))["agents"]["defaults"]["workspace"]
        except (OSError, ValueError, KeyError, TypeError):
            configured = None
    if not configured and "workspace" not in listed:
        return None
    workspace = Path(configured).expanduser() if configured else state / "workspace"
    return workspace if is_dir(workspace) else None


def _agents(state: Path) -> dict[str, dict[str, Any]]:
    """Per agent id: its index file and layout, and where its transcripts are."""
    agents: dict[str, dict[str, Any]] = {}
    listed = names(state)
    indexes: list[Path] = []
    if "memory" in listed and is_dir(memory_dir := state / "memory"):
        indexes = [memory_dir / name for name in sorted(names(memory_dir)) if name.endswith(".sqlite")]
    for db in indexes:
        layout = index_layout(sqlite_tables(db))
        if layout is not None:
            agents.setdefault(db.stem, {}).update(index=db, layout=layout)
    agents_dir = state / "agents" if "agents" in listed else None
    for folder in children(agents_dir) if agents_dir is not None and is_dir(agents_dir) else []:
        agent_db = folder / "agent" / AGENT_DB
        tables = sqlite_tables(agent_db) if is_file(agent_db) else {}
        if tables:
            layout = index_layout(tables)
            entry = agents.setdefault(folder.name, {})
            if layout is not None:
                entry.update(index=agent_db, layout=layout)
            if "transcript_events" in tables:
                entry["transcripts"] = agent_db
        sessions = folder / "sessions"
        if "transcripts" not in agents.get(folder.name, {}) and is_dir(sessions) and any(
            name.endswith(".jsonl") for name in names(sessions)
        ):
            agents.setdefault(folder.name, {})["transcripts"] = sessions
    return agents


def detect(path: Path) -> list[FormatMatch]:
    if is_file(path):
        tables = sqlite_tables(path)
        layout = index_layout(tables)
        if layout is None and "transcript_events" not in tables:
            return []
        agent = path.parent.parent.name if path.name == AGENT_DB else path.stem
        transcripts = path if "transcript_events" in tables else None
        return [_match(agent, path if layout else None, layout or "none", transcripts, None, path,
                       f"OpenClaw agent {agent}")]
    if not is_dir(path):
        return []
    agents = _agents(path)
    configured = CONFIG in names(path) and is_file(path / CONFIG)
    if not agents and not configured:
        return _workspace_alone(path)
    workspace = _workspace(path)
    markdown = workspace is not None and MarkdownSource.detect(workspace) > 0
    # The state dir is the store: every part is found there, under one name.
    label = _label(path, agents, workspace if markdown else None)
    matches = [
        _match(agent, found.get("index"), found.get("layout", "none"), found.get("transcripts"), workspace, path, label)
        for agent, found in agents.items()
    ]
    if markdown and workspace is not None:
        matches.append(FormatMatch(
            "markdown", label, path, open=partial(OpenClawWorkspace, workspace, path), journal_dir=path,
        ))
    return matches


def _workspace_alone(path: Path) -> list[FormatMatch]:
    """An OpenClaw workspace opened by itself: the folder its state dir (the parent) names as its
    workspace, read as OpenClaw's (not as a bare markdown workspace)."""
    if "AGENTS.md" not in names(path):
        return []
    state = path.parent
    if CONFIG not in names(state) or not is_file(state / CONFIG):
        return []
    workspace = _workspace(state)
    if workspace is None or os.path.realpath(workspace) != os.path.realpath(path) or not MarkdownSource.detect(path):
        return []
    return [FormatMatch(
        "markdown", "OpenClaw workspace markdown", path, open=partial(OpenClawWorkspace, path, state),
        claims=((Kind.MARKDOWN, path),), journal_dir=path,
    )]


def _label(state: Path, agents: dict[str, dict[str, Any]], workspace: Path | None) -> str:
    """"OpenClaw (workspace; agent main: agents/main/agent/openclaw-agent.sqlite)": the parts found."""
    parts = ["workspace"] if workspace is not None else []
    for agent, found in sorted(agents.items()):
        files = [f for f in (found.get("index"), found.get("transcripts")) if f is not None]
        shown = " + ".join(dict.fromkeys(_shown(state, f) for f in files))
        parts.append(f"agent {agent}: {shown}")
    return f"OpenClaw ({'; '.join(parts)})" if parts else "OpenClaw"


def _shown(state: Path, path: Path) -> str:
    return path.relative_to(state).as_posix() if path.is_relative_to(state) else str(path)


def _match(agent: str, index: Path | None, layout: str, transcripts: Path | None, workspace: Path | None,
           location: Path, label: str) -> FormatMatch:
    return FormatMatch(
        "openclaw", label, location,
        open=lambda: OpenClawAgentSource(agent, index, layout, transcripts, workspace),
    )
