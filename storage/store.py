"""``open_store``: detect what a path holds and compose it into one MemoryStore."""

from __future__ import annotations

import heapq
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterator

from .embedding import Embedder, HashingEmbedder, embedder_by_name
from .errors import NotFoundError, StoreError, UnreadableStoreError
from .journal import Journal
from .formats import detect_formats
from .model import Kind, Memory, ScratchEntry, Session, Turn
from .query import MemoryQuery, sort_key
from .salience import PromotionThresholds, SalienceModel
from .source import Source
from .native.vectors import CHROMA_FILE, ChromaSource
from .native.markdown import MarkdownSource
from .native.memory_db import DB_NAME, SqliteSource
from .sqlite_db import is_sqlite_file

VECTORS_DIR = "vectors"
SETTINGS_KEY = "settings"


@dataclass(frozen=True)
class StoreSettings:
    salience: SalienceModel = field(default_factory=SalienceModel)
    promotion: PromotionThresholds = field(default_factory=PromotionThresholds)
    embedder: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "salience": asdict(self.salience),
            "promotion": asdict(self.promotion),
            "embedder": self.embedder,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> StoreSettings:
        data = data or {}
        return cls(
            salience=SalienceModel(**data.get("salience", {})),
            promotion=PromotionThresholds(**data.get("promotion", {})),
            embedder=data.get("embedder"),
        )


