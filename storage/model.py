"""The canonical model every store kind maps onto: small, frozen, Qt-free."""

from __future__ import annotations

import enum
import re
from dataclasses import MISSING, dataclass, field, fields, replace
from datetime import datetime
from typing import Any

GLOBAL_CHANNEL = "_global"


class Layer(str, enum.Enum):
    CORE = "core"
    EPISODIC = "episodic"
    SEMANTIC = "semantic"
    PROCEDURAL = "procedural"
    WORKING = "working"
    SOCIAL = "social"


class Status(str, enum.Enum):
    ACTIVE = "active"
    ARCHIVED = "archived"
    DELETED = "deleted"
    # Past the expiry its owner stored with it: kept on disk, but the owner no longer returns it
    # (SynthOrg's expires_at). Never set by Mnemoscope; nothing restores it.
    EXPIRED = "expired"


def parse_layer(value: Any, default: Layer = Layer.SEMANTIC) -> Layer:
    """The layer a stored value names (any case); default for anything else."""
    try:
        return Layer(str(value).lower())
    except ValueError:
        return default


def parse_status(value: Any) -> Status:
    """The status a stored value names (any case); active for anything else."""
    try:
        return Status(str(value).lower())
    except ValueError:
        return Status.ACTIVE


class Kind(str, enum.Enum):
    """The store kinds a memory can live in."""

    SQLITE = "sqlite"
    CHROMA = "chroma"
    MARKDOWN = "markdown"
    QDRANT = "qdrant"  # a Qdrant collection (local mode: points in collection/<name>/storage.sqlite)
    REDIS = "redis"  # keys of a Redis database (AgentX's working memory: scratchpad entries, no memories)
    POSTGRESQL = "postgresql"  # a row of a PostgreSQL server's tables


class RelationType(str, enum.Enum):
    RELATED_TO = "RELATED_TO"
    PART_OF = "PART_OF"
    LOCATED_IN = "LOCATED_IN"
    WORKS_FOR = "WORKS_FOR"
    KNOWS = "KNOWS"
    CREATED_BY = "CREATED_BY"
    REFERENCES = "REFERENCES"
    ABOUT = "ABOUT"
    DERIVED_FROM = "DERIVED_FROM"
    PROMOTED_FROM = "PROMOTED_FROM"
    SUPERSEDES = "SUPERSEDES"


def _built(cls: type[Any], values: dict[str, Any]) -> Any:
    """An instance of a frozen dataclass with these field values and the defaults of the rest."""
    if cls not in _DEFAULTS:
        _DEFAULTS[cls] = (
            {f.name: f.default for f in fields(cls) if f.default is not MISSING},
            {f.name: f.default_factory for f in fields(cls) if f.default_factory is not MISSING},
        )
    defaults, factories = _DEFAULTS[cls]
    built = object.__new__(cls)
    state = built.__dict__
    state.update(defaults)
    state.update(values)
    for name, factory in factories.items():
        if name not in values:
            state[name] = factory()
    return built


_DEFAULTS: dict[type, tuple[dict[str, Any], dict[str, Any]]] = {}


@dataclass(frozen=True)
class SourceRef:
    """Where a record lives: the kind, and a location inside it.

    location is human-readable: ``memory.db:memories/<id>``,
    ``vectors:<collection>/<id>`` or ``MEMORY.md:12-14``.
    """

    kind: Kind
    location: str
    path: str = ""
    line_start: int | None = None
    line_end: int | None = None
    # The tool that wrote the record, for stores other tools own ("mem0", ...).
    format: str = ""

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"kind": self.kind.value, "location": self.location}
        if self.format:
            d["format"] = self.format
        if self.path:
            d["path"] = self.path
        if self.line_start is not None:
            d["lines"] = [self.line_start, self.line_end]
        return d

    @classmethod
    def built(cls, **values: Any) -> SourceRef:
        """SourceRef(**values), built as Memory.built is."""
        return _built(cls, values)


@dataclass(frozen=True)
class Provenance:
    promoted_from: str | None = None
    derived_from: tuple[str, ...] = ()
    imported_from: str | None = None


