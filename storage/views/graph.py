"""The entity graph: entities and their relations as a networkx graph.

The graph is asked of the database that holds it (storage/native/db/graph.py): an ego graph by
recursive SQL, the nodes shown capped there; networkx holds only what is shown."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import networkx as nx
from networkx.readwrite import json_graph

from ..errors import NotFoundError, UnsupportedError
from ..model import Entity, Memory, Relation
from ..native.db.graph import Edge, Node
from ..store import MemoryStore

# The most best-connected entities offered as centers: a store may hold millions.
CENTER_CHOICES = 300


def entity_graph(
    store: MemoryStore,
    *,
    relation_types: Sequence[str] = (),
    channels: Sequence[str] = (),
) -> nx.MultiDiGraph:
    """Every entity as a node, every relation between two entities as an edge (the whole
    graph in memory: for exports; graph_view draws a part of it without reading the rest)."""
    return _graph(store.entities(channels), store.relations(types=relation_types, channels=channels))


def _graph(nodes: Sequence[Entity | Node], edges: Sequence[Relation | Edge]) -> nx.MultiDiGraph:
    """nodes (in name order) and the edges between two of them (in id order)."""
    graph = nx.MultiDiGraph()
    graph.add_nodes_from(
        (n.id, {"name": n.name, "type": n.type, "channel": n.channel, "salience": n.salience,
                "description": n.description})
        for n in nodes
    )
    for e in edges:
        if e.source_id in graph and e.target_id in graph:
            graph.add_edge(e.source_id, e.target_id, key=e.id, type=e.type, channel=e.channel, weight=e.weight)
    return graph


def resolve_entity(store: MemoryStore, ref: str) -> str:
    """An entity id from an id or a (case-insensitive) name."""
    parts = store.entity_graphs()
    found = [e for part in parts for e in part.entities_named(ref)]
    if any(e.id == ref for e in found):
        return ref
    if not found and not any(part.has_entities() for part in parts):
        raise UnsupportedError("This store has no entities (the entity graph needs memory.db).")
    matches = found or [e for part in parts for e in part.entities_containing(ref)]
    if len(matches) == 1:
        return matches[0].id
    if len(matches) > 1:
        raise UnsupportedError(
            f"{len(matches)} entities are named {ref!r}: " + ", ".join(e.id for e in matches)
        )
    raise NotFoundError(f"No entity {ref!r}.")


def ego(graph: nx.MultiDiGraph, center: str, depth: int = 1) -> nx.MultiDiGraph:
    """The ego graph of center in a graph already in memory."""
    _check_depth(depth)
    if center not in graph:
        raise NotFoundError(f"Entity {center} is not in the graph (filtered out?).")
    return nx.ego_graph(graph, center, radius=depth, undirected=True)


def _check_depth(depth: int) -> None:
    if not 1 <= depth <= 3:
        raise UnsupportedError("Depth must be 1, 2 or 3.")


def graph_view(
    store: MemoryStore,
    *,
    center: str | None = None,
    depth: int = 1,
    relation_types: Sequence[str] = (),
    channels: Sequence[str] = (),
    max_nodes: int = 500,
) -> tuple[nx.MultiDiGraph, dict[str, Any]]:
    """The graph to draw (an ego graph when a center is given), capped at max_nodes: the most
    salient nodes, the center always."""
    center_id = resolve_entity(store, center) if center else None
    parts = store.entity_graphs()
    if center_id:
        _check_depth(depth)
        found = [s for p in parts if (s := p.ego_slice(center_id, depth, relation_types, channels, max_nodes))]
        if not found:
            raise NotFoundError(f"Entity {center_id} is not in the graph (filtered out?).")
    else:
        found = [p.whole_slice(relation_types, channels, max_nodes) for p in parts]
    reached = sum(s.reached for s in found)
    kept = sorted((n for s in found for n in s.nodes), key=lambda n: (-n.salience, n.id))[:max_nodes]
    if center_id and all(n.id != center_id for n in kept):
        kept[-1] = next(n for s in found for n in s.nodes if n.id == center_id)
    edges = [e for s in found for e in s.edges]
    graph = _graph(sorted(kept, key=lambda n: (n.name, n.id)), sorted(edges, key=lambda e: e.id) if len(found) > 1 else edges)
    hidden = max(reached - max_nodes, 0)
    return graph, {"center": center_id, "depth": depth if center_id else None, "hidden_nodes": hidden}


def graph_choices(store: MemoryStore, limit: int = CENTER_CHOICES) -> dict[str, Any]:
    """The entities to center on (the limit best connected, then by name), relation types and
    channels."""
    parts = store.entity_graphs()
    ranked = sorted((pair for p in parts for pair in p.best_connected(limit)), key=lambda p: (-p[1], p[0].name))
    return {
        "entities": [entity for entity, _ in ranked[:limit]],
        "types": sorted({t for p in parts for t in p.relation_types()}),
        "channels": sorted({c for p in parts for c in p.entity_channels()}),
    }


def entity_details(store: MemoryStore, entity_id: str) -> tuple[Entity, list[Memory], list[Relation], dict[str, str]]:
    """One entity, the facts about it, its relations and the names of the entities they link."""
    parts = store.entity_graphs()
    entity = next(e for p in parts for e in p.entities_by_id([entity_id]))
    relations = store.relations(touching=entity_id)
    ends = sorted({i for r in relations for i in (r.source_id, r.target_id)})
    names = {e.id: e.name for p in parts for e in p.entities_by_id(ends)}
    return entity, store.memories_about(entity_id), relations, names


def to_json(graph: nx.MultiDiGraph, info: dict[str, Any]) -> dict[str, Any]:
    data = json_graph.node_link_data(graph, edges="edges")
    return {**info, "nodes": data["nodes"], "edges": data["edges"]}


def write_graphml(graph: nx.MultiDiGraph, path: Path) -> None:
    nx.write_graphml(graph, str(path))
