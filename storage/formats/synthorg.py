"""SynthOrg's agent memory as SynthOrg reads it: mem0 on embedded Qdrant, with SynthOrg's metadata.

SynthOrg (github.com/Aureliolo/synthorg) keeps agent memory through its Mem0 backend: one mem0
``Memory`` on ``<data_dir>/qdrant`` (collection ``synthorg_memories``) + ``<data_dir>/history.db``
(memory/backends/mem0/config.py, build_mem0_config_dict). What it writes, and how it reads it
back, is in memory/backends/mem0/mappers.py and mappers_shared.py (build_mem0_metadata,
parse_mem0_metadata, mem0_result_to_entry, apply_post_filters) and shared.py (publish_shared,
retract_shared):

- each agent's memories are mem0 points whose ``user_id`` is the agent's id (one store per agent:
  an agent here); shared knowledge is published under the reserved ``user_id``
  ``__synthorg_shared__`` with ``_synthorg_publisher`` naming the agent that published it, and
  only that publisher may take it back (``retract``: a mem0 delete after the ownership check);
- ``_synthorg_category``: working / episodic / semantic / procedural / social; absent or unknown
  reads as working (extract_category);
- ``_synthorg_confidence``: a float clamped to [0, 1] (_coerce_confidence);
- ``_synthorg_tags``: a list (or one string); ``non-inferable`` marks what the agent cannot
  rediscover from the code (the retrieval filter, Decision Log D23);
- ``_synthorg_expires_at``: ISO 8601, naive meaning UTC; an entry whose expiry has passed is never
  returned again (apply_post_filters), though it stays on disk: shown here as ``expired``;
- ``_synthorg_source`` and ``_synthorg_namespace`` (``"default"`` when absent).

Memory level, retention and the per-agent cap are configuration, in the company's
``synthorg.yaml`` (config/loader.py discover_config: ./synthorg.yaml, ./config/synthorg.yaml):
``memory.level`` (none | session | project | persistent, default session),
``memory.options.max_memories_per_agent`` (default 10000, what the backend caps a listing at),
``memory.consolidation.retention`` (``rules``: per-category ``retention_days``,
``default_retention_days``), and per agent (``agents[].memory``, core/agent.py MemoryConfig)
``type``, ``retention_days`` and ``retention_overrides``. Retention resolves per category as
memory/consolidation/retention.py (_resolve_categories) does: agent per-category override, company
per-category rule, agent default, company default, else kept forever.

SynthOrg keeps no salience, access count or last access of a memory.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from ..model import Layer, Memory, Status
from ..retention import CLEAN_UP, EXPIRE, Upcoming
from ..timeutil import parse_time, to_iso

PREFIX = "_synthorg_"
CATEGORY = PREFIX + "category"
CONFIDENCE = PREFIX + "confidence"
TAGS = PREFIX + "tags"
EXPIRES_AT = PREFIX + "expires_at"
SOURCE = PREFIX + "source"
NAMESPACE = PREFIX + "namespace"
PUBLISHER = PREFIX + "publisher"
SHARED_NAMESPACE = "__synthorg_shared__"  # the mem0 user_id of the shared knowledge base
COLLECTION = "synthorg_memories"  # Mem0BackendConfig.collection_name's default
NON_INFERABLE = "non-inferable"

SHARED_CHANNEL = "shared"  # the shared knowledge base, as its own scope
AGENT_CHANNEL = "agent:"  # + the agent's id: one agent's own memories
CATEGORIES = ("working", "episodic", "semantic", "procedural", "social")  # MemoryCategory
LEVELS = ("none", "session", "project", "persistent")  # MemoryLevel
DEFAULT_LEVEL = "session"
DEFAULT_CAP = 10_000
CONFIG_FILES = ("synthorg.yaml", "config/synthorg.yaml")
CONFIG_SEARCH_DEPTH = 3  # the data folder and this many folders above it
RESOLUTION_ORDER = (
    "agent per-category rule",
    "company per-category rule",
    "agent global default",
    "company global default",
    "keep forever",
)
# The keys whose values become the memory's own fields (the rest stay metadata).
_MAPPED = {CATEGORY, CONFIDENCE, TAGS, EXPIRES_AT, SOURCE, NAMESPACE, PUBLISHER, "user_id"}


def is_synthorg_payload(meta: dict[str, Any]) -> bool:
    """A point SynthOrg wrote: its prefixed metadata, or the shared knowledge base's user id."""
    return meta.get("user_id") == SHARED_NAMESPACE or any(str(k).startswith(PREFIX) for k in meta)