class MemoryStore:
    """Every source found at one path, read and curated as one store."""

    def __init__(self, root: Path, sources: list[Source], journal: Journal) -> None:
        self.root = Path(root)
        self.sources = sources
        self.journal = journal
        self.sqlite: SqliteSource | None = _first(sources, SqliteSource)
        self.chroma: ChromaSource | None = _first(sources, ChromaSource)
        self.markdown: MarkdownSource | None = _first(sources, MarkdownSource)
        self.settings = StoreSettings.from_dict(journal.read_setting(SETTINGS_KEY))
        if self.chroma is not None and self.settings.embedder:
            self.chroma.embedder_override = embedder_by_name(self.settings.embedder)
        self._hide_copies()

    def _hide_copies(self) -> None:
        """Vector and markdown copies of memory.db memories are not listed twice."""
        if self.sqlite is None:
            return
        if self.chroma is not None:
            self.chroma.hide_mirrors()
        if self.markdown is not None:
            self.markdown.set_mirrors(set(self.sqlite.memories_with_markdown_copies()))

    def refresh_copies(self) -> None:
        self._hide_copies()

    def close(self) -> None:
        for source in self.sources:
            source.close()
        self.journal.close()

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- settings ---------------------------------------------------------------------

    def save_settings(self, settings: StoreSettings) -> None:
        self.journal.write_setting(SETTINGS_KEY, settings.to_dict())
        self.settings = settings

    def embedder(self) -> Embedder | None:
        """The embedder for new vectors and text queries, if one runs offline here."""
        if self.settings.embedder:
            return embedder_by_name(self.settings.embedder)
        if self.chroma is not None:
            for name in self.chroma.collections():
                found = self.chroma.embedder_for(name)
                if found is not None:
                    return found
        return None

    # -- reading -----------------------------------------------------------------------

    @property
    def kinds(self) -> list[Kind]:
        return [s.kind for s in self.sources]

    @property
    def foreign(self) -> list[Source]:
        """Sources in formats other tools own (mem0, LangGraph, ...)."""
        return [s for s in self.sources if getattr(s, "format", "") not in NATIVE_FORMATS]

    def sessions(self, channels: tuple[str, ...] = ()) -> list[Session]:
        return [x for s in self.sources if hasattr(s, "sessions") for x in s.sessions(channels)]

    def turns(self, session_id: str, limit: int = 1000, offset: int = 0) -> list[Turn]:
        for source in self.sources:
            if hasattr(source, "sessions") and any(x.id == session_id for x in source.sessions()):
                return source.turns(session_id, limit=limit, offset=offset)
        return []

    def scratch_entries(self, session_id: str | None = None) -> list[ScratchEntry]:
        return [e for s in self.sources if hasattr(s, "scratch_entries") for e in s.scratch_entries(session_id)]

    def turn_bin_counts(self, bin_format: str, since: Any, until: Any) -> dict[str, int]:
        counts: dict[str, int] = {}
        for source in self.sources:
            if hasattr(source, "turn_bin_counts"):
                for label, n in source.turn_bin_counts(bin_format, since, until).items():
                    counts[label] = counts.get(label, 0) + n
        return counts

    def owner_history(self, memory_id: str) -> list[dict[str, Any]]:
        """The owning tool's own log of a memory (mem0's history.db), where it keeps one."""
        source = self.source_for(memory_id)
        return source.history(memory_id) if hasattr(source, "history") else []

    def problems(self) -> list[str]:
        """What a user should know about foreign stores: drift, dangling rows, unread tables."""
        return [f"{s.label}: {p}" for s in self.foreign for p in s.problems()]

    def source_for(self, record_id: str) -> Source:
        for source in self.sources:
            if source.owns(record_id):
                return source
        raise NotFoundError(f"No memory {record_id} in {self.root} (no store holds that kind).")

    def count(self, query: MemoryQuery = MemoryQuery()) -> int:
        return sum(s.count(query) for s in self.sources if query.wants_kind(s.kind))

    def page(self, query: MemoryQuery = MemoryQuery(), limit: int = 50, offset: int = 0) -> list[Memory]:
        wanted = [s for s in self.sources if query.wants_kind(s.kind)]
        if len(wanted) == 1:
            return wanted[0].page(query, limit, offset)
        pages = [s.page(query, offset + limit, 0) for s in wanted]
        key = sort_key(query.order)
        merged = heapq.merge(*pages, key=key, reverse=query.descending)
        return list(_islice(merged, offset, offset + limit))

    def get(self, memory_id: str) -> Memory:
        source = self.source_for(memory_id)
        memory = source.get(memory_id)
        if memory is None:
            raise NotFoundError(f"No memory {memory_id} in {self.root}.")
        return memory

    def change_token(self) -> str:
        return "|".join(s.change_token() for s in self.sources)

    def counts(self) -> dict[str, Any]:
        per_kind: dict[str, int] = {}
        for s in self.sources:
            per_kind[s.kind.value] = per_kind.get(s.kind.value, 0) + s.count(MemoryQuery(statuses=()))
        channels: dict[str, int] = {}
        layers: dict[str, int] = {}
        statuses: dict[str, int] = {}
        for s in self.sources:
            for target, column in ((channels, "channel"), (layers, "layer"), (statuses, "status")):
                for key, n in s.counts_by(column).items():
                    target[key] = target.get(key, 0) + n
        return {"kinds": per_kind, "channels": channels, "layers": layers, "statuses": statuses}

    def info(self) -> dict[str, Any]:
        counts = self.counts()
        out: dict[str, Any] = {
            "path": str(self.root),
            "kinds": [k.value for k in self.kinds],
            "counts": counts,
            "total": sum(counts["kinds"].values()),
            "capabilities": {_source_key(s): s.capabilities().to_dict() for s in self.sources},
            "settings": self.settings.to_dict(),
            "journal": {"location": str(self.journal.label), "entries": self.journal.count()},
        }
        if self.sqlite is not None:
            out["schema_version"] = self.sqlite.schema_version
            out["tables"] = self.sqlite.table_counts()
        if self.chroma is not None:
            out["collections"] = [
                {"name": n, "count": self.chroma.collection(n).count(), **self.chroma.embedding_function_info(n)}
                for n in self.chroma.collections()
            ]
        if self.markdown is not None:
            out["markdown_files"] = self.markdown.files()
        if self.foreign:
            out["formats"] = [s.describe() for s in self.foreign]
            out["sessions"] = len(self.sessions())
        return out


NATIVE_FORMATS = ("mnemoscope", "chroma", "markdown")


def _source_key(source: Source) -> str:
    fmt = getattr(source, "format", "")
    return source.kind.value if fmt in NATIVE_FORMATS else fmt


