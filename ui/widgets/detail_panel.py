"""The detail panel: one memory's full content, metadata, source, provenance and history."""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

from markdown_it import MarkdownIt
from mnemoscope.storage import ABSENT, AuditEntry, Memory, MemoryStore, StoreError, shown
from mnemoscope.storage.salience import salience_kept
from PySide6.QtCore import QUrl
from PySide6.QtWidgets import QTextBrowser, QWidget

# HTML in memories is shown as text, never interpreted; nothing remote is ever loaded.
_markdown = MarkdownIt("commonmark", {"html": False})


class SafeTextBrowser(QTextBrowser):
    """A QTextBrowser that loads no resource (images, stylesheets) from anywhere."""

    def loadResource(self, kind: int, name: QUrl | str) -> Any:
        return None


class DetailPanel(SafeTextBrowser):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setOpenLinks(False)
        self.setObjectName("detail_panel")
        self.setAccessibleName("Memory details")
        self.show_nothing()

    def show_nothing(self) -> None:
        self.setHtml("<p style='color:gray'>Select a memory to see it whole.</p>")

    def show_memory(
        self,
        memory: Memory,
        history: list[AuditEntry],
        promotion: dict[str, Any],
        owner_history: list[dict[str, Any]] | None = None,
    ) -> None:
        self.setHtml(render_memory(memory, history, promotion, owner_history or []))


def render_memory(
    memory: Memory, history: list[AuditEntry], promotion: dict[str, Any], owner_history: Sequence[dict[str, Any]] = ()
) -> str:
    esc = html.escape
    src = memory.source
    rows = [
        ("Layer", memory.layer.value),
        ("Channel", memory.channel),
        ("Status", memory.status.value),
        ("Tags", ", ".join(memory.tags) or "–"),
        ("Source", f"{src.format or src.kind.value}: {src.location}"),
        ("Created", memory.created_at.strftime("%Y-%m-%d %H:%M")),
        ("Updated", memory.updated_at.strftime("%Y-%m-%d %H:%M")),
        ("Last access", memory.last_accessed.strftime("%Y-%m-%d %H:%M")),
        ("Accesses", shown(memory.access_count)),
        ("Salience (stored)", _salience(memory)),
        ("Confidence", shown(memory.confidence, ".2f")),
        ("Conversations", shown(memory.conversations)),
    ]
    prov = memory.provenance
    if prov.promoted_from:
        rows.append(("Promoted from", prov.promoted_from))
    if prov.derived_from:
        rows.append(("Derived from", ", ".join(prov.derived_from)))
    if prov.imported_from:
        rows.append(("Imported from", prov.imported_from))
    if src.format:  # what the owning tool keeps beside the text
        rows += [(str(k), str(v)) for k, v in sorted(memory.metadata.items())]
    table = "".join(
        f"<tr><td style='color:#555;padding-right:12px'>{esc(k)}</td><td>{esc(v)}</td></tr>" for k, v in rows
    )
    met = promotion.get("met", {})
    promo = esc(", ".join(
        f"{k} {ABSENT} (not kept)" if promotion["values"][k] is None
        else f"{k} {promotion['values'][k]} {'≥' if ok else '<'} {promotion['thresholds'][k]}"
        for k, ok in met.items()
    ))
    events = "".join(
        f"<li>#{e.seq} {e.at:%Y-%m-%d %H:%M} <b>{esc(e.operation)}</b> ({esc(e.state)}) by {esc(e.actor)}</li>"
        for e in history
    ) or "<li style='color:gray'>no curation steps yet</li>"
    owner = "".join(
        f"<li>{esc(str(e.get('updated_at') or e.get('created_at') or ''))[:19]} <b>{esc(str(e.get('event')))}</b> "
        + (f"{esc(str(e.get('old_memory') or ''))} → {esc(str(e.get('new_memory') or ''))}"
           if e.get("old_memory") or e.get("new_memory") else "")
        + f"{' by ' + esc(str(e['author'])) if e.get('author') else ''}</li>"
        for e in owner_history
    )
    owner_block = f"<p><b>{esc(src.format)} history</b></p><ul>{owner}</ul>" if owner else ""
    return (
        f"<h3>{esc(memory.id)}</h3>"
        f"<div>{_markdown.render(memory.content)}</div>"
        f"<table>{table}</table>"
        f"<p><b>Promotion thresholds</b>: {promo}</p>"
        f"<p><b>History</b></p><ul>{events}</ul>"
        f"{owner_block}"
    )


def _salience(memory: Memory) -> str:
    """The stored salience; as its owner keeps it (and says so), or "—" where the owner keeps none."""
    kept = salience_kept(memory)
    if not kept.kept:
        return f"— ({kept.describe()})"
    return shown(memory.salience, ".2f") + ("" if kept.decayed_here else f" ({kept.describe()})")


def detail_of(store: MemoryStore, memory_id: str) -> dict[str, Any]:
    """What the detail panel shows of one memory (runs on a worker)."""
    memory = store.get(memory_id)
    history: list[AuditEntry] = store.history(target=memory.id, limit=50)
    owner_error: StoreError | None = None
    try:
        owner_history = store.owner_history(memory.id)
    except StoreError as exc:
        owner_error, owner_history = exc, []
    return {"memory": memory, "history": history, "promotion": store.settings.promotion.check(memory),
            "owner_history": owner_history, "owner_error": owner_error}