@dataclass(frozen=True)
class Entry:
    """One point as SynthOrg's mem0_result_to_entry reads it."""

    layer: Layer
    channel: str
    tags: tuple[str, ...]
    confidence: float | None  # None: not stored (SynthOrg would read 1.0)
    expires_at: datetime | None
    status: Status
    metadata: dict[str, Any]


def read_entry(meta: dict[str, Any], now: datetime) -> Entry:
    """A SynthOrg point's fields; ``metadata`` holds what of SynthOrg's has no field of its own
    (mem0's own keys are the caller's: synthorg_free)."""
    extra: dict[str, Any] = {}
    raw_category = meta.get(CATEGORY)
    if raw_category in CATEGORIES:
        layer = Layer(str(raw_category))
    else:  # extract_category: absent or unknown reads as working
        layer = Layer.WORKING
        extra["category_stored"] = raw_category if raw_category is not None else "none (SynthOrg reads it as working)"
    confidence = None
    if CONFIDENCE in meta:
        try:
            value = float(meta[CONFIDENCE])
        except (TypeError, ValueError):
            value = math.nan
        if math.isfinite(value):
            confidence = max(0.0, min(1.0, value))
        else:  # _coerce_confidence: corrupt data reads as 0.5
            confidence = 0.5
            extra["confidence_stored"] = meta[CONFIDENCE]
    expires_at = parse_time(meta.get(EXPIRES_AT)) if meta.get(EXPIRES_AT) else None
    if meta.get(EXPIRES_AT) and expires_at is None:
        extra["expires_at_stored"] = meta[EXPIRES_AT]  # unparseable: SynthOrg reads no expiry
    user = meta.get("user_id")
    if user == SHARED_NAMESPACE:
        channel = SHARED_CHANNEL
        publisher = str(meta.get(PUBLISHER) or "").strip()
        # resolve_publisher: an entry with no publisher is attributed to the namespace itself
        extra["publisher"] = publisher or f"none recorded (SynthOrg attributes it to {SHARED_NAMESPACE})"
    else:
        channel = AGENT_CHANNEL + str(user) if user else "agent:(none)"
        if meta.get(PUBLISHER):
            extra["publisher"] = meta[PUBLISHER]
    if expires_at is not None:
        extra["expires_at"] = to_iso(expires_at)
    source = str(meta.get(SOURCE) or "").strip()
    if source:
        extra["source"] = source
    extra["namespace"] = str(meta.get(NAMESPACE) or "").strip() or "default"
    extra.update({k[len(PREFIX):]: v for k, v in meta.items() if str(k).startswith(PREFIX) and k not in _MAPPED})
    return Entry(
        layer=layer,
        channel=channel,
        tags=_tags(meta.get(TAGS)),
        confidence=confidence,
        expires_at=expires_at,
        status=Status.EXPIRED if expires_at is not None and expires_at <= now else Status.ACTIVE,
        metadata=extra,
    )


def synthorg_free(meta: dict[str, Any]) -> dict[str, Any]:
    """A point's payload less what read_entry reads (SynthOrg's keys, and the user id its scope
    is): what mem0's reading makes metadata of."""
    return {k: v for k, v in meta.items() if k not in _MAPPED and not str(k).startswith(PREFIX)}


def _tags(raw: Any) -> tuple[str, ...]:
    """_normalize_tags: one string is one tag, blanks are dropped, anything else is no tags."""
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, (list, tuple)):
        return ()
    return tuple(t for t in (str(v).strip() if v else "" for v in raw) if t)


# -- the configuration: synthorg.yaml --------------------------------------------------------


