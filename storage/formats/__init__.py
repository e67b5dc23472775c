"""Stores other agent tools write, each one module behind the source protocol.

``detect_formats(path)`` asks every format whether the path (a folder or a file)
holds its store; each answer says how to open it and which native readings of
the same files it replaces (a mem0 Chroma directory is read as mem0, not as a
bare Chroma directory).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..model import Kind


@dataclass(frozen=True)
class FormatMatch:
    format: str
    label: str
    location: Path
    open: Callable[[], Any] = field(compare=False)
    # Native kinds at these paths are read by this format instead.
    claims: tuple[tuple[Kind, Path], ...] = ()
    # Where the undo journal goes when nothing native holds one; None: the opened folder.
    journal_dir: Path | None = None


def detect_formats(path: Path) -> list[FormatMatch]:
    from ..looking import one_look
    from . import (
        agenticx,
        agentix,
        claude_memory,
        crewai,
        facts_db,
        google_adk,
        langgraph,
        letta,
        mem0,
        mem0_qdrant,
        mnemoscope_export,
        openai_agents,
        openclaw,
    )

    path = Path(path)
    found: list[FormatMatch] = []
    with one_look():
        for module in (mem0, mem0_qdrant, langgraph, openai_agents, facts_db, google_adk, agenticx, agentix, openclaw,
                       crewai, letta, claude_memory, mnemoscope_export):
            found += module.detect(path)
    return found
