"""AgentX's goals and strategies (seed 002) as their lifecycle and record, not raw rows.

A Goal has a ``status`` ('active', 'completed', 'abandoned', 'blocked'), a ``priority``, a
``deadline``, and once ``complete_goal(goal_id, status, result)`` ran, ``completed_at`` and
``result``. A Strategy counts ``success_count`` and ``failure_count`` (AgentX "calculates success
rates for recommendation": successes / (successes + failures)), has a ``context_pattern``, a
``tool_sequence`` and ``last_used``; each Tool of its sequence has ``usage_count``,
``success_count`` and ``avg_latency_ms``, which AgentX derives from its invocations, and which
are read here from ``tool_invocations`` (one row per call: success, latency_ms).

In PostgreSQL those node properties reach a memory_timeline row (memory_type 'goal' or
'strategy') through its ``metadata``; what the row does not carry is absent (None, shown "—"),
never a default. They become Memory metadata under ``goal.*`` and ``strategy.*`` keys, which
``show`` and the detail panel print, and a section of ``info`` (``owner_view``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .agentx_tables import TIMELINE, TOOLS

if TYPE_CHECKING:
    from .agentx_postgres import AgentxSource

GOAL_STATUSES = ("active", "completed", "abandoned", "blocked")
GOAL_KEYS = ("status", "priority", "deadline", "completed_at", "result")
STRATEGY_KEYS = ("success_count", "failure_count", "context_pattern", "tool_sequence", "last_used")


def kind_of(memory_type: Any) -> str:
    kind = str(memory_type or "").strip().lower()
    return kind if kind in ("goal", "strategy") else ""


def success_rate(successes: Any, failures: Any) -> float | None:
    """successes / (successes + failures); None when neither is kept or nothing was tried yet."""
    if not isinstance(successes, (int, float)) and not isinstance(failures, (int, float)):
        return None
    tried = float(successes or 0) + float(failures or 0)
    return round(float(successes or 0) / tried, 4) if tried > 0 else None


def tool_sequence(meta: dict[str, Any]) -> list[str]:
    sequence = meta.get("tool_sequence")
    return [str(t) for t in sequence] if isinstance(sequence, list) else []


def tool_stats(source: AgentxSource, names: Sequence[str] = ()) -> dict[str, dict[str, Any]]:
    """Usage count, success count, success rate and average latency per tool (of names, or all),
    from tool_invocations."""
    if not source.has(TOOLS, ("tool_name", "success", "latency_ms")):
        return {}
    where, params = ("WHERE tool_name = ANY(%s) ", [list(names)]) if names else ("", [])
    rows = source.rows(
        "SELECT tool_name, count(*) AS uses, count(*) FILTER (WHERE success) AS successes, "
        "count(*) FILTER (WHERE success IS NOT NULL) AS judged, avg(latency_ms)::float AS latency "
        f"FROM {TOOLS} {where}GROUP BY tool_name ORDER BY tool_name", params)
    return {
        row["tool_name"]: {
            "usage_count": int(row["uses"]), "success_count": int(row["successes"]),
            "success_rate": round(int(row["successes"]) / int(row["judged"]), 4) if row["judged"] else None,
            "avg_latency_ms": round(row["latency"], 1) if row["latency"] is not None else None,
        }
        for row in rows
    }


def tool_line(stats: dict[str, Any] | None) -> str:
    if stats is None:
        return "no invocation logged"
    rate = f"{stats['success_rate']:.0%} success" if stats["success_rate"] is not None else "success not logged"
    latency = f", {stats['avg_latency_ms']:g} ms average" if stats["avg_latency_ms"] is not None else ""
    return f"{stats['usage_count']} uses, {stats['success_count']} succeeded ({rate}){latency}"


def lifecycle_metadata(rows: Sequence[dict[str, Any]], tools: dict[str, dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """The goal.* and strategy.* metadata of each goal or strategy row, by row id."""
    out: dict[int, dict[str, Any]] = {}
    for row in rows:
        kind = kind_of(row.get("memory_type"))
        meta: dict[str, Any] = row["metadata"] if isinstance(row.get("metadata"), dict) else {}
        if kind == "goal":
            out[int(row["id"])] = {f"goal.{k}": meta.get(k) for k in GOAL_KEYS}
        elif kind == "strategy":
            fields: dict[str, Any] = {f"strategy.{k}": meta.get(k) for k in STRATEGY_KEYS}
            fields["strategy.success_rate"] = success_rate(meta.get("success_count"), meta.get("failure_count"))
            for name in tool_sequence(meta):
                fields[f"strategy.tool.{name}"] = tool_line(tools.get(name))
            out[int(row["id"])] = fields
    return out


def needed_tools(rows: Sequence[dict[str, Any]]) -> list[str]:
    """The tools the strategy rows among rows name."""
    names: list[str] = []
    for row in rows:
        if kind_of(row.get("memory_type")) == "strategy" and isinstance(row.get("metadata"), dict):
            names += tool_sequence(row["metadata"])
    return sorted(set(names))


def overview(source: AgentxSource) -> list[str]:
    """info's lines on goals (per status, by priority), strategies (success rates) and tools."""
    rows = source.rows(
        f"SELECT id, memory_type, summary, metadata FROM {TIMELINE} "
        "WHERE lower(trim(memory_type)) IN ('goal', 'strategy') AND NOT coalesce(archived, false) ORDER BY id")
    goals = [r for r in rows if kind_of(r["memory_type"]) == "goal"]
    strategies = [r for r in rows if kind_of(r["memory_type"]) == "strategy"]
    lines: list[str] = []
    if goals:
        statuses: dict[str, int] = {}
        for goal in goals:
            status = str((goal["metadata"] or {}).get("status") or "status not kept")
            statuses[status] = statuses.get(status, 0) + 1
        lines.append(f"goals: {len(goals)} (" + ", ".join(f"{n} {s}" for s, n in sorted(statuses.items())) + ")")
        for goal in goals:
            meta = goal["metadata"] or {}
            priority = meta.get("priority")
            lines.append(f"  {source.id_prefix}{goal['id']} [{meta.get('status') or '—'}, priority "
                         f"{priority if priority is not None else '—'}] {_clip(goal['summary'])}")
    if strategies:
        lines.append(f"strategies: {len(strategies)}")
        for strategy in strategies:
            meta = strategy["metadata"] or {}
            rate = success_rate(meta.get("success_count"), meta.get("failure_count"))
            shown = f"{rate:.0%}" if rate is not None else "—"
            lines.append(f"  {source.id_prefix}{strategy['id']} success rate {shown} ({meta.get('success_count', '—')} "
                         f"succeeded, {meta.get('failure_count', '—')} failed) {_clip(strategy['summary'])}")
    tools = tool_stats(source)
    if tools:
        lines.append("tools: " + "; ".join(f"{name} {tool_line(stats)}" for name, stats in tools.items()))
    return lines


def _clip(text: Any, width: int = 60) -> str:
    text = " ".join(str(text or "").split())
    return text if len(text) <= width else text[: width - 1] + "…"
