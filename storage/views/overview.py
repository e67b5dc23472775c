"""Views as data, for the CLI and the GUI: scratchpad and salience."""

from __future__ import annotations

import json
from dataclasses import asdict
from datetime import datetime, timedelta
from typing import Any

from ..errors import NotFoundError
from ..model import Entity, Memory, Status
from ..query import MemoryQuery
from ..salience import EntityDecay, InferredFactDecay, SalienceModel
from ..store import MemoryStore
from ..timeutil import as_utc, utcnow

HISTOGRAM_BINS = 10


def scratchpad(store: MemoryStore, session_id: str | None = None) -> list[dict[str, Any]]:
    """Sessions -> keys -> values, reserved key patterns labelled, JSON values decoded."""
    entries: dict[str, list[dict[str, Any]]] = {}
    for entry in store.scratch_entries(session_id):
        item = entry.to_dict()
        item["json"] = _json_or_none(entry.value)
        entries.setdefault(entry.session_id, []).append(item)
    sessions = store.sessions()
    out = []
    for session in sessions:
        if session_id and session.id != session_id:
            continue
        out.append({**session.to_dict(), "entries": entries.pop(session.id, [])})
    # Scratch keys of sessions with no session row are shown, not hidden.
    for orphan, items in sorted(entries.items()):
        out.append({"id": orphan, "channel": None, "title": "(no session row)", "entries": items})
    return out


def _json_or_none(value: str) -> Any:
    text = value.strip()
    if not text or text[0] not in "[{":
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return None


def salience_of(store: MemoryStore, memory_id: str, at: datetime | None = None) -> dict[str, Any]:
    """One memory's effective salience now (or at a date), its curve and its crossing date; for
    an inferred fact its decayed confidence too. An entity's id gives the entity's decay."""
    try:
        memory = store.get(memory_id)
    except NotFoundError:
        entity = next((e for e in store.entities() if e.id == memory_id), None)
        if entity is None:
            raise
        return entity_salience_report(store.settings.entity_decay, entity, at)
    return salience_report(store.settings.salience, memory, at, store.settings.fact_decay)


def salience_report(
    model: SalienceModel, memory: Memory, at: datetime | None = None, fact_decay: InferredFactDecay | None = None
) -> dict[str, Any]:
    """salience_of for a memory already read."""
    at = as_utc(at) if at else utcnow()
    report = model.report(memory, at)
    start = min(as_utc(memory.last_accessed), at) - timedelta(days=7)
    crossing = model.crossing_date(memory)
    end = max(at, crossing or at) + timedelta(days=14)
    report["curve"] = [
        {"at": t.isoformat(), "effective": round(v, 6)} for t, v in model.curve(memory, start, end, 40)
    ]
    report["model"] = model.to_dict()
    report["formula"] = model.formula()
    if fact_decay is not None and fact_decay.applies(memory):
        report["confidence"] = {
            "stored": memory.confidence,
            "effective": round(fact_decay.effective(memory, at), 6),
            "formula": fact_decay.formula(),
            "model": _model_dict(fact_decay),
        }
    return report


def entity_salience_report(decay: EntityDecay, entity: Entity, at: datetime | None = None) -> dict[str, Any]:
    at = as_utc(at) if at else utcnow()
    return {
        "kind": "entity",
        "id": entity.id,
        "name": entity.name,
        "stored_salience": entity.salience,
        "last_accessed": entity.last_accessed.isoformat() if entity.last_accessed else None,
        "at": at.isoformat(),
        "effective": round(decay.effective(entity, at), 6),
        "cleanup_candidate": decay.is_cleanup_candidate(entity, at),
        "formula": decay.formula(),
        "model": _model_dict(decay),
    }


def _model_dict(model: EntityDecay | InferredFactDecay) -> dict[str, Any]:
    return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(model).items()}


def salience_overview(
    store: MemoryStore, at: datetime | None = None, *, at_risk: int = 20
) -> dict[str, Any]:
    """A histogram of effective salience over active memories and the most at-risk ones."""
    model = store.settings.salience
    at = as_utc(at) if at else utcnow()
    histogram = [0] * HISTOGRAM_BINS
    candidates = []
    sources: list[Any] = list(store._sources)
    db = store._workspace.db if store._workspace is not None else None
    if store._workspace is not None and db is not None:  # computed in SQL; the workspace's other parts below, in Python
        sql_hist = db.salience_histogram(model.decay_rate, model.access_boost, at, HISTOGRAM_BINS)
        histogram = [a + b for a, b in zip(histogram, sql_hist, strict=False)]
        candidates += db.lowest_salience(model.decay_rate, model.access_boost, at, at_risk)
        sources = [p for p in store._workspace.parts if p is not db] + [s for s in sources if s is not store._workspace]
    for source in sources:
        query = MemoryQuery(statuses=(Status.ACTIVE,))
        total = source.count(query)
        for memory in source.page(query, limit=total):
            value = model.effective(memory, at)
            histogram[min(int(value * HISTOGRAM_BINS), HISTOGRAM_BINS - 1)] += 1
            candidates.append(memory)
    candidates.sort(key=lambda m: (model.effective(m, at), m.id))
    settings = store.settings
    entities = sorted(store.entities(), key=lambda e: (settings.entity_decay.effective(e, at), e.id))
    return {
        "at": at.isoformat(),
        "model": model.to_dict(),
        "formulas": {
            "memory salience": model.formula(),
            "entity salience": settings.entity_decay.formula(),
            "inferred-fact confidence": settings.fact_decay.formula(),
        },
        "entities_at_risk": [entity_salience_report(settings.entity_decay, e, at) for e in entities[:at_risk]],
        "histogram": [
            {"from": i / HISTOGRAM_BINS, "to": (i + 1) / HISTOGRAM_BINS, "count": n}
            for i, n in enumerate(histogram)
        ],
        "at_risk": [
            {**model.report(m, at), "content": m.content, "channel": m.channel}
            for m in candidates[:at_risk]
        ],
    }