@dataclass(frozen=True)
class Memory:
    id: str
    source: SourceRef
    layer: Layer
    channel: str
    content: str
    created_at: datetime
    updated_at: datetime
    last_accessed: datetime
    # What the owning system keeps of these; None: it keeps no such value (never a default).
    access_count: int | None = None
    salience: float | None = None
    confidence: float | None = None
    tags: tuple[str, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    status: Status = Status.ACTIVE
    provenance: Provenance = Provenance()
    conversations: int | None = None
    # An opaque hash of the stored record; changes whenever anything changes it.
    revision: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "content": self.content,
            "layer": self.layer.value,
            "channel": self.channel,
            "source": self.source.to_dict(),
            "created_at": _iso(self.created_at),
            "updated_at": _iso(self.updated_at),
            "last_accessed": _iso(self.last_accessed),
            "access_count": self.access_count,
            "salience": _rounded(self.salience),
            "confidence": _rounded(self.confidence),
            "conversations": self.conversations,
            "tags": list(self.tags),
            "status": self.status.value,
            "provenance": {
                "promoted_from": self.provenance.promoted_from,
                "derived_from": list(self.provenance.derived_from),
                "imported_from": self.provenance.imported_from,
            },
            "metadata": self.metadata,
            "revision": self.revision,
        }

    def with_changes(self, **changes: Any) -> Memory:
        return replace(self, **changes)

    @classmethod
    def built(cls, **values: Any) -> Memory:
        """Memory(**values) without the frozen dataclass's one setattr per field (a third of the
        cost of a page of a hundred): for sources that pass every field but the defaulted ones."""
        return _built(cls, values)


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


# The canonical fields not every system keeps: None in a Memory whose store keeps no such value.
OPTIONAL_FIELDS = ("access_count", "salience", "confidence", "conversations")
ABSENT = "—"  # how a field the owning system does not keep is shown (never as a default value)


def shown(value: Any, spec: str = "") -> str:
    """A field's value as text, ABSENT for one its store does not keep (None)."""
    return ABSENT if value is None else format(value, spec)


EDITABLE_FIELDS = ("content", "tags", "layer", "channel", "salience")


@dataclass(frozen=True)
class Entity:
    id: str
    name: str
    type: str
    channel: str = GLOBAL_CHANNEL
    description: str = ""
    aliases: tuple[str, ...] = ()
    salience: float = 0.5
    access_count: int = 0
    first_seen: datetime | None = None
    last_accessed: datetime | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "type": self.type,
            "channel": self.channel,
            "description": self.description,
            "aliases": list(self.aliases),
            "salience": self.salience,
            "access_count": self.access_count,
            "first_seen": _iso(self.first_seen),
            "last_accessed": _iso(self.last_accessed),
        }


@dataclass(frozen=True)
class Relation:
    id: str
    source_id: str
    target_id: str
    type: str
    channel: str = GLOBAL_CHANNEL
    weight: float = 1.0
    created_at: datetime | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "source": self.source_id,
            "target": self.target_id,
            "type": self.type,
            "channel": self.channel,
            "weight": self.weight,
            "created_at": _iso(self.created_at),
        }


@dataclass(frozen=True)
class CompactionDistance:
    """How far a session's context is from its owner's compaction, by the owner's rule: the
    messages and characters it holds against the thresholds past which it compacts, and what a
    compaction now would keep verbatim and summarise."""

    rule: str  # the owner's rule, in words
    measured_on: str  # what was counted (the file or table holding the model's context)
    messages: int
    message_threshold: int  # compacts when messages exceed it
    characters: int
    character_threshold: int  # ...or when characters exceed it
    retained: int  # messages a compaction now would keep verbatim
    summarised: int  # older messages it would replace with a summary
    compacted_before: bool = False  # the context already opens with an earlier compaction's summary

    @property
    def messages_left(self) -> int:
        return max(0, self.message_threshold - self.messages)

    @property
    def characters_left(self) -> int:
        return max(0, self.character_threshold - self.characters)

    @property
    def due(self) -> bool:
        return self.summarised > 0 and (
            self.messages > self.message_threshold or self.characters > self.character_threshold
        )

    def describe(self) -> str:
        if self.due:
            head = (f"compaction due: {self.messages} messages / {self.characters:,} characters, past "
                    f"{self.message_threshold} / {self.character_threshold:,}")
        else:
            head = (f"{self.messages_left} message(s) and {self.characters_left:,} characters left before "
                    f"compaction ({self.messages} of {self.message_threshold}, {self.characters:,} of "
                    f"{self.character_threshold:,})")
        if self.summarised:
            then = (f"a compaction would summarise the oldest {self.summarised} and keep the last "
                    f"{self.retained} verbatim")
        else:
            then = f"a compaction would find nothing to summarise ({self.retained} message(s), all kept verbatim)"
        after = ", counted after the earlier compaction's summary" if self.compacted_before else ""
        return f"{head}; {then} (measured on {self.measured_on}{after})"

    def brief(self) -> str:
        """A table cell: what is left, or that compaction is due."""
        if self.due:
            return "due"
        return f"{self.messages_left} msgs / {self.characters_left:,} chars left"

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule, "measured_on": self.measured_on,
            "messages": self.messages, "message_threshold": self.message_threshold, "messages_left": self.messages_left,
            "characters": self.characters, "character_threshold": self.character_threshold,
            "characters_left": self.characters_left, "retained": self.retained, "summarised": self.summarised,
            "compacted_before": self.compacted_before, "due": self.due,
            "text": self.describe(), "brief": self.brief(),
        }