@dataclass(frozen=True)
class Config:
    """The memory part of a company's synthorg.yaml (None where it says nothing)."""

    path: Path
    memory: dict[str, Any]
    agents: dict[str, dict[str, Any]]  # agent name -> its raw memory section

    def level(self) -> str | None:
        value = self.memory.get("level")
        return str(value) if value is not None else None

    def cap(self) -> Any:
        return _section(self.memory, "options").get("max_memories_per_agent")

    def retention(self) -> dict[str, Any]:
        return _section(_section(self.memory, "consolidation"), "retention")


def _section(data: Any, key: str) -> dict[str, Any]:
    value = data.get(key) if isinstance(data, dict) else None
    return value if isinstance(value, dict) else {}


def find_config(data_dir: Path) -> tuple[Config | None, list[str]]:
    """The synthorg.yaml whose memory.storage.data_dir is this folder, looked for in the folder and
    the folders above it; and notes on what was found (a config of another folder, bad YAML)."""
    notes: list[str] = []
    folder = Path(os.path.realpath(data_dir))
    for base in [folder, *folder.parents][: CONFIG_SEARCH_DEPTH + 1]:
        for name in CONFIG_FILES:
            path = base / name
            if not path.is_file():
                continue
            data, problem = _load_yaml(path)
            if problem:
                notes.append(f"{path}: {problem}; not applied")
                continue
            memory = _section(data, "memory")
            named = _section(memory, "storage").get("data_dir", "/data/memory")
            how = _names_folder(str(named), base, folder)
            if how is None:
                notes.append(f"{path} sets memory.storage.data_dir {named}, another folder: not applied")
                continue
            if how:
                notes.append(f"{path}: data_dir {named} {how}")
            agents = {
                str(a.get("name")): _section(a, "memory")
                for a in (data.get("agents") or []) if isinstance(a, dict) and a.get("name")
            } if isinstance(data.get("agents"), list) else {}
            return Config(path, memory, agents), notes
    return None, notes


def _load_yaml(path: Path) -> tuple[dict[str, Any], str]:
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        return {}, f"cannot be read ({type(exc).__name__})"
    return (data, "") if isinstance(data, dict) else ({}, "is not a YAML mapping")


def _names_folder(named: str, base: Path, folder: Path) -> str | None:
    """Whether data_dir names the folder: "" when it does, a note when it does as a container's
    path (an absolute path that is not here, whose last parts are the folder's), None otherwise."""
    path = Path(named)
    if not path.is_absolute():  # SynthOrg runs where ./synthorg.yaml is: relative to that folder
        return "" if Path(os.path.realpath(base / path)) == folder else None
    if Path(os.path.realpath(path)) == folder:
        return ""
    parts = path.parts[1:]
    if parts and not path.exists() and folder.parts[-len(parts):] == parts:
        return "is a container's path (not on this machine); read as this folder"
    return None


