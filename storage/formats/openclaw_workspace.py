"""An OpenClaw workspace's markdown: its memories, told apart from the templates OpenClaw wrote,
with the recall annotations OpenClaw reads out of them.

Templates. On first run OpenClaw writes AGENTS.md, SOUL.md, IDENTITY.md, USER.md (and BOOTSTRAP.md)
from the templates its package ships (src/agents/workspace.ts: ensureAgentWorkspace), and records
the SHA-256 of each file it generated in its state database (``state/openclaw.sqlite``,
``workspace_generated_bootstrap_hashes`` joined to ``workspace_setup_state`` by workspace). A file
whose bytes still have that hash is OpenClaw's template, whole; in any other one, the blocks whose
text is a block of the shipped template (openclaw_templates.py) are. Template text is no memory:
it is left out of pages, counts and searches, and ``info`` says how much of each file it is.

Annotations. Writers (dreaming, the agent) put recall metadata on an entry as trailing comments:
``<!-- importance: N -->`` (an integer 1 to 10, set once at write time; ``memory_search``
multiplies relevance by it), ``<!-- trigger: phrase, phrase -->`` and ``<!-- project: key -->``
(packages/memory-host-sdk/src/host/curated-annotations.ts). OpenClaw's index keeps importance and
triggers (read in MEMORY.md and USER.md only, on a line that ends with the comment) and project
keys (any memory file but USER.md) in columns; here they are the memory's metadata, read by the
same rules. An importance annotation (its value a number) is that number and nothing else: it is
taken out of the memory's text (so no finding reports it as hidden text) and an edit of the text
keeps it on the entry; one OpenClaw does not read (a daily note's, out of 1-10) is kept in sight as
``unread annotations``. Trigger and project comments hold free text that OpenClaw injects raw with
MEMORY.md at session start: they stay in the text, where a person (and ``scan``) sees them.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..model import Memory
from ..native.markdown.blocks import Block
from ..native.markdown.file_blocks import FileBlocks
from ..native.markdown.source import MarkdownSource
from ..source import PROMOTE, Plan, PlanContext, Snapshot
from .base import reading, sqlite_tables
from .openclaw_templates import OPENCLAW_VERSION, TEMPLATE_KEYS

STATE_DB = Path("state") / "openclaw.sqlite"
CURATED_ROOT = frozenset({"MEMORY.md", "memory.md", "USER.md"})  # where importance and triggers are read
_MARKER = re.compile(r"<!--\s*(trigger|importance|project)\s*:", re.IGNORECASE)
_LINE_BREAK = re.compile(r"[\r\n]")
_TRAILING_SPACE = re.compile(r"[ \t]+(?=$|[\r\n\u2028\u2029])")
INVALID_PROJECT = "!invalid-project-annotation"


@dataclass(frozen=True)
class Annotation:
    start: int
    end: int
    kind: str  # trigger, importance or project
    value: str

    def text(self, source: str) -> str:
        return source[self.start : self.end]


def carriers(text: str, line_scoped: bool = True) -> Iterator[Annotation]:
    """OpenClaw's scanMemoryAnnotations: each ``<!-- kind: value -->`` comment (line_scoped: only
    those closed on the line they open on)."""
    at = 0
    while True:
        m = _MARKER.search(text, at)
        if m is None:
            return
        closing = text.find("-->", m.end())
        if closing < 0:
            return
        if line_scoped:
            newline = _LINE_BREAK.search(text, m.end())
            if newline is not None and newline.start() < closing:
                at = m.end()
                continue
        yield Annotation(m.start(), closing + 3, m.group(1).lower(), text[m.end() : closing].strip())
        at = closing + 3


def importance_annotations(text: str) -> list[Annotation]:
    """The ``<!-- importance: N -->`` comments of text whose value is a number (closed on their line)."""
    return [a for a in carriers(text) if a.kind == "importance" and re.fullmatch(r"\d+", a.value)]


def without(text: str, found: list[Annotation]) -> str:
    """text without those comments (and the spaces they leave at the end of a line)."""
    if not found:
        return text
    parts, cursor = [], 0
    for a in found:
        parts.append(text[cursor : a.start])
        cursor = a.end
    parts.append(text[cursor:])
    return _TRAILING_SPACE.sub("", "".join(parts))


def recall_metadata(rel: str, lines: list[str]) -> dict[str, Any]:
    """What OpenClaw's index keeps of an entry's annotations (extractCuratedEntryRecallMetadata):
    importance and triggers in MEMORY.md/USER.md from lines that end with a comment, project keys
    in any memory file but USER.md."""
    out: dict[str, Any] = {}
    importance: int | None = None
    phrases: dict[str, None] = {}
    for line in lines if rel in CURATED_ROOT else ():
        if not line.rstrip().endswith("-->"):
            continue
        for a in carriers(line, line_scoped=False):
            if a.kind == "trigger":
                phrases.update((p.strip(), None) for p in re.split(r"[,;]", a.value) if p.strip())
            elif a.kind == "importance" and re.fullmatch(r"\d+", a.value) and 1 <= int(a.value) <= 10:
                importance = max(importance or 0, int(a.value))
    if importance is not None:
        out["importance"] = importance
    if phrases:
        out["triggers"] = "; ".join(phrases)
    if rel.upper() != "USER.MD":
        keys = _project_keys("\n".join(lines))
        if keys:
            out["project"] = keys
    return out


def _project_keys(text: str) -> str | None:
    markers = len(re.findall(r"<!--\s*project\s*:", text, re.IGNORECASE))
    if not markers:
        return None
    parsed, raw = 0, 0
    keys: dict[str, None] = {}
    for a in carriers(text, line_scoped=False):
        if a.kind != "project":
            continue
        parsed += 1
        for part in a.value.split(";"):
            raw += 1
            key = _project_key(part)
            if key:
                keys[key] = None
    valid = parsed == markers and raw > 0 and raw == len(keys)
    return INVALID_PROJECT if not valid else "; ".join(keys) or None


def _project_key(value: str) -> str | None:
    key = value.strip()
    if not key or re.search(r"[\r\n<>]", key):
        return None
    if key.startswith("path:"):
        return key
    slash = key.find("/")
    return key if slash < 1 else key[:slash].lower() + key[slash:]


def is_memory_file(rel: str) -> bool:
    """The files OpenClaw indexes as memory (source "memory"), whose annotations it strips."""
    return rel in CURATED_ROOT or (rel.startswith("memory/") and rel.endswith(".md"))


def generated_hashes(state: Path | None, workspace: Path) -> dict[str, str]:
    """file name -> SHA-256 OpenClaw recorded when it generated that file in this workspace."""
    db = state / STATE_DB if state is not None else None
    if db is None or not db.is_file():
        return {}
    tables = sqlite_tables(db)
    if "workspace_generated_bootstrap_hashes" not in tables or "workspace_setup_state" not in tables:
        return {}
    with reading(db) as con:
        rows = con.execute(
            "SELECT s.workspace_path, h.filename, h.sha256 FROM workspace_generated_bootstrap_hashes h "
            "JOIN workspace_setup_state s ON s.workspace_key = h.workspace_key"
        ).fetchall()
    here = os.path.realpath(workspace)
    return {
        str(name): str(sha) for path, name, sha in rows
        if path and os.path.realpath(str(path)) == here
    }


class OpenClawWorkspace(MarkdownSource):
    """The markdown of an OpenClaw workspace: its memories without OpenClaw's template text,
    annotations read as OpenClaw reads them."""

    format = "openclaw-workspace"
    label = "OpenClaw workspace markdown"
    keeps: frozenset[str] = frozenset()  # OpenClaw keeps no salience, confidence or counts of an entry

    def __init__(self, root: Path, state: Path | None = None) -> None:
        self._generated = generated_hashes(state, Path(root))
        self._templates: dict[str, tuple[FileBlocks, frozenset[int]]] = {}
        super().__init__(root)

    # -- templates ---------------------------------------------------------------------

    def _left_out(self, parsed: FileBlocks) -> frozenset[int]:
        return super()._left_out(parsed) | self.template_blocks(parsed)

    def _hides(self, rel: str) -> bool:
        return super()._hides(rel) or rel in TEMPLATE_KEYS or rel in self._generated

    def template_blocks(self, parsed: FileBlocks) -> frozenset[int]:
        """The blocks of a file that are OpenClaw's template text."""
        rel = parsed.rel
        if rel not in TEMPLATE_KEYS and rel not in self._generated:
            return frozenset()
        known = self._templates.get(rel)
        if known is not None and known[0] is parsed:
            return known[1]
        found = frozenset(range(len(parsed))) if self._as_generated(rel) else self._template_text(parsed)
        self._templates[rel] = (parsed, found)
        return found

    def _as_generated(self, rel: str) -> bool:
        wanted = self._generated.get(rel)
        if wanted is None:
            return False
        try:
            data = (self.root / rel).read_bytes()
        except OSError:
            return False
        return hashlib.sha256(data).hexdigest() == wanted

    def _template_text(self, parsed: FileBlocks) -> frozenset[int]:
        import numpy as np

        keys = TEMPLATE_KEYS.get(parsed.rel)
        if not keys or not len(parsed):
            return frozenset()
        wanted = np.fromiter((int(k, 16) for k in keys), np.uint64, len(keys))
        return frozenset(np.flatnonzero(np.isin(parsed.keys(), wanted)).tolist())

    def template_counts(self) -> dict[str, tuple[int, int]]:
        """file -> (template blocks, all blocks), for the files that hold template text."""
        out = {}
        for rel in self.files():
            if rel not in TEMPLATE_KEYS and rel not in self._generated:
                continue  # (no template text: not read)
            parsed = self._parsed(rel)
            n = len(self.template_blocks(parsed))
            if n:
                out[rel] = (n, len(parsed))
        return out

    def describe(self) -> dict[str, Any]:
        templates = self.template_counts()
        view = [  # as OpenClaw sees its workspace: which files are still (partly) its templates
            f"{rel}: {'all' if n == total else f'{n} of {total}'} blocks are OpenClaw's bootstrap template text "
            "(not listed as memories)"
            for rel, (n, total) in templates.items()
        ]
        return {
            **super().describe(), "files": [str(self.root)], "read_only": False, "read_only_reason": "",
            "editable_fields": list(self.capabilities().editable_fields), "deletable": True,
            "problems": self.problems(), "owner_view": view,
            "templates": {rel: n for rel, (n, _total) in templates.items()}, "template_version": OPENCLAW_VERSION,
        }

    # -- annotations ---------------------------------------------------------------------

    def memory(self, block: Block) -> Memory:
        memory = super().memory(block)
        memory = memory.with_changes(source=replace(memory.source, format="openclaw"))
        if not is_memory_file(block.path) or not _MARKER.search(block.text):
            return memory
        read = recall_metadata(block.path, block.text.splitlines())
        metadata = {**memory.metadata, **read}
        importance = importance_annotations(block.content)
        unread = [a.text(block.content) for a in importance if not ("importance" in read and 1 <= int(a.value) <= 10)]
        if unread:
            metadata["unread annotations"] = " ".join(unread)
        return memory.with_changes(content=without(block.content, importance), metadata=metadata)

    def plan_edit(self, record_id: str, snap: Snapshot, content: str) -> Plan:
        """The new text, with the entry's importance annotations kept on it (unless the new text
        has its own)."""
        block = self.block_for(record_id)
        if block is not None and is_memory_file(block.path) and not importance_annotations(content):
            kept = [a.text(block.content) for a in importance_annotations(block.content)]
            if kept:
                content = content.rstrip() + " " + " ".join(kept)
        return super().plan_edit(record_id, snap, content)

    def plan(self, operation: str, memory: Memory, fields: dict[str, Any], context: PlanContext) -> Plan:
        block = self.block_for(memory.id)
        if operation == PROMOTE and block is not None:  # the entry moves with its annotations
            memory = memory.with_changes(content=block.content)
        return super().plan(operation, memory, fields, context)