@dataclass(frozen=True)
class Session:
    id: str
    channel: str
    title: str
    started_at: datetime | None  # None where the owner keeps no start (a Redis key group)
    turn_count: int = 0
    user_id: str = ""
    # Where the owner compacts a session's context (AgenticX's ContextCompactor); None elsewhere.
    compaction: CompactionDistance | None = field(default=None, compare=False)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "channel": self.channel,
            "title": self.title,
            "started_at": _iso(self.started_at),
            "turn_count": self.turn_count,
            "user_id": self.user_id,
        }
        if self.compaction is not None:
            out["compaction"] = self.compaction.to_dict()
        return out


@dataclass(frozen=True)
class Turn:
    session_id: str
    index: int
    role: str
    content: str
    timestamp: datetime
    # "message", or what the owner put in the conversation that is no message: "compaction"
    # (a summary standing for the older turns it replaced).
    kind: str = "message"

    def to_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "index": self.index,
            "role": self.role,
            "content": self.content,
            "timestamp": _iso(self.timestamp),
            "kind": self.kind,
        }


# Reserved scratchpad keys written by agent runtimes (seed 000, AgenticX).
_RESERVED_KEY_PATTERNS: tuple[tuple[str, re.Pattern[str], str], ...] = (
    ("subagent_result", re.compile(r"^subagent_result::(.+)$"), "Subagent result"),
    ("delegation_result", re.compile(r"^delegation_result::(.+)$"), "Delegation result"),
    ("session_facts", re.compile(r"^session_facts$"), "Session facts (MemoryHook)"),
    (
        "pending_subagent_summaries",
        re.compile(r"^__pending_subagent_summaries__$"),
        "Pending subagent summaries (internal)",
    ),
    ("taskspace_hint", re.compile(r"^__taskspace_hint__$"), "Taskspace path hint"),
    ("taskspace_label_hint", re.compile(r"^__taskspace_label_hint__$"), "Taskspace label hint"),
)


def classify_scratch_key(key: str) -> tuple[str | None, str | None, str]:
    """Return (pattern name, captured id, label) for a scratchpad key.

    Keys that match no reserved pattern are user/agent keys: (None, None, "User key").
    """
    for name, pattern, label in _RESERVED_KEY_PATTERNS:
        m = pattern.match(key)
        if m:
            return name, (m.group(1) if m.groups() else None), label
    if key.startswith("__") and key.endswith("__"):
        return "internal", None, "Internal runtime key"
    return None, None, "User key"


@dataclass(frozen=True)
class ScratchEntry:
    session_id: str
    key: str
    value: str
    updated_at: datetime | None  # None where the owner keeps no write time (Redis)
    # When the owner drops the key by itself (a Redis TTL); None: it keeps it until removed.
    expires_at: datetime | None = None

    @property
    def pattern(self) -> str | None:
        return classify_scratch_key(self.key)[0]

    @property
    def pattern_id(self) -> str | None:
        return classify_scratch_key(self.key)[1]

    @property
    def label(self) -> str:
        return classify_scratch_key(self.key)[2]

    def to_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "key": self.key,
            "value": self.value,
            "updated_at": _iso(self.updated_at),
            "expires_at": _iso(self.expires_at),
            "pattern": self.pattern,
            "pattern_id": self.pattern_id,
            "label": self.label,
        }


@dataclass(frozen=True)
class AuditEntry:
    seq: int
    at: datetime
    operation: str
    targets: tuple[str, ...]
    channel: str | None
    before: Any
    after: Any
    actor: str
    state: str  # done / undone / dropped (redo no longer possible)
    details: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "at": _iso(self.at),
            "operation": self.operation,
            "targets": list(self.targets),
            "channel": self.channel,
            "actor": self.actor,
            "state": self.state,
            "details": self.details,
            "before": self.before,
            "after": self.after,
        }


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def field_names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in fields(cls))
