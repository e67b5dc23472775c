"""What a purge leaves of a memory in the journal: that it happened, never what the memory said.

A journal entry keeps every record it changed as before/after snapshots, so that undo and redo
can write them back. A purge removes a memory for good, so the snapshots of its records (its own
entry's, and those of every earlier step that changed them: edits, a soft delete, a restore) are
replaced by a marker that names the purge step, and the texts it held are replaced by PURGED in
the entries' details. The entries themselves stay: operation, targets and time still tell what
was done. Undo and redo refuse to write a marker back (see is_purged).

Which snapshots are the memory's: those of the records the purge named (the memory and its
copies), and, in the steps that named the memory, those of records that no longer exist whose
text held one of the memory's texts (a markdown block changes id with its text: each version
named the memory's text of its day). A step that named nothing but the memory has all its
snapshots redacted. Each text found that way in an older snapshot is looked for in turn.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

PURGED = "[purged]"
_STEP = "purge_step"
# Keys under which the sources' snapshots (and the Curator's details) keep a memory's text: a
# row's content, a vector's document, a markdown block's text, mem0's data and its lemmas.
TEXT_KEYS = frozenset({"content", "document", "text", "data", "text_lemmatized", "memory"})
_SHORTEST = 3  # a text shorter than this is not looked for in other records' snapshots


def purged_snapshot(step: int) -> dict[str, Any]:
    """What a snapshot of a purged record becomes: a marker naming the purge step."""
    return {PURGED: True, _STEP: step}


def is_purged(snapshot: Any) -> bool:
    return isinstance(snapshot, dict) and snapshot.get(PURGED) is True and _STEP in snapshot


def purge_step(snapshot: Any) -> int | None:
    """The purge step a redacted snapshot names (None: not redacted)."""
    return int(snapshot[_STEP]) if is_purged(snapshot) else None


@dataclass
class Purge:
    """One purge, as the journal redacts it: the step, the records and ids of what it removed
    (grown as older versions are found), their texts, and whether a record no longer exists."""

    step: int
    ids: set[str]
    texts: set[str]
    gone: Callable[[str], bool]
    # Records found to exist (or not) already, asked once.
    _known: dict[str, bool] = field(default_factory=dict)

    def is_gone(self, record: str) -> bool:
        if record not in self._known:
            self._known[record] = self.gone(record)
        return self._known[record]

    def redact(self, targets: Iterable[str], changes: list[dict[str, Any]], details: dict[str, Any]) -> bool:
        """Redact one entry in place (its changes as the journal stores them, and its details);
        True when anything changed. Texts and ids found in it are added to the purge's."""
        targets = list(targets)
        alone = bool(targets) and set(targets) <= self.ids
        changed = False
        for change in changes:
            if not self._is_its(change, alone):
                continue
            self.ids.add(change["record"])
            for side in ("before", "after"):
                snapshot = change.get(side)
                if snapshot is not None and not is_purged(snapshot):
                    self.texts.update(texts_in(snapshot))
                    change[side] = purged_snapshot(self.step)
                    changed = True
        if alone:
            self.texts.update(texts_in(details))
        if self.texts and details:
            redacted = _without_texts(details, self.texts)
            if redacted != details:
                details.clear()
                details.update(redacted)
                changed = True
        return changed

    def _is_its(self, change: dict[str, Any], alone: bool) -> bool:
        if alone or change["record"] in self.ids:
            return True
        snapshots = [change.get("before"), change.get("after")]
        held = [s for s in snapshots if s is not None and not is_purged(s)]
        return bool(held) and any(_holds(s, self.texts) for s in held) and self.is_gone(change["record"])


def texts_in(value: Any, key: str | None = None) -> set[str]:
    """The texts a snapshot (or details) keeps under TEXT_KEYS, at any depth; a markdown bullet's
    text without its bullet too."""
    found: set[str] = set()
    if isinstance(value, dict):
        for k, v in value.items():
            found |= texts_in(v, k if isinstance(k, str) else None)
    elif isinstance(value, (list, tuple)):
        for v in value:
            found |= texts_in(v, key)
    elif isinstance(value, str) and key in TEXT_KEYS and len(value.strip()) >= _SHORTEST and value != PURGED:
        found.add(value)
        bare = value.strip().lstrip("-*+").strip()
        if bare != value and len(bare) >= _SHORTEST:
            found.add(bare)
    return found


def _holds(value: Any, texts: set[str]) -> bool:
    if isinstance(value, str):
        return any(t in value for t in texts if len(t) >= _SHORTEST)
    if isinstance(value, dict):
        return any(_holds(v, texts) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_holds(v, texts) for v in value)
    return False


def _without_texts(value: Any, texts: set[str]) -> Any:
    """value with every string that holds one of texts replaced by PURGED."""
    if isinstance(value, str):
        return PURGED if _holds(value, texts) else value
    if isinstance(value, dict):
        return {k: _without_texts(v, texts) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_texts(v, texts) for v in value]
    return value
