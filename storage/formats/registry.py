"""The one list of foreign formats ``open_store`` detects, in the order they are asked.

``detect_formats(path)`` asks every format whether the path (a folder or a file) holds its store;
each answer (match.FormatMatch) says how to open it and which native readings of the same files it
replaces (a mem0 Chroma directory is read as mem0, not as a bare Chroma directory). A format module
is imported on the first detection, not with this one.

Not listed, as they are not detected in a folder: ``sqlite_table`` (a table mapped by hand, opened
through its remembered mapping), ``agentx_postgres`` (a PostgreSQL server) and ``agentx_redis`` (a Redis
server), each opened by opening.open_location;
``base``, ``sql_backed``, ``text_files``, ``match``, ``vec0`` (sqlite-vec), ``agentx_curation``,
``agentx_tables``, ``agentx_redis_values``, ``agentx_counts``, ``agentx_promotion``, ``agentx_goals``,
``agentx_retention`` and ``facts_layout`` are parts the formats share or split off; ``synthorg`` is how
mem0_qdrant reads what SynthOrg writes; ``openclaw_workspace`` and ``openclaw_templates`` are how
openclaw reads an OpenClaw workspace.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

from .match import FormatMatch

FORMATS = (
    "mem0",
    "mem0_qdrant",
    "langgraph",
    "openai_agents",
    "facts_db",
    "google_adk",
    "agenticx",
    "agentix",
    "openclaw",
    "crewai",
    "letta",
    "letta_code",
    "claude_memory",
    "mnemoscope_export",
)
NOT_DETECTED = ("sqlite_table", "agentx_postgres", "agentx_redis")
SHARED_PARTS = (
    "base", "sql_backed", "text_files", "match", "registry", "vec0", "agentx_curation", "agentx_tables",
    "facts_layout", "agentx_redis_values",
    "agentx_counts", "agentx_promotion", "agentx_goals", "agentx_retention",  # AgentX's rules (agentx_postgres)
    "synthorg",  # SynthOrg's metadata and configuration over mem0 on Qdrant (mem0_qdrant)
    "openclaw_workspace", "openclaw_templates",  # an OpenClaw workspace's markdown (openclaw)
    "agenticx_budget",  # AgenticX's compaction and MemoryHook caps (agenticx)
    "langgraph_threads",  # SqliteSaver's threads, read per thread (langgraph)
    "qdrant_points",  # Qdrant local mode's pickled points (mem0_qdrant)
)


def detect_formats(path: Path) -> list[FormatMatch]:
    from ..detect.looks import as_path, one_look

    path = as_path(path)
    found: list[FormatMatch] = []
    with one_look():
        for name in FORMATS:
            module = f"{__package__}.{name}"
            found += (sys.modules.get(module) or importlib.import_module(module)).detect(path)
    return found
