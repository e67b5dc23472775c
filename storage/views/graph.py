"""The entity graph: entities and their relations as a networkx graph."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import networkx as nx
from networkx.readwrite import json_graph

from ..errors import NotFoundError, UnsupportedError
from ..store import MemoryStore


def entity_graph(
    store: MemoryStore,
    *,
    relation_types: Sequence[str] = (),
    channels: Sequence[str] = (),
) -> nx.MultiDiGraph:
    """Every entity as a node, every relation between two entities as an edge."""
    graph = nx.MultiDiGraph()
    for entity in store.entities(channels):
        graph.add_node(
            entity.id,
            name=entity.name,
            type=entity.type,
            channel=entity.channel,
            salience=entity.salience,
            description=entity.description,
        )
    for relation in store.relations(types=relation_types, channels=channels):
        if relation.source_id in graph and relation.target_id in graph:
            graph.add_edge(
                relation.source_id,
                relation.target_id,
                key=relation.id,
                type=relation.type,
                channel=relation.channel,
                weight=relation.weight,
            )
    return graph


def resolve_entity(store: MemoryStore, ref: str) -> str:
    """An entity id from an id or a (case-insensitive) name."""
    entities = store.entities()
    if not entities:
        raise UnsupportedError("This store has no entities (the entity graph needs memory.db).")
    for entity in entities:
        if entity.id == ref:
            return entity.id
    matches = [e for e in entities if e.name.casefold() == ref.casefold()] or [
        e for e in entities if ref.casefold() in e.name.casefold()
    ]
    if len(matches) == 1:
        return matches[0].id
    if len(matches) > 1:
        raise UnsupportedError(
            f"{len(matches)} entities are named {ref!r}: " + ", ".join(e.id for e in matches)
        )
    raise NotFoundError(f"No entity {ref!r}.")


def ego(graph: nx.MultiDiGraph, center: str, depth: int = 1) -> nx.MultiDiGraph:
    if not 1 <= depth <= 3:
        raise UnsupportedError("Depth must be 1, 2 or 3.")
    if center not in graph:
        raise NotFoundError(f"Entity {center} is not in the graph (filtered out?).")
    return nx.ego_graph(graph, center, radius=depth, undirected=True)


def graph_view(
    store: MemoryStore,
    *,
    center: str | None = None,
    depth: int = 1,
    relation_types: Sequence[str] = (),
    channels: Sequence[str] = (),
    max_nodes: int = 500,
) -> tuple[nx.MultiDiGraph, dict[str, Any]]:
    """The graph to draw (an ego graph when a center is given), capped at max_nodes."""
    graph = entity_graph(store, relation_types=relation_types, channels=channels)
    center_id = resolve_entity(store, center) if center else None
    if center_id:
        graph = ego(graph, center_id, depth)
    hidden = 0
    if graph.number_of_nodes() > max_nodes:
        keep = sorted(graph.nodes, key=lambda n: (-graph.nodes[n].get("salience", 0), n))[:max_nodes]
        if center_id and center_id not in keep:
            keep[-1] = center_id
        hidden = graph.number_of_nodes() - max_nodes
        graph = graph.subgraph(keep).copy()
    return graph, {"center": center_id, "depth": depth if center_id else None, "hidden_nodes": hidden}


def to_json(graph: nx.MultiDiGraph, info: dict[str, Any]) -> dict[str, Any]:
    data = json_graph.node_link_data(graph, edges="edges")
    return {**info, "nodes": data["nodes"], "edges": data["edges"]}


def write_graphml(graph: nx.MultiDiGraph, path: Path) -> None:
    nx.write_graphml(graph, str(path))