def _first(sources: list[Source], cls: type) -> Any:
    return next((s for s in sources if isinstance(s, cls)), None)


def _islice(iterator: Iterator[Memory], start: int, stop: int) -> Iterator[Memory]:
    for i, item in enumerate(iterator):
        if i >= stop:
            return
        if i >= start:
            yield item


def detect(path: Path) -> dict[Kind, Path]:
    """What store kinds a path holds, and where each one lives."""
    path = Path(path)
    found: dict[Kind, Path] = {}
    if path.is_file():
        if path.name == DB_NAME:
            found[Kind.SQLITE] = path
        elif path.name == CHROMA_FILE:
            found[Kind.CHROMA] = path.parent
        return found
    if SqliteSource.detect(path):
        found[Kind.SQLITE] = path / DB_NAME
    if ChromaSource.detect(path / VECTORS_DIR):
        found[Kind.CHROMA] = path / VECTORS_DIR
    elif ChromaSource.detect(path):
        found[Kind.CHROMA] = path
    if MarkdownSource.detect(path):
        found[Kind.MARKDOWN] = path
    return found


def open_store(path: str | Path) -> MemoryStore:
    """Open whatever memory a file or folder holds. Raises UnreadableStoreError."""
    path = Path(path).expanduser()
    if not path.exists():
        raise UnreadableStoreError(f"{path} does not exist.")
    found = detect(path)
    matches = detect_formats(path)
    for match in matches:
        for kind, claimed in match.claims:
            if found.get(kind) == claimed:
                del found[kind]
    if not found and not matches:
        if path.is_file() and is_sqlite_file(path):
            raise UnreadableStoreError(
                f"{path} is a SQLite database Mnemoscope does not recognise as a memory store."
            )
        what = "file" if path.is_file() else "folder"
        raise UnreadableStoreError(
            f"Nothing recognisable in {what} {path}: no memory.db, Chroma directory "
            "or workspace markdown (MEMORY.md, USER.md, memory/YYYY-MM-DD.md, ...)."
        )
    root = path if path.is_dir() else path.parent
    sources: list[Source] = []
    try:
        if Kind.SQLITE in found:
            sources.append(SqliteSource.open(found[Kind.SQLITE]))
        if Kind.CHROMA in found:
            sources.append(ChromaSource.open(found[Kind.CHROMA]))
        if Kind.MARKDOWN in found:
            sources.append(MarkdownSource.open(found[Kind.MARKDOWN]))
        for match in matches:
            sources.append(match.open())
    except StoreError:
        for source in sources:
            source.close()
        raise
    sqlite = _first(sources, SqliteSource)
    journal = (
        Journal.in_database(sqlite.engine, sqlite.db_path)
        if sqlite is not None
        else Journal.sidecar(_journal_dir(root, found, matches))
    )
    return MemoryStore(root, sources, journal)


def _journal_dir(root: Path, found: dict[Kind, Path], matches: list[Any]) -> Path:
    if Kind.MARKDOWN in found:
        return root
    if Kind.CHROMA in found:
        return found[Kind.CHROMA]
    return next((m.journal_dir for m in matches if m.journal_dir is not None), root)


def create_workspace(path: str | Path, embedder: Embedder | None = None) -> MemoryStore:
    """A new native workspace: memory.db, vectors/ and nothing else yet."""
    root = Path(path).expanduser()
    root.mkdir(parents=True, exist_ok=True)
    if any(root.iterdir()) and (detect(root) or detect_formats(root)):
        raise StoreError(f"{root} already holds a memory store; not overwriting it.")
    embedder = embedder or HashingEmbedder()
    sqlite = SqliteSource.open(root / DB_NAME, create=True)
    chroma = ChromaSource.create(root / VECTORS_DIR, embedder)
    store = MemoryStore(root, [sqlite, chroma], Journal.in_database(sqlite.engine, sqlite.db_path))
    store.save_settings(StoreSettings(embedder=embedder.name))
    return store
