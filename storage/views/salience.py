"""Salience as data, for the CLI and the GUI: one memory's or entity's decay and its curve, and
the store-wide spread of effective salience with the memories most at risk."""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime, timedelta
from typing import Any

from ..errors import NotFoundError
from ..model import Entity, Memory, Status
from ..query import MemoryQuery
from ..salience import EntityDecay, InferredFactDecay, SalienceModel, salience_kept
from ..store import MemoryStore
from ..timeutil import as_utc, utcnow

HISTOGRAM_BINS = 10


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
    # No curve where the salience is the owner's (its formula is its own) or there is none.
    report["curve"] = [
        {"at": t.isoformat(), "effective": round(v, 6)} for t, v in model.curve(memory, start, end, 40)
    ]
    report["model"] = model.to_dict()
    report["formula"] = model.formula_of(memory)
    if fact_decay is not None and fact_decay.applies(memory):
        report["confidence"] = {
            "stored": memory.confidence,
            "effective": None if (effective := fact_decay.effective(memory, at)) is None else round(effective, 6),
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
    """A histogram of effective salience over active memories and the most at-risk ones; the
    active memories whose store keeps no salience (workspace files, most other tools' records) are
    counted apart, in none of its bins; a salience the owner decays itself is taken as it keeps it."""
    at = as_utc(at) if at else utcnow()
    first = salience_at_risk(store, at, at_risk=at_risk)
    spread = salience_spread_of(store, at, at_risk=at_risk)
    return {**spread, **first, "formulas": {**spread["formulas"], **first["formulas"]}}


def salience_at_risk(store: MemoryStore, at: datetime | None = None, *, at_risk: int = 20) -> dict[str, Any]:
    """The memories most at risk, weakest first, each with the product's values for it (a
    memory.db answers from a few index candidates: the Salience tab's first rows)."""
    model = store.settings.salience
    at = as_utc(at) if at else utcnow()
    _histogram, candidates = store.salience_spread(model, at, 0, at_risk)
    return {
        "at": at.isoformat(),
        "model": model.to_dict(),
        # a store's own salience, shown as its owner keeps it
        "formulas": {f"{m.source.format or m.source.kind.value} salience": model.formula_of(m)
                     for m in candidates if not salience_kept(m).decayed_here},
        "at_risk": [
            {**model.report(m, at), "formula": model.formula_of(m), "content": m.content, "channel": m.channel}
            for m in candidates
        ],
    }


def salience_spread_of(store: MemoryStore, at: datetime | None = None, *, at_risk: int = 20) -> dict[str, Any]:
    """The histogram of effective salience (a pass over every active memory), the memories that
    keep none, the decay formulas and the entities most at risk."""
    model = store.settings.salience
    at = as_utc(at) if at else utcnow()
    histogram, _none = store.salience_spread(model, at, HISTOGRAM_BINS, 0)
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
        "without_salience": store.count(MemoryQuery(statuses=(Status.ACTIVE,))) - sum(histogram),
    }