def _days(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 1 else None


def _rules(raw: Any) -> dict[str, int]:
    """{category: days} of a list of {category, retention_days} rules."""
    rules: dict[str, int] = {}
    for rule in raw if isinstance(raw, list) else []:
        days = _days(rule.get("retention_days")) if isinstance(rule, dict) else None
        if days is not None and str(rule.get("category")) in CATEGORIES:
            rules[str(rule["category"])] = days
    return rules


def resolve_retention(config: Config, agent: dict[str, Any] | None) -> dict[str, tuple[int | None, str]]:
    """Per category, the retention in days (None: kept forever) and the rule it comes from, in
    SynthOrg's order (RetentionEnforcer._resolve_categories)."""
    retention = config.retention()
    company_rules = _rules(retention.get("rules"))
    company_default = _days(retention.get("default_retention_days"))
    agent = agent or {}
    overrides = _rules(agent.get("retention_overrides"))
    agent_default = _days(agent.get("retention_days"))
    resolved: dict[str, tuple[int | None, str]] = {}
    for category in CATEGORIES:
        for days, rule in zip(
            (overrides.get(category), company_rules.get(category), agent_default, company_default),
            RESOLUTION_ORDER, strict=False,
        ):
            if days is not None:
                resolved[category] = (days, rule)
                break
        else:
            resolved[category] = (None, RESOLUTION_ORDER[-1])
    return resolved


# -- what SynthOrg will expire or delete ----------------------------------------------------------

EXPIRY_RULE = ("SynthOrg expires_at: no longer returned (apply_post_filters); it stays on disk, where its "
               "retention cleanup, which only sees what is returned, never deletes it")


def _rule_source(rule: str, agent: str) -> str:
    """Where in synthorg.yaml a resolved retention comes from."""
    return {
        RESOLUTION_ORDER[0]: f"agents[{agent}].memory.retention_overrides",
        RESOLUTION_ORDER[1]: "memory.consolidation.retention.rules",
        RESOLUTION_ORDER[2]: f"agents[{agent}].memory.retention_days",
        RESOLUTION_ORDER[3]: "memory.consolidation.retention.default_retention_days",
    }.get(rule, "")


def upcoming(record_id: str, meta: dict[str, Any], config: Config | None, owner: str, preview: str) -> list[Upcoming]:
    """What SynthOrg will do to one point: hide it at its expires_at, and delete an agent's entry
    once it is older than its category's retention (RetentionEnforcer.cleanup_expired: created_at
    before now - days, among the entries retrieve still returns, so not one already expired)."""
    found = []
    expires_at = parse_time(meta.get(EXPIRES_AT)) if meta.get(EXPIRES_AT) else None
    if expires_at is not None:
        found.append(Upcoming(record_id, EXPIRE, expires_at, EXPIRY_RULE, owner, preview))
    agent = str(meta.get("user_id") or "")
    created = parse_time(meta.get("created_at"))
    if config is None or not agent or agent == SHARED_NAMESPACE or created is None:
        return found  # the shared knowledge base is no agent's: retention cleanup runs per agent
    category = str(meta.get(CATEGORY)) if meta.get(CATEGORY) in CATEGORIES else "working"
    days, rule = resolve_retention(config, config.agents.get(agent))[category]
    if days is None:
        return found
    when = created + timedelta(days=days)
    if expires_at is not None and expires_at <= when:
        return found
    found.append(Upcoming(
        record_id, CLEAN_UP, when,
        f"SynthOrg retention: {category} {_days_text(days)} ({rule}: {_rule_source(rule, agent)}); deleted by the "
        "next retention cleanup", owner, preview,
    ))
    return found


# -- what `info` shows -------------------------------------------------------------------------


def describe(memories: Iterable[Memory], data_dir: Path, now: datetime) -> dict[str, Any]:
    """SynthOrg's view of the store: its agents (each with its level, retention and cap), the
    shared knowledge base, expired and non-inferable entries, and where the configuration is."""
    config, notes = find_config(data_dir)
    per_agent: dict[str, list[Memory]] = {}
    shared: list[Memory] = []
    for memory in memories:
        if memory.channel == SHARED_CHANNEL:
            shared.append(memory)
        elif memory.channel.startswith(AGENT_CHANNEL):
            per_agent.setdefault(memory.channel[len(AGENT_CHANNEL):], []).append(memory)
    every = [m for ms in per_agent.values() for m in ms] + shared
    cap_value = config.cap() if config is not None else None
    cap = (
        {"value": cap_value, "from": "memory.options.max_memories_per_agent"} if cap_value is not None
        else {"value": DEFAULT_CAP, "from": "SynthOrg's default (the config does not set it)"} if config is not None
        else {"value": None, "from": f"not in the store: it is configuration; SynthOrg's default is {DEFAULT_CAP}"}
    )
    agents = [_agent(agent_id, ms, config, cap["value"], now) for agent_id, ms in sorted(per_agent.items())]
    for name in sorted(set(config.agents) - set(per_agent)) if config is not None else ():
        agents.append(_agent(name, [], config, cap["value"], now))
    publishers: dict[str, int] = {}
    for memory in shared:
        who = str(memory.metadata.get("publisher"))
        publishers[who] = publishers.get(who, 0) + 1
    company = None
    if config is not None:
        retention = config.retention()
        company = {
            "level": config.level() or f"{DEFAULT_LEVEL} (SynthOrg's default)",
            "retention_rules": _rules(retention.get("rules")),
            "default_retention_days": _days(retention.get("default_retention_days")),
            "options_retention_days": _section(config.memory, "options").get("retention_days"),
            "shared_knowledge_base": _section(config.memory, "options").get("shared_knowledge_base", True),
        }
    return {
        "config": str(config.path) if config is not None else None,
        "config_notes": notes,
        "company": company,
        "max_memories_per_agent": cap,
        "retention_resolution_order": list(RESOLUTION_ORDER),
        "agents": agents,
        "shared": {
            "entries": len(shared),
            "publishers": publishers,
            "retraction": "SynthOrg removes a shared entry only through retract(), by the agent that published it; "
                          "a delete here is that retraction (undoable)",
        },
        "expired": sum(m.status is Status.EXPIRED for m in every),
        "tags": _tag_counts(every),
    }


def _tag_counts(memories: Sequence[Memory]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for memory in memories:
        for tag in memory.tags:
            counts[tag] = counts.get(tag, 0) + 1
    return dict(sorted(counts.items()))


def _agent(agent_id: str, memories: list[Memory], config: Config | None, cap: Any, now: datetime) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": agent_id,
        "memories": len(memories),
        "expired": sum(m.status is Status.EXPIRED for m in memories),
        "over_cap": isinstance(cap, int) and len(memories) > cap,
    }
    if config is None:
        return {**out, "configured": False, "level": None, "retention": None, "past_retention": None}
    agent = config.agents.get(agent_id)
    level = agent.get("type") if agent else None
    out["configured"] = agent is not None
    out["level"] = (
        {"value": str(level), "from": f"agents[{agent_id}].memory.type"} if level is not None
        else {"value": config.level(), "from": "memory.level"} if config.level() is not None
        else {"value": DEFAULT_LEVEL, "from": "SynthOrg's default"}
    )
    resolved = resolve_retention(config, agent)
    out["retention"] = {c: {"days": d, "rule": r} for c, (d, r) in resolved.items()}
    out["past_retention"] = sum(
        1 for m in memories
        if (days := resolved[m.layer.value][0] if m.layer.value in resolved else None) is not None
        and m.created_at < now - timedelta(days=days)
    )
    return out


def owner_view(data: dict[str, Any]) -> list[str]:
    """describe() as the lines `info` and the window show."""
    shared = data["shared"]
    publishers = ", ".join(f"{p} {n}" for p, n in sorted(shared["publishers"].items())) or "none"
    tags = ", ".join(f"{t} {n}" for t, n in data["tags"].items()) or "none"
    lines = [
        f"agents: {len(data['agents'])}; shared knowledge base entries: {shared['entries']} (publishers: {publishers})",
        f"expired (past their expires_at, no longer returned by SynthOrg): {data['expired']}; tags: {tags}",
    ]
    cap = data["max_memories_per_agent"]
    lines.append(f"max_memories_per_agent: {cap['value'] if cap['value'] is not None else '—'} ({cap['from']})")
    for agent in data["agents"]:
        text = f"agent {agent['id']}: {agent['memories']} memories, {agent['expired']} expired"
        if agent["over_cap"]:
            text += f", over the cap of {cap['value']} (SynthOrg lists only that many)"
        if agent["level"] is not None:
            text += f"; level {agent['level']['value']} ({agent['level']['from']})"
            if not agent["configured"]:
                text += "; not among the config's agents: the company's settings apply"
        if agent["past_retention"]:
            text += f"; {agent['past_retention']} older than their retention (the next cleanup deletes them)"
        lines.append(text)
        if agent["retention"] is not None:
            lines.append("  retention: " + ", ".join(
                f"{c} {_days_text(r['days'])} ({r['rule']})" for c, r in agent["retention"].items()))
    lines.append(f"shared knowledge base: {shared['retraction']}")
    company = data["company"]
    if company is None:
        lines.append(
            "memory level, retention rules and max_memories_per_agent: not in the store (SynthOrg keeps them in "
            "synthorg.yaml; none found in the data folder or the folders above it)"
        )
    else:
        rules = ", ".join(f"{c} {_days_text(d)}" for c, d in company["retention_rules"].items()) or "none"
        lines.append(
            f"config {data['config']}: level {company['level']}; retention rules {rules}; default "
            f"{_days_text(company['default_retention_days'])}"
        )
    lines.append("retention resolution order: " + " > ".join(data["retention_resolution_order"]))
    lines += data["config_notes"]
    return lines


def _days_text(days: int | None) -> str:
    return "forever" if days is None else f"{days} day" + ("s" if days != 1 else "")
